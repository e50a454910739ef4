import { Matrix, solve } from 'ml-matrix';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Rng } from '../stats/rng.js';
import { buildCsr, type DanglingPolicy, personalizedPageRank, type Transition, transitionMatrix } from './ppr.js';

const tight = { damping: 0.5, tolerance: 1e-14, maxIterations: 10_000 };

function graph(n: number, edges: readonly (readonly [number, number, number?])[]) {
  return transitionMatrix(
    buildCsr(
      n,
      Int32Array.from(edges, (e) => e[0]),
      Int32Array.from(edges, (e) => e[1]),
      Float64Array.from(edges, (e) => e[2] ?? 1),
    ),
  );
}

function seedOf(n: number, entries: Record<number, number>): Float64Array {
  const s = new Float64Array(n);
  for (const [k, v] of Object.entries(entries)) s[Number(k)] = v;
  return s;
}

describe('buildCsr and transitionMatrix', () => {
  it('sorts rows, sums duplicate edges, and makes every non-dangling column sum to 1', () => {
    const a = buildCsr(3, Int32Array.of(2, 0, 0, 0), Int32Array.of(1, 2, 1, 2), Float64Array.of(1, 1, 3, 2));
    expect([...a.indptr]).toEqual([0, 2, 2, 3]);
    expect([...a.indices]).toEqual([1, 2, 1]);
    expect([...a.values]).toEqual([3, 3, 1]);
    const t = transitionMatrix(a);
    expect([...t.dangling]).toEqual([1]);
    // P[1][0] = 3/6, P[2][0] = 3/6, P[1][2] = 1/1.
    expect([...t.matrix.indptr]).toEqual([0, 0, 2, 3]);
    expect([...t.matrix.indices]).toEqual([0, 2, 0]);
    expect([...t.matrix.values]).toEqual([0.5, 1, 0.5]);
  });

  it('refuses zero weights and out-of-range nodes', () => {
    expect(() => buildCsr(2, Int32Array.of(0), Int32Array.of(1), Float64Array.of(0))).toThrow(/weight 0/);
    expect(() => buildCsr(2, Int32Array.of(0), Int32Array.of(2), Float64Array.of(1))).toThrow(/outside/);
  });
});

