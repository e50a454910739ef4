#!/usr/bin/env python3
"""Independent reference for harness/stats/rank-agreement.ts.

- Kendall's tau-b: scipy.stats.kendalltau (variant 'b', its default).
- tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008) by brute force from the definition: every ordering of
  `other` that is consistent with its scores (ties in any order) is enumerated, and for each, walking down
  from rank 2, C(i) counts the items above rank i that the reference also puts above; the value is
  2/(N-1) * sum C(i)/(i-1) - 1, averaged over the orderings (with a strict reference this is Urbano &
  Marrero's tau_AP_a, ICTIR 2017). A pair the reference ties scores 1 when `other` ties it too, 1/2 when not.

    python3 scripts/reference/rank_reference.py            # writes harness/stats/testdata/rank-reference.json
    python3 scripts/reference/rank_reference.py --stdout   # prints the same JSON
"""
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import kendalltau


def pair_score(ref, oth, upper, lower):
    if ref[upper] > ref[lower]:
        return 1.0
    if ref[upper] < ref[lower]:
        return 0.0
    return 1.0 if oth[upper] == oth[lower] else 0.5


def tau_ap_brute(ref, oth):
    n = len(ref)
    values = []
    groups = [[i for i in range(n) if oth[i] == v] for v in sorted(set(oth), reverse=True)]
    # every ordering of `other` (higher score first), ties in any order
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        order = [i for part in parts for i in part]
        total = 0.0
        for i in range(1, n):
            c = sum(pair_score(ref, oth, order[j], order[i]) for j in range(i))
            total += c / i
        values.append(2.0 * total / (n - 1) - 1.0)
    return float(np.mean(values))


def cases():
    rng = np.random.default_rng(2008)
    out = []
    for k in range(40):
        n = int(rng.integers(2, 9))
        a = rng.random(n)
        b = a + rng.normal(0, 0.3, n)
        if k % 3 == 1:  # ties in one ranking
            b = np.round(b * 3) / 3
        if k % 3 == 2:  # ties in both
            a, b = np.round(a * 4) / 4, np.round(b * 4) / 4
        a, b = a.tolist(), b.tolist()
        tau = kendalltau(a, b).statistic
        out.append({"a": a, "b": b, "tau": None if np.isnan(tau) else float(tau), "tauAP": tau_ap_brute(a, b),
                    "tauAPReversed": tau_ap_brute(b, a)})
    for a, b in [([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]), ([0.5, 0.5], [0.1, 0.2])]:  # a constant vector: tau is NaN
        out.append({"a": a, "b": b, "tau": None if np.isnan(kendalltau(a, b).statistic) else 0.0,
                    "tauAP": tau_ap_brute(a, b), "tauAPReversed": tau_ap_brute(b, a)})
    return {"generator": "scripts/reference/rank_reference.py", "scipy": scipy.__version__, "cases": out}


if __name__ == "__main__":
    text = json.dumps(cases(), indent=1)
    if "--stdout" in sys.argv:
        print(text)
    else:
        target = Path(__file__).resolve().parents[2] / "harness" / "stats" / "testdata" / "rank-reference.json"
        target.write_text(text + "\n")
        print(f"wrote {target}")
