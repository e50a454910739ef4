#!/usr/bin/env python3
"""Independent reference for harness/stats/ppi.ts: PPI++ on a mean, written from the paper's formulas.

A. N. Angelopoulos, J. C. Duchi, T. Zrnic, "PPI++: Efficient prediction-powered inference",
arXiv:2311.01453 (2023). For a mean, with labelled pairs (Y_i, f_i), i = 1..n, and unlabelled
predictions f~_j, j = 1..N:

    theta_lambda = lambda * mean(f~) + mean(Y - lambda f)
    variance     = lambda^2 Var(f~) / N + Var(Y - lambda f) / n
    lambda*      = Cov(Y, f) / ((1 + n/N) Var(f))          (clipped to [0, 1])

lambda* follows the authors' package ppi_py (_calc_lam_glm: 1/n for the covariance, np.cov (ddof 1) over
labelled and unlabelled predictions for Var(f)). Both variance terms are ddof 1, and the interval is
theta +- t_{1-alpha/2, df} sqrt(variance) with Welch-Satterthwaite df (A + B)^2 / (A^2/(N-1) + B^2/(n-1)),
A and B the two terms (docs/adr/0038, addendum: the ppi_py normal interval with ddof 0 under-covers at the
label counts a study has). For a fixed lambda that is Welch's interval for mean(lambda f~) - mean(-(Y - lambda f)):
each case is checked against scipy.stats.ttest_ind(equal_var=False).confidence_interval before it is written.
Stratified: per-stratum estimates weighted by w_k (default (n_k + N_k) / total), variance sum w_k^2 var_k, df
by Satterthwaite over every stratum's two terms weighted by w_k^2.

Needs numpy and scipy.

    python3 scripts/reference/ppi_reference.py            # writes harness/stats/testdata/ppi-reference.json
    python3 scripts/reference/ppi_reference.py --stdout   # prints the same JSON
"""
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats


def lambda_star(y, f, fu):
    n, N = len(y), len(fu)
    cov = np.mean((y - y.mean()) * (f - f.mean()))
    var_f = np.var(np.concatenate([f, fu]), ddof=1)
    if var_f == 0.0:
        return 0.0  # a constant judge: every lambda gives the same interval; 0 is the documented choice
    return float(np.clip(cov / ((1.0 + n / N) * var_f), 0.0, 1.0))


def ppi(y, f, fu, alpha, lam):
    y, f, fu = (np.asarray(v, dtype=np.float64) for v in (y, f, fu))
    if lam == "tuned":
        lam = lambda_star(y, f, fu)
    theta = lam * fu.mean() + (y - lam * f).mean()
    a = lam**2 * np.var(fu, ddof=1) / len(fu)
    b = np.var(y - lam * f, ddof=1) / len(y)
    se = float(np.sqrt(a + b))
    df = satterthwaite([(a, len(fu)), (b, len(y))], len(y) - 1)
    t = float(stats.t.ppf(1 - alpha / 2, df))
    r = {"estimate": float(theta), "ci": [float(theta - t * se), float(theta + t * se)], "se": se, "df": df,
         "lambda": float(lam), "n": len(y), "N": len(fu)}
    if se > 0 and lam > 0:
        welch = stats.ttest_ind(lam * fu, -(y - lam * f), equal_var=False).confidence_interval(1 - alpha)
        assert np.allclose([welch.low, welch.high], r["ci"], rtol=1e-12, atol=1e-14), (welch, r["ci"])
    return r


def satterthwaite(terms, fallback):
    """Welch-Satterthwaite df of a sum of variance terms (variance, count); fallback when every term is 0."""
    total = sum(v for v, _ in terms)
    denom = sum(v * v / (k - 1) for v, k in terms)
    return float(total * total / denom) if denom > 0 else float(fallback)