describe('personalizedPageRank: hand-computed stationary vectors', () => {
  // 0 -> 0 (self-loop), 0 -> 1, 1 -> 2; node 2 is dangling. Seed on 0, d = 1/2.
  // x0 = d (x0/2 + x2) + (1 - d), x1 = d x0 / 2, x2 = d x1  =>  x1 = x0/4, x2 = x0/8, x0 (1 - 1/4 - 1/16) = 1/2.
  const chain = graph(3, [
    [0, 0],
    [0, 1],
    [1, 2],
  ]);

  it('a self-loop and a dangling node whose mass restarts at the seeds', () => {
    const r = personalizedPageRank(chain, seedOf(3, { 0: 1 }), tight);
    const x0 = 0.5 / (1 - 1 / 4 - 1 / 16);
    expect(x0).toBeCloseTo(8 / 11, 15);
    expect(r.converged).toBe(true);
    expect(r.scores[0]).toBeCloseTo(8 / 11, 13);
    expect(r.scores[1]).toBeCloseTo(2 / 11, 13);
    expect(r.scores[2]).toBeCloseTo(1 / 11, 13);
  });

  it('the same graph with dangling mass spread uniformly', () => {
    // x0 = x0/4 + x2/6 + 1/2, x1 = x0/4 + x2/6, x2 = x1/2 + x2/6  =>  x2 = 3 x1 / 5, x1 = 5 x0 / 18, x2 = x0 / 6.
    const r = personalizedPageRank(chain, seedOf(3, { 0: 1 }), { ...tight, dangling: 'uniform' as DanglingPolicy });
    expect(r.scores[0]).toBeCloseTo(9 / 13, 13);
    expect(r.scores[1]).toBeCloseTo(5 / 26, 13);
    expect(r.scores[2]).toBeCloseTo(3 / 26, 13);
  });

  it('an undirected star seeded on two leaves (unnormalised seed weights)', () => {
    // Centre 0, leaves 1..3. x0 = (x1 + x2 + x3) / 2, x_leaf = x0 / 6 + s_leaf / 2 with s = (0, 1/2, 1/2, 0):
    // x0 = x0 / 4 + 1/4 => x0 = 1/3, x1 = x2 = 1/18 + 1/4 = 11/36, x3 = 1/18.
    const star = graph(4, [
      [0, 1],
      [1, 0],
      [0, 2],
      [2, 0],
      [0, 3],
      [3, 0],
    ]);
    const r = personalizedPageRank(star, seedOf(4, { 1: 7, 2: 7 }), tight);
    expect([...r.scores].map((v) => Number(v.toFixed(12)))).toEqual([1 / 3, 11 / 36, 11 / 36, 1 / 18].map((v) => Number(v.toFixed(12))));
  });

  it('a weighted 5-node graph: two dangling nodes and a self-loop', () => {
    // 0 -> 1 (w 3), 0 -> 2 (w 1), 1 -> 1 (w 1), 1 -> 3 (w 1), 2 -> 4 (w 2); 3 and 4 dangling. Seed on 0.
    // x1 = d (3 x0 / 4 + x1 / 2), x2 = d x0 / 4, x3 = d x1 / 2, x4 = d x2, x0 = d (x3 + x4) + 1 - d, d = 1/2:
    // x1 = x0/2 (from x1 (1 - 1/4) = 3 x0 / 8), x2 = x0/8, x3 = x0/8, x4 = x0/16, x0 (1 - 3/32) = 1/2.
    const g = graph(5, [
      [0, 1, 3],
      [0, 2, 1],
      [1, 1, 1],
      [1, 3, 1],
      [2, 4, 2],
    ]);
    const r = personalizedPageRank(g, seedOf(5, { 0: 1 }), tight);
    const x0 = 16 / 29;
    expect(0.5 / (1 - 3 / 32)).toBeCloseTo(x0, 15);
    const want = [x0, x0 / 2, x0 / 8, x0 / 8, x0 / 16];
    want.forEach((w, i) => expect(r.scores[i]).toBeCloseTo(w, 13));
  });

  it('stops at maxIterations and says it did not converge; refuses an all-zero seed', () => {
    const r = personalizedPageRank(chain, seedOf(3, { 0: 1 }), { damping: 0.5, tolerance: 1e-12, maxIterations: 3 });
    expect(r.iterations).toBe(3);
    expect(r.converged).toBe(false);
    expect(() => personalizedPageRank(chain, new Float64Array(3), tight)).toThrow(/all zero/);
  });

  it('needs about log(tol) / log(d) iterations at d = 0.5, tol = 1e-6', () => {
    const r = personalizedPageRank(chain, seedOf(3, { 0: 1 }), { damping: 0.5, tolerance: 1e-6, maxIterations: 100 });
    expect(r.converged).toBe(true);
    expect(r.iterations).toBeLessThanOrEqual(Math.ceil(Math.log(1e-6 / 2) / Math.log(0.5)) + 1);
  });
});

