import { describe, expect, it } from 'vitest';
import { Rng } from '../stats/rng.js';
import { instantiateKernels } from '../util/kernel-set.js';
import { LANES, PPR_KERNELS } from './ppr-kernels.js';

describe('PPR step kernel: the js and wasm sets agree bit for bit', () => {
  for (const [seed, slices, toAll] of [
    [201, 1, 0],
    [202, 37, 0],
    [203, 500, 1e-4],
  ] as const) {
    it(`${slices} slices of random widths, toAll ${toAll}: the new vector and the L1 change`, () => {
      const rng = new Rng(seed);
      const padded = slices * LANES;
      const slicePtr = new Int32Array(slices + 1);
      for (let c = 0; c < slices; c++) slicePtr[c + 1] = (slicePtr[c] as number) + LANES * (rng.nextFloat() < 0.1 ? 0 : 1 + rng.nextInt(12));
      const entries = slicePtr[slices] as number;
      const cols = Int32Array.from({ length: entries }, () => rng.nextInt(padded) << 3);
      const vals = Float64Array.from({ length: entries }, () => (rng.nextFloat() < 0.1 ? 0 : rng.nextFloat()));
      const vectors = Array.from({ length: 4 }, () => Float64Array.from({ length: padded }, () => (rng.nextFloat() < 0.2 ? 0 : rng.nextFloat() / padded)));
      const at = { cols: Math.ceil(((slices + 1) * 4) / 16) * 16, vals: 0, vectors: 0 };
      at.vals = at.cols + Math.ceil((entries * 4) / 16) * 16;
      at.vectors = at.vals + entries * 8;
      const vector = (k: number): number => at.vectors + k * padded * 8;
      const results = (['js', 'wasm'] as const).map((set) => {
        const { kernels, memory } = instantiateKernels(PPR_KERNELS, vector(5), set);
        new Int32Array(memory, 0, slices + 1).set(slicePtr);
        new Int32Array(memory, at.cols, entries).set(cols);
        new Float64Array(memory, at.vals, entries).set(vals);
        vectors.forEach((v, k) => new Float64Array(memory, vector(k), padded).set(v));
        const delta = kernels.step(slices, 0, at.cols, at.vals, vector(0), vector(4), vector(1), vector(2), 0.37, toAll, 0.85);
        return { delta, out: new Float64Array(memory, vector(4), padded) };
      });
      const [js, wasm] = results as [(typeof results)[0], (typeof results)[0]];
      expect(Object.is(js.delta, wasm.delta)).toBe(true);
      let differing = 0;
      for (let i = 0; i < padded; i++) if (!Object.is(js.out[i], wasm.out[i])) differing++;
      expect(differing).toBe(0);
    });
  }
});
