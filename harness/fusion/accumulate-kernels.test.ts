import { afterEach, describe, expect, it } from 'vitest';
import { Rng } from '../stats/rng.js';
import { MAX_MEMORY_BYTES } from '../util/kernel-set.js';
import { fuse } from './fuse.js';
import { packArrays, type PackedRun } from './run-form.js';
import { SelectMemory } from './select-kernels.js';
import type { FusionInput, FusionSpec } from './spec.js';

/** Bench-shaped runs: overlapping documents, falling scores with ties, lists of uneven length (off the four-entry stride). */
function runs(seed: number, inputs: number, nq: number): PackedRun[] {
  const rng = new Rng(seed);
  const queries = Array.from({ length: nq }, (_, q) => `q${q}`);
  return Array.from({ length: inputs }, (_, i) => {
    const offsets = new Int32Array(nq + 1);
    const docs: number[] = [];
    const scores: number[] = [];
    for (let q = 0; q < nq; q++) {
      const n = q === 0 ? 0 : 1 + rng.nextInt(600);
      const chosen = new Set<number>();
      while (chosen.size < n) chosen.add(rng.nextFloat() < 0.6 ? rng.nextInt(700) : rng.nextInt(9000));
      let s = i % 2 === 0 ? 12 : 0.8;
      for (const d of chosen) {
        docs.push(d);
        if (rng.nextFloat() < 0.9) s -= (i % 2 === 0 ? 0.01 : 0.0007) * (1 + rng.nextInt(3));
        scores.push(s);
      }
      offsets[q + 1] = docs.length;
    }
    return packArrays(queries, offsets, Int32Array.from(docs), Float64Array.from(scores));
  });
}

function specs(): FusionSpec[] {
  const out: FusionSpec[] = [];
  for (const topK of [5, 100, 1000]) {
    for (const absent of ['zero', 'min'] as const) {
      out.push({ method: 'rrf', rrfK: 60, normalization: 'none', absent, topK });
      for (const normalization of ['none', 'min-max', 'z-score', 'tm2c2', 'dbsf'] as const) {
        for (const method of ['cc', 'combsum', 'combmnz'] as const) out.push({ method, rrfK: 60, normalization, absent, topK });
      }
    }
  }
  return out;
}

function fuseWith(set: 'js' | 'wasm', inputs: readonly FusionInput[], spec: FusionSpec): PackedRun {
  process.env['HARNESS_KERNELS'] = set;
  return fuse(inputs, spec);
}

function expectSameBits(a: PackedRun, b: PackedRun, where: string): void {
  expect(Array.from(a.offsets), where).toEqual(Array.from(b.offsets));
  expect(Array.from(a.docs), where).toEqual(Array.from(b.docs));
  expect(
    a.scores.every((x, j) => Object.is(x, b.scores[j])),
    where,
  ).toBe(true);
}

describe('the accumulation kernels (WebAssembly, f64x2 for the normalized gains) against their TypeScript twin', () => {
  const saved = process.env['HARNESS_KERNELS'];
  afterEach(() => {
    if (saved === undefined) delete process.env['HARNESS_KERNELS'];
    else process.env['HARNESS_KERNELS'] = saved;
  });
  const base = runs(7, 4, 9);
  // Depth 7 cuts lists (so reads are counted), Infinity reads them whole (the sampled selection); weight 0 drops one.
  const weightings: readonly (readonly [number, number])[] = [
    [1, Infinity],
    [0.35, Infinity],
    [1.7, 7],
    [0, Infinity],
  ];
  for (const spec of specs()) {
    it(`${spec.method} ${spec.normalization} absent ${spec.absent} topK ${spec.topK}: the same fused run in both sets`, () => {
      for (const [w, depth] of weightings) {
        const inputs: FusionInput[] = base.map((run, i) => ({ run, weight: i === 1 ? w : 1 + i / 3, depth, theoreticalMin: i % 2 === 0 ? 0 : -1 }));
        expectSameBits(fuseWith('wasm', inputs, spec), fuseWith('js', inputs, spec), `weight ${w} depth ${depth}`);
      }
    });
  }

  it('scores: a run whose docs and offsets are memoized but whose scores are another array is fused on its own scores', () => {
    delete process.env['HARNESS_KERNELS'];
    const [a, b] = runs(11, 2, 6);
    const spec: FusionSpec = { method: 'cc', rrfK: 60, normalization: 'none', absent: 'zero', topK: 50 };
    const input = (run: PackedRun, i: number): FusionInput => ({ run, weight: 1, depth: Infinity, theoreticalMin: i === 0 ? 0 : -1 });
    fuse([a!, b!].map(input), spec);
    // Same docs and offsets (the LocalIndex is reused), scores ten times larger: another weighting of b against a.
    const scaled: PackedRun = { ...b!, scores: Float64Array.from(b!.scores, (s) => 10 * s) };
    const reused = fuse([a!, scaled].map(input), spec);
    const fresh = fuse([a!, { ...scaled, docs: scaled.docs.slice(), offsets: scaled.offsets.slice() }].map(input), spec);
    expectSameBits(reused, fresh, 'scaled scores');
    expect(Array.from(reused.docs)).not.toEqual(Array.from(fuse([a!, b!].map(input), spec).docs));
  });

  it('a union past 65,536 documents keeps i32 positions; both sets still agree bit for bit', () => {
    const rng = new Rng(3);
    const wide = Array.from({ length: 2 }, (_, i) => {
      const docs = Int32Array.from({ length: 40_000 }, (_, e) => 2 * e + i);
      let s = 5;
      const scores = Float64Array.from(docs, () => (s -= rng.nextFloat() * 1e-4));
      return packArrays(['q'], Int32Array.from([0, docs.length]), docs, scores);
    });
    for (const spec of specs().filter((x) => x.absent === 'min' && x.normalization !== 'dbsf')) {
      const inputs: FusionInput[] = wide.map((run, i) => ({ run, weight: 1 + i, depth: i === 0 ? Infinity : 30_000, theoreticalMin: 0 }));
      const w = fuseWith('wasm', inputs, spec);
      expectSameBits(w, fuseWith('js', inputs, spec), `${spec.method} ${spec.normalization} topK ${spec.topK}`);
    }
  });

  it('a memory past what a kernel can address runs the TypeScript set, whatever was asked', () => {
    expect(new SelectMemory(10, 'wasm', MAX_MEMORY_BYTES).set).toBe('js');
    expect(new SelectMemory(10, 'wasm', 1024).set).toBe('wasm');
  });
});