describe('personalizedPageRank agrees with a dense linear solve', () => {
  // The fixed point solves (I - d M) x = (1 - d) s, with M = P + u 1_dangling^T (u = s or 1/n).
  function dense(t: ReturnType<typeof graph>, s: Float64Array, d: number, policy: DanglingPolicy): Float64Array {
    const n = t.n;
    const total = s.reduce((a, b) => a + b, 0);
    const a = Matrix.eye(n, n);
    const { indptr, indices, values } = t.matrix;
    for (let j = 0; j < n; j++)
      for (let i = indptr[j] as number; i < (indptr[j + 1] as number); i++)
        a.set(j, indices[i] as number, a.get(j, indices[i] as number) - d * (values[i] as number));
    for (const k of t.dangling) for (let j = 0; j < n; j++) a.set(j, k, a.get(j, k) - d * (policy === 'uniform' ? 1 / n : (s[j] as number) / total));
    const b = Matrix.columnVector(Array.from(s, (v) => ((1 - d) * v) / total));
    return Float64Array.from(solve(a, b).getColumn(0));
  }

  for (const [seed, policy, d] of [
    [1, 'seeds', 0.5],
    [2, 'uniform', 0.5],
    [3, 'seeds', 0.85],
  ] as const) {
    it(`random 200-node graph (seed ${seed}, dangling ${policy}, d ${d}) to 1e-9`, () => {
      const rng = new Rng(seed);
      const n = 200;
      const edges: [number, number, number][] = [];
      for (let i = 0; i < n; i++) {
        if (i % 10 === 0) continue; // every tenth node dangling
        const deg = 1 + Math.floor(rng.nextFloat() * 8);
        for (let k = 0; k < deg; k++) edges.push([i, Math.floor(rng.nextFloat() * n), 0.1 + rng.nextFloat()]);
        if (i % 7 === 0) edges.push([i, i, 1]);
      }
      const t = graph(n, edges);
      expect(t.dangling.length).toBe(20);
      const s = new Float64Array(n);
      for (let k = 0; k < 5; k++) {
        const at = Math.floor(rng.nextFloat() * n);
        s[at] = (s[at] as number) + rng.nextFloat() + 0.01;
      }
      const got = personalizedPageRank(t, s, { damping: d, tolerance: 1e-13, maxIterations: 10_000, dangling: policy });
      const want = dense(t, s, d, policy);
      let worst = 0;
      for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs((got.scores[i] as number) - (want[i] as number)));
      expect(worst).toBeLessThan(1e-9);
      expect(got.scores.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    });
  }
});

/**
 * The reference: power iteration written as the plain loop over the transition's CSR (the kernel before its
 * SELL-4 layout and frontier, and the bench's floor), stopping when the L1 change of a step is below `tolerance`.
 */
function powerIteration(t: Transition, seed: Float64Array, d: number, tolerance: number, policy: DanglingPolicy): { x: Float64Array; iterations: number } {
  const n = t.n;
  const total = seed.reduce((a, b) => a + b, 0);
  const s = seed.map((v) => v / total);
  const { indptr, indices, values } = t.matrix;
  let x = s.slice();
  let next = new Float64Array(n);
  let iterations = 0;
  while (iterations < 10_000) {
    let lost = 0;
    for (const k of t.dangling) lost += x[k] as number;
    const toSeeds = policy === 'uniform' ? 1 - d : 1 - d + d * lost;
    const toAll = policy === 'uniform' ? (d * lost) / n : 0;
    let delta = 0;
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let i = indptr[j] as number; i < (indptr[j + 1] as number); i++) acc += (values[i] as number) * (x[indices[i] as number] as number);
      const v = d * acc + toSeeds * (s[j] as number) + toAll;
      next[j] = v;
      delta += Math.abs(v - (x[j] as number));
    }
    [x, next] = [next, x];
    iterations++;
    if (delta < tolerance) break;
  }
  return { x, iterations };
}

/** Nodes by score descending, then index ascending (the graph-ppr node's order), the first k. */
function topK(scores: Float64Array, k: number): number[] {
  return Array.from(scores.keys())
    .filter((i) => (scores[i] as number) > 0)
    .sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b)
    .slice(0, k);
}

/**
 * A random directed graph: every `danglingEvery`-th node has no out-edges, some self-loops, and `twins` pairs
 * (a, b) far apart where b gets exactly a's in-edges, so the two must score bit-identically (a tie).
 */
