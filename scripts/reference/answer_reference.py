#!/usr/bin/env python3
"""scipy's values for the statistics of the answer level: harness/stats/mcnemar.ts and harness/stats/wilson.ts.

- Exact McNemar on discordant counts (b, c): statsmodels' mcnemar(exact=True) is
  min(1, 2 * binom.cdf(min(b, c), b + c, 0.5)); computed here with scipy.stats.binom and checked against
  scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue, the same two-sided p for p = 1/2 (statsmodels is not
  needed).
- Wilson score interval: scipy.stats.binomtest(k, n).proportion_ci(confidence_level, method="wilson").

    python3 scripts/reference/answer_reference.py            # writes harness/stats/testdata/answer-reference.json
    python3 scripts/reference/answer_reference.py --stdout   # prints the same JSON
"""
import json
import math
import sys
from pathlib import Path

import scipy
from scipy.stats import binom, binomtest

# Nothing discordant, one-sided evidence, the cases, ties, large n past 2^-1074, a far tail.
MCNEMAR_CASES = [
    (0, 0), (1, 0), (0, 1), (1, 1), (3, 3), (5, 17), (17, 5), (2, 9), (10, 0), (0, 25),
    (40, 60), (60, 40), (150, 151), (300, 250), (500, 430), (700, 800), (4000, 4200), (0, 60), (12, 95),
]

WILSON_CASES = [
    (0, 1), (1, 1), (0, 20), (20, 20), (1, 29), (15, 148), (81, 263), (3, 10), (7, 10), (50, 100),
    (1, 1540), (1157, 1540), (1030, 1540), (250, 500), (499, 500), (30, 500),
]
WILSON_LEVELS = [0.8, 0.9, 0.95, 0.99, 0.999]


def mcnemar_exact(b, c):
    n = b + c
    p = min(1.0, 2.0 * float(binom.cdf(min(b, c), n, 0.5)))
    if n > 0:
        other = float(binomtest(min(b, c), n, 0.5).pvalue)
        assert math.isclose(p, other, rel_tol=1e-12, abs_tol=0.0), (b, c, p, other)
    return p


def wilson(k, n, level):
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def cases():
    mcnemar = [{"b": b, "c": c, "p": mcnemar_exact(b, c)} for b, c in MCNEMAR_CASES]
    intervals = []
    for k, n in WILSON_CASES:
        for level in WILSON_LEVELS:
            low, high = wilson(k, n, level)
            intervals.append({"k": k, "n": n, "level": level, "low": low, "high": high})
    return {"generator": "scripts/reference/answer_reference.py", "scipy": scipy.__version__, "mcnemar": mcnemar, "wilson": intervals}


if __name__ == "__main__":
    text = json.dumps(cases())
    if "--stdout" in sys.argv:
        print(text)
    else:
        target = Path(__file__).resolve().parents[2] / "harness" / "stats" / "testdata" / "answer-reference.json"
        target.write_text(text + "\n")
        print(f"wrote {target}")