def stratified(strata, alpha, lam):
    parts = [ppi(s["human"], s["judgeOnLabelled"], s["judgeOnUnlabelled"], alpha, lam) for s in strata]
    if all("weight" in s for s in strata):
        w = np.array([s["weight"] for s in strata], dtype=np.float64)
    else:
        w = np.array([len(s["human"]) + len(s["judgeOnUnlabelled"]) for s in strata], dtype=np.float64)
    w = w / w.sum()
    theta = float(np.dot(w, [p["estimate"] for p in parts]))
    se = float(np.sqrt(np.dot(w**2, [p["se"] ** 2 for p in parts])))
    terms = []
    for wk, s, p in zip(w, strata, parts):
        lam_k, y, f, fu = p["lambda"], *(np.asarray(s[k], dtype=np.float64) for k in ("human", "judgeOnLabelled", "judgeOnUnlabelled"))
        terms += [(wk**2 * lam_k**2 * np.var(fu, ddof=1) / len(fu), len(fu)), (wk**2 * np.var(y - lam_k * f, ddof=1) / len(y), len(y))]
    df = satterthwaite(terms, min(p["n"] for p in parts) - 1)
    t = float(stats.t.ppf(1 - alpha / 2, df))
    return {"estimate": theta, "ci": [theta - t * se, theta + t * se], "se": se, "df": df,
            "lambda": float(np.dot(w, [p["lambda"] for p in parts])),
            "n": sum(p["n"] for p in parts), "N": sum(p["N"] for p in parts), "strata": parts}


def sample(rng, n, N, bias, noise, grid=None):
    """Human deltas and a judge that adds a bias and noise; `grid` rounds everything to produce ties."""
    y = rng.normal(0.02, 0.15, n + N)
    f = y + bias + rng.normal(0, noise, n + N)
    if grid:
        y, f = np.round(y / grid) * grid, np.round(f / grid) * grid
    return {"human": y[:n].tolist(), "judgeOnLabelled": f[:n].tolist(), "judgeOnUnlabelled": f[n:].tolist()}


def cases():
    rng = np.random.default_rng(20231103)
    small = {"human": [0.1, -0.2, 0.4], "judgeOnLabelled": [0.3, 0.0, 0.5], "judgeOnUnlabelled": [0.2, 0.6]}
    tied = sample(rng, 12, 40, 0.05, 0.05, grid=0.1)
    big = sample(rng, 60, 500, 0.08, 0.1)
    useless = sample(rng, 30, 100, 0.0, 5.0)  # the judge is mostly noise: tuned lambda near 0
    constant = {"human": [0.1, 0.3, -0.1, 0.0], "judgeOnLabelled": [0.2] * 4, "judgeOnUnlabelled": [0.2] * 5}
    samples = {"small": small, "tied": tied, "big": big, "useless-judge": useless, "constant-judge": constant}
    out = []
    for name, s in samples.items():
        for lam in ["tuned", 0, 1, 0.5]:
            for alpha in [0.05, 0.1]:
                r = ppi(s["human"], s["judgeOnLabelled"], s["judgeOnUnlabelled"], alpha, lam)
                out.append({"name": f"{name} lambda={lam} alpha={alpha}", "sample": name, "alpha": alpha, "lambda": lam, "result": r})
    strata = [sample(rng, 10, 50, 0.1, 0.05), sample(rng, 20, 30, -0.05, 0.2), sample(rng, 5, 200, 0.0, 0.01, grid=0.05)]
    strat = []
    for lam in ["tuned", 1]:
        strat.append({"name": f"three strata, default weights, lambda={lam}", "strata": [{"sample": s} for s in strata],
                      "alpha": 0.05, "lambda": lam,
                      "result": stratified([dict(s) for s in strata], 0.05, lam)})
    weighted = [{"sample": s, "weight": w} for s, w in zip(strata, [0.5, 0.3, 0.2])]
    strat.append({"name": "three strata, given weights", "strata": weighted, "alpha": 0.1, "lambda": "tuned",
                  "result": stratified([dict(s, weight=w["weight"]) for s, w in zip(strata, weighted)], 0.1, "tuned")})
    return {"generator": "scripts/reference/ppi_reference.py", "numpy": np.__version__, "samples": samples, "single": out, "stratified": strat}


if __name__ == "__main__":
    text = json.dumps(cases(), indent=1)
    if "--stdout" in sys.argv:
        print(text)
    else:
        target = Path(__file__).resolve().parents[2] / "harness" / "stats" / "testdata" / "ppi-reference.json"
        target.write_text(text + "\n")
        print(f"wrote {target}")
