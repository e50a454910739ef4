import { describe, expect, it } from 'vitest';
import { type KernelInstance, instantiateKernels } from '../util/kernel-set.js';
import { BLOCK_CHUNKS, DRAW_KERNELS, type DrawKernels, ENTRY_BYTES, LANES, SLICE_BYTES } from './draw-kernels.js';
import { Rng } from './rng.js';

/** The same memory contents under both kernel sets. */
function bothSets(bytes: number, fill: (memory: ArrayBuffer) => void): [KernelInstance<DrawKernels>, KernelInstance<DrawKernels>] {
  const sets = [instantiateKernels(DRAW_KERNELS, bytes, 'js'), instantiateKernels(DRAW_KERNELS, bytes, 'wasm')] as const;
  for (const s of sets) fill(s.memory);
  return [sets[0], sets[1]];
}

/** Values with ties, mixed signs and magnitudes: sums whose rounding depends on the order of their terms. */
function value(rng: Rng): number {
  const u = rng.nextFloat();
  if (u < 0.1) return 0;
  if (u < 0.5) return Math.round(rng.nextFloat() * 20) / 20 - 0.37;
  return (rng.nextFloat() - 0.5) * 10 ** Math.floor(rng.nextFloat() * 12 - 6);
}

/** Every f64 of both memories from `byteOffset`, compared with Object.is. */
function expectSameF64(js: ArrayBuffer, wasm: ArrayBuffer, byteOffset: number, length: number): void {
  const a = new Float64Array(js, byteOffset, length);
  const b = new Float64Array(wasm, byteOffset, length);
  let differing = 0;
  for (let i = 0; i < length; i++) if (!Object.is(a[i], b[i])) differing++;
  expect(differing).toBe(0);
}

describe('draw kernels: the js and wasm sets agree bit for bit', () => {
  it('tables', () => {
    const chunks = 9;
    const vectors = chunks * SLICE_BYTES;
    const positions = chunks * 8 * LANES;
    const [js, wasm] = bothSets(vectors + positions * 8, (m) => {
      const r = new Rng(101);
      new Float64Array(m, vectors, positions).set(Float64Array.from({ length: positions }, () => value(r)));
    });
    js.kernels.tables(0, vectors, chunks);
    wasm.kernels.tables(0, vectors, chunks);
    expectSameF64(js.memory, wasm.memory, 0, (vectors + positions * 8) / 8);
  });

  it('sums, across draw blocks, with running sums that do not start at 0', () => {
    for (const [chunks, count] of [
      [BLOCK_CHUNKS, 7],
      [3 * BLOCK_CHUNKS, 4100],
      [16 * BLOCK_CHUNKS, 2048],
    ] as const) {
      const bytes = chunks * SLICE_BYTES;
      const acc = bytes + Math.ceil((chunks * count) / 16) * 16;
      const total = acc + count * ENTRY_BYTES;
      const [js, wasm] = bothSets(total, (m) => {
        const r = new Rng(chunks * 7919 + count);
        new Float64Array(m, 0, bytes / 8).set(Float64Array.from({ length: bytes / 8 }, () => value(r)));
        new Uint8Array(m, bytes, chunks * count).set(Uint8Array.from({ length: chunks * count }, () => r.nextU32() & 0xff));
        new Float64Array(m, acc, count * LANES).set(Float64Array.from({ length: count * LANES }, () => value(r)));
      });
      js.kernels.sums(0, bytes, count, chunks, acc);
      wasm.kernels.sums(0, bytes, count, chunks, acc);
      expectSameF64(js.memory, wasm.memory, acc, count * LANES);
    }
  });

  it('combine', () => {
    const n = 300;
    const count = 1500;
    const layout = { hiStart: n * ENTRY_BYTES, hiIndex: 0, hiWeight: 0, s0: 0, s1: 0, out: 0 };
    layout.hiIndex = layout.hiStart + Math.ceil(((count + 1) * 4) / 16) * 16;
    const r = new Rng(103);
    const hiStart = new Uint32Array(count + 1);
    for (let b = 0; b < count; b++) hiStart[b + 1] = (hiStart[b] as number) + (r.nextFloat() < 0.3 ? 0 : r.nextInt(9));
    const hi = hiStart[count] as number;
    layout.hiWeight = layout.hiIndex + Math.ceil((hi * 4) / 16) * 16;
    layout.s0 = layout.hiWeight + hi * 8;
    layout.s1 = layout.s0 + count * ENTRY_BYTES;
    layout.out = layout.s1 + count * ENTRY_BYTES;
    const [js, wasm] = bothSets(layout.out + count * ENTRY_BYTES, (m) => {
      const v = new Rng(104);
      new Float64Array(m, 0, n * LANES).set(Float64Array.from({ length: n * LANES }, () => value(v)));
      new Uint32Array(m, layout.hiStart, count + 1).set(hiStart);
      new Uint32Array(m, layout.hiIndex, hi).set(Uint32Array.from({ length: hi }, () => v.nextInt(n)));
      new Float64Array(m, layout.hiWeight, hi).set(Float64Array.from({ length: hi }, () => 1 + v.nextInt(3)));
      new Float64Array(m, layout.s0, 2 * count * LANES).set(Float64Array.from({ length: 2 * count * LANES }, () => value(v)));
    });
    for (const { kernels } of [js, wasm]) kernels.combine(0, layout.hiStart, layout.hiIndex, layout.hiWeight, count, layout.s0, layout.s1, layout.out);
    expectSameF64(js.memory, wasm.memory, layout.out, count * LANES);
  });
});
