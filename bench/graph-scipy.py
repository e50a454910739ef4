"""The scipy.sparse reference of bench/graph.ts: the same PPR power iteration over the same CSR graph and seeds.

Usage: python3 bench/graph-scipy.py DIR. DIR (written by bench/graph.ts) holds meta.json
({"n", "nnz", "queries", "warmup", "damping", "tolerance", "max_iterations"}), indptr.i32, indices.i32,
values.f64 (the transition matrix P in CSR by destination row, as harness/graph/ppr.ts stores it),
dangling.i32, seed_rows.i32 and seed_weights.f64 (each query's seeds, `seeds_per_query` of them, raw weights).
Writes scores.f64 (the measured queries' vectors, one after the other) and iterations.i32 to DIR, and prints one
JSON line with the CPU ms (time.process_time) of each measured query.

Each query: s = seed / sum(seed); x = s; repeat x' = d P x + (1 - d + d * sum(x[dangling])) s (policy `seeds`),
delta = |x' - x|_1, stop when delta < tolerance or after max_iterations: the iteration of harness/graph/ppr.ts, one
csr matrix-vector product per step. The timed span starts from the dense seed vector, as personalizedPageRank does.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def ppr(p, dangling, seed, d, tol, max_it):
    s = seed / seed.sum()
    x = s.copy()
    it = 0
    while it < max_it:
        lost = x[dangling].sum() if dangling.size > 0 else 0.0
        nxt = d * (p @ x) + (1 - d + d * lost) * s
        delta = np.abs(nxt - x).sum()
        x = nxt
        it += 1
        if delta < tol:
            break
    return x, it


def main():
    folder = Path(sys.argv[1])
    meta = json.loads((folder / "meta.json").read_text())
    n = meta["n"]
    indptr = np.fromfile(folder / "indptr.i32", dtype=np.int32)
    indices = np.fromfile(folder / "indices.i32", dtype=np.int32)
    values = np.fromfile(folder / "values.f64", dtype=np.float64)
    p = sp.csr_matrix((values, indices, indptr), shape=(n, n))
    dangling = np.fromfile(folder / "dangling.i32", dtype=np.int32)
    rows = np.fromfile(folder / "seed_rows.i32", dtype=np.int32).reshape(-1, meta["seeds_per_query"])
    weights = np.fromfile(folder / "seed_weights.f64", dtype=np.float64).reshape(rows.shape)
    seeds = []
    for q in range(rows.shape[0]):
        seed = np.zeros(n)
        seed[rows[q]] = weights[q]
        seeds.append(seed)
    args = (meta["damping"], meta["tolerance"], meta["max_iterations"])
    for q in range(meta["warmup"]):
        ppr(p, dangling, seeds[q], *args)
    ms = []
    iterations = []
    with open(folder / "scores.f64", "wb") as out:
        for q in range(meta["warmup"], rows.shape[0]):
            start = time.process_time()
            x, it = ppr(p, dangling, seeds[q], *args)
            ms.append((time.process_time() - start) * 1000)
            iterations.append(it)
            x.tofile(out)
    np.array(iterations, dtype=np.int32).tofile(folder / "iterations.i32")
    print(json.dumps({"ms": ms, "scipy": __import__("scipy").__version__, "numpy": np.__version__}))


main()
