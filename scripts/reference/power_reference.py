"""Reference values for harness/stats/power.ts, computed by brute force with scipy (no closed form reused).

Queries: the smallest n >= 2 with (t.ppf(1 - a/2, n - 1) + t.ppf(power, n - 1)) * sd / sqrt(n) <= delta,
found by walking n upward; beside it the exact power of the two-sided paired t-test at that n from the
noncentral t distribution, to show how close the approximation lands.
Labels: the smallest n >= 1 whose PPI++ variance, minimised over lambda numerically
(scipy.optimize.minimize_scalar, not the closed-form lambda), gives z * se <= half-width.

Run: python3 scripts/reference/power_reference.py > scripts/reference/power_reference.json
The test harness/stats/power.test.ts runs this script when python3 with scipy is present and reads the
committed JSON otherwise.
"""

import json
import math

from scipy import optimize, stats

QUERY_CASES = [
    # sd, delta, alpha, power
    (1.0, 0.5, 0.05, 0.8),
    (0.2, 0.03, 0.05, 0.8),
    (0.2, 0.03, 0.05 / 4, 0.8),
    (0.15, 0.02, 0.05 / 12, 0.9),
    (0.3, 0.1, 0.01, 0.8),
    (0.266, 0.303, 0.05, 0.8),
    (0.05, 0.2, 0.05, 0.8),
    (0.25, 0.01, 0.05 / 512, 0.8),
]

LABEL_CASES = [
    # sd_judge, sd_human, rho, half_width, alpha, judged
    (0.2, 0.2, 0.8, 0.03, 0.05, 500),
    (0.2, 0.2, 0.0, 0.03, 0.05, 500),
    (0.2, 0.25, 0.9, 0.02, 0.05 / 4, 2000),
    (0.15, 0.15, 0.5, 0.05, 0.05, 40),
    (0.3, 0.3, 0.95, 0.01, 0.05, 100000),
    (0.2, 0.2, 0.7, 0.005, 0.05, 300),
]


def queries_needed(sd, delta, alpha, power):
    n = 2
    while (stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)) * sd / math.sqrt(n) > delta:
        n += 1
    return n


def exact_power(sd, delta, alpha, n):
    df = n - 1
    crit = stats.t.ppf(1 - alpha / 2, df)
    nc = delta * math.sqrt(n) / sd
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def ppi_var(lam, sf, sy, rho, n, big_n):
    return lam**2 * sf**2 / big_n + (sy**2 - 2 * lam * rho * sy * sf + lam**2 * sf**2) / n


def labels_needed(sf, sy, rho, w, alpha, big_n):
    z = stats.norm.ppf(1 - alpha / 2)
    n = 1
    while True:
        best = optimize.minimize_scalar(lambda lam: ppi_var(lam, sf, sy, rho, n, big_n), bounds=(-5, 5), method="bounded", options={"xatol": 1e-12})
        if z * math.sqrt(best.fun) <= w * (1 + 1e-9):
            return n, float(best.x)
        n += 1


def main():
    queries = []
    for sd, delta, alpha, power in QUERY_CASES:
        n = queries_needed(sd, delta, alpha, power)
        queries.append({"sd": sd, "delta": delta, "alpha": alpha, "power": power, "n": n, "exactPowerAtN": exact_power(sd, delta, alpha, n)})
    labels = []
    for sf, sy, rho, w, alpha, big_n in LABEL_CASES:
        n, lam = labels_needed(sf, sy, rho, w, alpha, big_n)
        labels.append({"sdJudge": sf, "sdHuman": sy, "rho": rho, "halfWidth": w, "alpha": alpha, "judged": big_n, "labels": n, "lambda": lam})
    print(json.dumps({"generator": "scripts/reference/power_reference.py", "scipy": __import__("scipy").__version__, "queries": queries, "labels": labels}, indent=2))


if __name__ == "__main__":
    main()
