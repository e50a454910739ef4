#!/usr/bin/env python3
"""DBSF fusion reference, outside the TypeScript kernel (harness/fusion/dbsf-reference.test.ts reads its output).

Distribution-based score fusion as Qdrant ships it (lib/segment/src/common/score_fusion.rs, `distr_norm`):
per input list, mean and SAMPLE variance by Welford's recurrence, lo/hi = mean -/+ 3 sd, each score mapped to
(s - lo) / (hi - lo), not clipped; a one-document list or hi == lo gives 0.5. The fused score is the weighted
sum (combsum) or the weighted sum over the weight total (cc); absent documents contribute 0 (`zero`) or the
input's last read value (`min`).

Plain Python floats in the kernel's order of operations, so every fused score must equal the kernel's bit for
bit; numpy's two-pass mean and std (ddof=1) check the statistics independently to 1e-12.

    python3 scripts/reference/dbsf_reference.py > scripts/reference/dbsf_reference.json
"""
import json
import math
import sys

import numpy as np

# Fixed inputs: three runs over four queries (query -> [(docId, score)], best first).
RUNS = [
    {
        "q1": [("d01", 12.5), ("d02", 9.0), ("d03", 8.75), ("d04", 3.0), ("d05", 0.5)],
        "q2": [("d10", 4.0)],
        "q3": [("d20", 2.0), ("d21", 2.0), ("d22", 2.0)],
        "q4": [("d30", 100.0)] + [(f"d3{i + 1:02d}", 0.0) for i in range(11)],
    },
    {
        "q1": [("d03", 0.91), ("d06", 0.42), ("d01", -0.13), ("d07", -0.5)],
        "q2": [("d11", 0.3), ("d10", 0.2)],
        "q4": [("d31", 0.7), ("d30", 0.1)],
    },
    {
        "q1": [("d02", 31.0), ("d08", 30.5), ("d04", 7.0)],
        "q3": [("d23", 1.0), ("d20", 0.25)],
        "q4": [("d32", 5.0), ("d33", 4.0), ("d30", 1.0)],
    },
]
CASES = [
    {"method": "cc", "absent": "zero", "weights": [0.5, 0.3, 0.2]},
    {"method": "combsum", "absent": "min", "weights": [1.0, 2.0, 0.75]},
]


def welford(scores):
    mean = 0.0
    agg = 0.0
    for k, s in enumerate(scores, start=1):
        old = s - mean
        mean += old / k
        agg += old * (s - mean)
    return mean, agg / (len(scores) - 1)


def norm_range(scores):
    """(lo, hi - lo), or None when the list maps to 0.5 (one document, or hi == lo)."""
    if len(scores) < 2:
        return None
    mean, var = welford(scores)
    ref_mean, ref_sd = float(np.mean(scores)), float(np.std(scores, ddof=1))
    sd = math.sqrt(var)
    if abs(mean - ref_mean) > 1e-12 * max(1.0, abs(ref_mean)) or abs(sd - ref_sd) > 1e-12 * max(1.0, ref_sd):
        sys.exit(f"Welford and numpy disagree on {scores}: mean {mean} / {ref_mean}, sd {sd} / {ref_sd}")
    lo = mean - 3 * sd
    den = (mean + 3 * sd) - lo
    return None if den == 0 else (lo, den)


def fuse_query(q, case):
    acc = {}
    base = 0.0
    for run, w in zip(RUNS, case["weights"]):
        entries = run.get(q, [])
        if not entries:
            continue
        r = norm_range([s for _, s in entries])
        if r is None:
            c = w * 0.5
            a = c if case["absent"] == "min" else 0.0
            gains = [(d, 0 * 0.0 + (c - a)) for d, _ in entries]
        else:
            lo, den = r
            a = w * ((entries[-1][1] - lo) / den) if case["absent"] == "min" else 0.0
            gains = [(d, w * ((s - lo) / den) + -a) for d, s in entries]
        base += a
        for d, g in gains:
            acc[d] = acc.get(d, 0.0) + g
    wsum = sum(case["weights"])
    scored = [(d, (base + v) / wsum if case["method"] == "cc" else base + v) for d, v in acc.items()]
    # Best first; ties put the higher docId first, as the kernel does.
    scored.sort(key=lambda x: x[0], reverse=True)
    scored.sort(key=lambda x: x[1], reverse=True)
    return [[d, s] for d, s in scored]


def main():
    queries = ["q1", "q2", "q3", "q4"]
    out = {
        "source": "scripts/reference/dbsf_reference.py (Python %s, numpy %s)" % (sys.version.split()[0], np.__version__),
        "runs": [{q: [[d, s] for d, s in run[q]] for q in run} for run in RUNS],
        "queries": queries,
        "cases": [{**case, "fused": {q: fuse_query(q, case) for q in queries}} for case in CASES],
    }
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