function randomGraph(rng: Rng, n: number, danglingEvery: number, twins: number): { t: Transition; pairs: [number, number][] } {
  const edges: [number, number, number][] = [];
  for (let i = 0; i < n; i++) {
    if (i % danglingEvery === 0) continue;
    const deg = 1 + Math.floor(rng.nextFloat() * 12);
    for (let k = 0; k < deg; k++) edges.push([i, Math.floor(rng.nextFloat() * n), 0.1 + rng.nextFloat()]);
    if (i % 7 === 0) edges.push([i, i, 1]);
  }
  const pairs: [number, number][] = [];
  for (let k = 0; k < twins; k++) pairs.push([k, n - 1 - k]);
  const twinOf = new Map(pairs.map(([a, b]) => [b, a]));
  // Drop the twins' own in-edges, then copy a's in-edges to b (a self-loop of a becomes an edge a -> b).
  const kept = edges.filter(([, dst]) => !twinOf.has(dst));
  const copies: [number, number, number][] = [];
  for (const [src, dst, w] of kept) for (const [a, b] of pairs) if (dst === a) copies.push([src, b, w]);
  const all = [...kept, ...copies];
  const t = transitionMatrix(
    buildCsr(
      n,
      Int32Array.from(all, (e) => e[0]),
      Int32Array.from(all, (e) => e[1]),
      Float64Array.from(all, (e) => e[2]),
    ),
  );
  return { t, pairs };
}

describe.each(['wasm', 'js'] as const)('personalizedPageRank is power iteration, bit for bit (the %s kernel set)', (set) => {
  beforeEach(() => {
    vi.stubEnv('HARNESS_KERNELS', set);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  for (const [seed, policy, n, d, tolerance] of [
    [11, 'seeds', 400, 0.5, 1e-6],
    [12, 'uniform', 400, 0.5, 1e-6],
    [13, 'seeds', 1000, 0.85, 1e-10],
    [14, 'uniform', 1000, 0.85, 1e-10],
    // Node counts that leave padding rows in the last slice of eight.
    [15, 'uniform', 997, 0.5, 1e-8],
    [16, 'seeds', 1003, 0.7, 1e-8],
  ] as const) {
    it(`random ${n}-node graph (seed ${seed}, dangling ${policy}, d ${d}, tolerance ${tolerance}): the same scores, top-50 and ties`, () => {
      const rng = new Rng(seed);
      const { t, pairs } = randomGraph(rng, n, 9, 8);
      expect(t.dangling.length).toBeGreaterThan(n / 10);
      // From one seed (the frontier phase runs several steps) to many (it ends at once).
      for (const seeds of [1, 2, 5, 40]) {
        const s = new Float64Array(n);
        // Seeds avoid the twins: a seed weight would make them differ.
        for (let k = 0; k < seeds; k++) s[8 + Math.floor(rng.nextFloat() * (n - 16))] = rng.nextFloat() + 0.01;
        const got = personalizedPageRank(t, s, { damping: d, tolerance, maxIterations: 1000, dangling: policy });
        const want = powerIteration(t, s, d, tolerance, policy);
        expect(got.converged).toBe(true);
        expect(got.iterations).toBe(want.iterations);
        expect(topK(got.scores, 50)).toEqual(topK(want.x, 50));
        expect(Array.from(got.scores)).toEqual(Array.from(want.x));
        for (const [a, b] of pairs) expect(got.scores[b]).toBe(got.scores[a]);
      }
    });
  }

  it('the stopping rule certifies the error: L1 distance to the fixed point <= d / (1 - d) * delta', () => {
    const rng = new Rng(21);
    const n = 200;
    const { t } = randomGraph(rng, n, 10, 0);
    for (const policy of ['seeds', 'uniform'] as const) {
      for (const d of [0.5, 0.85]) {
        const s = new Float64Array(n);
        for (let k = 0; k < 4; k++) s[Math.floor(rng.nextFloat() * n)] = rng.nextFloat() + 0.01;
        const exact = powerIteration(t, s, d, 1e-15, policy).x;
        const got = personalizedPageRank(t, s, { damping: d, tolerance: 1e-6, maxIterations: 1000, dangling: policy });
        let l1 = 0;
        for (let i = 0; i < n; i++) l1 += Math.abs((got.scores[i] as number) - (exact[i] as number));
        expect(got.delta).toBeLessThan(1e-6);
        // The reference's own error is at most d / (1 - d) * 1e-15.
        expect(l1).toBeLessThanOrEqual((d / (1 - d)) * got.delta + 1e-14);
      }
    }
  });
});
