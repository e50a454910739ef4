#!/usr/bin/env python3
"""Independent reference for harness/stats/label-agreement.ts, written from the definitions.

- Krippendorff's alpha, ordinal metric, in its pairwise form rather than through the coincidence matrix
  (K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011, and Content Analysis, 4th ed.,
  ch. 12): with n the number of pairable values (in units graded by 2 or more coders),
      D_o = 1/n * sum_u 1/(m_u - 1) * sum_{i != j in u} delta2(v_i, v_j)
      D_e = 1/(n (n - 1)) * sum_{i != j over all pairable values} delta2(v_i, v_j)
      alpha = 1 - D_o / D_e
  with the ordinal delta2(c, k) = (sum_{g between c and k} n_g - (n_c + n_k)/2)^2 over the frequencies n_g
  of the pairable values.
- Gwet's AC1 for two raters (Gwet 2008): p_a, pi_k the mean of both raters' shares of category k,
  p_e = sum pi_k (1 - pi_k) / (q - 1), AC1 = (p_a - p_e) / (1 - p_e), q the categories used.

    python3 scripts/reference/agreement_reference.py            # writes harness/stats/testdata/agreement-reference.json
    python3 scripts/reference/agreement_reference.py --stdout   # prints the same JSON
"""
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np


def ordinal_delta2(freq, c, k):
    lo, hi = min(c, k), max(c, k)
    between = sum(f for g, f in freq.items() if lo <= g <= hi)
    return (between - (freq[c] + freq[k]) / 2.0) ** 2


def alpha_ordinal(units):
    pairable = [[g for g in unit if g is not None] for unit in units]
    pairable = [u for u in pairable if len(u) >= 2]
    flat = [g for u in pairable for g in u]
    freq = Counter(flat)
    n = len(flat)
    d_o = sum(sum(ordinal_delta2(freq, u[i], u[j]) for i in range(len(u)) for j in range(len(u)) if i != j) / (len(u) - 1)
              for u in pairable) / n
    d_e = sum(ordinal_delta2(freq, flat[i], flat[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    return 1.0 - d_o / d_e


def ac1(a, b):
    n = len(a)
    cats = sorted(set(a) | set(b))
    pa = sum(1 for x, y in zip(a, b) if x == y) / n
    pi = [(a.count(k) + b.count(k)) / (2.0 * n) for k in cats]
    pe = sum(p * (1 - p) for p in pi) / (len(cats) - 1)
    return (pa - pe) / (1 - pe)


def cases():
    rng = np.random.default_rng(2011)
    alpha_cases = []
    for k in range(30):
        units, coders = int(rng.integers(3, 30)), int(rng.integers(2, 6))
        truth = rng.integers(0, 4, units)
        grades = np.clip(truth[:, None] + rng.integers(-1, 2, (units, coders)) * (rng.random((units, coders)) < 0.4), 0, 3)
        data = [[None if rng.random() < 0.2 else int(g) for g in row] for row in grades]
        if k % 5 == 4:  # non-integer, unevenly spaced grades: ordinal alpha only uses their order
            data = [[None if g is None else [0.0, 0.5, 2.5, 10.0][g] for g in row] for row in data]
        try:
            alpha_cases.append({"units": data, "alpha": alpha_ordinal(data)})
        except ZeroDivisionError:
            continue  # a draw with no variation or no pairable unit: the error cases are tested by hand
    ac1_cases = []
    for k in range(30):
        n, q = int(rng.integers(2, 60)), int(rng.integers(2, 5))
        a = rng.integers(0, q, n)
        b = np.where(rng.random(n) < 0.7, a, rng.integers(0, q, n))
        a, b = a.tolist(), b.tolist()
        if len(set(a) | set(b)) < 2:
            continue
        ac1_cases.append({"a": a, "b": b, "ac1": ac1(a, b)})
    return {"generator": "scripts/reference/agreement_reference.py", "alpha": alpha_cases, "ac1": ac1_cases}


if __name__ == "__main__":
    text = json.dumps(cases())
    if "--stdout" in sys.argv:
        print(text)
    else:
        target = Path(__file__).resolve().parents[2] / "harness" / "stats" / "testdata" / "agreement-reference.json"
        target.write_text(text + "\n")
        print(f"wrote {target}")
