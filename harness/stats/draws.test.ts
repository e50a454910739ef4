import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Rng } from './rng.js';
import { buildChunkTable, chunkCount, drawResamples, drawSignBytes, LANES, type ResampleDraws, SharedDrawSums } from './draws.js';

/** The definition the kernel must reproduce bit for bit: Σ_c T[c, byte of chunk c], added left to right from 0. */
function lookupSum(table: Float64Array, bytes: Uint8Array, offset: number, chunks: number): number {
  let s = 0;
  for (let c = 0; c < chunks; c++) s += table[(c << 8) | (bytes[offset + c] as number)] as number;
  return s;
}

/** The definition of a resample sum: S(plane0) + 2·S(plane1) + 4·Σ_hi, each part added in order. */
function resampleSum(draws: ResampleDraws, d: Float64Array, table: Float64Array, b: number): number {
  const off = b * draws.chunks;
  let hi = 0;
  for (let k = draws.hiStart[b] as number; k < (draws.hiStart[b + 1] as number); k++)
    hi += (draws.hiWeight[k] as number) * (d[draws.hiIndex[k] as number] as number);
  return lookupSum(table, draws.plane0, off, draws.chunks) + 2 * lookupSum(table, draws.plane1, off, draws.chunks) + 4 * hi;
}

describe('chunk tables and byte-encoded draws', () => {
  it('T[(c << 8) | m] is the sum of d over the bits of m within chunk c', () => {
    const d = Float64Array.from({ length: 11 }, (_, i) => 2 ** i); // sums of distinct powers of two are exact
    const table = new Float64Array(chunkCount(11) * 256);
    buildChunkTable(d, table);
    expect(table[0b1010_0101]).toBe(1 + 4 + 32 + 128);
    expect(table[(1 << 8) | 0b101]).toBe(256 + 1024);
    expect(table[(1 << 8) | 0b1111_1111]).toBe(256 + 512 + 1024); // bits past n = 11 add nothing
    expect(lookupSum(table, Uint8Array.from([0b11, 0b10]), 0, 2)).toBe(1 + 2 + 512);
  });

  it('sign draws never set bits past n', () => {
    const bytes = drawSignBytes(11, 200, 1);
    for (let b = 0; b < 200; b++) expect((bytes[b * 2 + 1] as number) & ~0b111).toBe(0);
  });

  it('resample multiplicities, rebuilt from the bit planes and high list, sum to n', () => {
    const n = 37;
    const draws = drawResamples(n, 500, 9);
    const ones = new Float64Array(n).fill(1);
    const table = new Float64Array(chunkCount(n) * 256);
    buildChunkTable(ones, table);
    for (let b = 0; b < 500; b++) expect(resampleSum(draws, ones, table, b)).toBe(n);
    // E[multiplicity of position 0] = 1: the mean over 500 resamples of Σ c_i·[i = 0] is close to 1.
    const e0 = new Float64Array(n);
    e0[0] = 1;
    buildChunkTable(e0, table);
    let mean = 0;
    for (let b = 0; b < 500; b++) mean += resampleSum(draws, e0, table, b) / 500;
    expect(Math.abs(mean - 1)).toBeLessThan(5 * Math.sqrt(1 / 500)); // Var ≈ 1 for Binomial(37, 1/37)
  });
});

describe.each(['wasm', 'js'] as const)('SharedDrawSums (the %s kernel set)', (set) => {
  beforeEach(() => {
    vi.stubEnv('HARNESS_KERNELS', set);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('gives every lane the bits of the scalar definition, for full and partial blocks, any n and draw count', () => {
    const rng = new Rng(3);
    // n = 8: one chunk (padded to four); 37: 5 chunks; 500: 63 chunks; 4,100 draws cross the 2,048-draw blocks.
    for (const [n, lanes, count] of [
      [37, 4, 300],
      [500, 3, 4100],
      [8, 1, 7],
      [33, 4, 2048],
    ] as const) {
      // Grid values with ties and mixed signs: sums whose rounding depends on the order they are added in.
      const vector = (): Float64Array => Float64Array.from({ length: n }, () => Math.round(rng.nextFloat() * 20) / 20 - 0.37);
      const first = Array.from({ length: LANES }, vector);
      const block = Array.from({ length: lanes }, vector);
      const chunks = chunkCount(n);
      const signs = drawSignBytes(n, count, 5);
      const resamples = drawResamples(n, count, 5);
      const kernel = new SharedDrawSums(n, count, [signs]);
      const resampling = SharedDrawSums.ofResamples(resamples);
      // A full block first, so a partial block must overwrite the tables of its own lanes only.
      kernel.setVectors(first);
      kernel.sums(0);
      resampling.setVectors(first);
      resampling.resampleSums();
      kernel.setVectors(block);
      resampling.setVectors(block);
      const signSums = kernel.sums(0);
      const resampled = resampling.resampleSums();
      const table = new Float64Array(chunks * 256);
      block.forEach((d, v) => {
        buildChunkTable(d, table);
        for (let b = 0; b < count; b++) {
          expect(signSums[b * LANES + v]).toBe(lookupSum(table, signs, b * chunks, chunks));
          expect(resampled[v]?.[b]).toBe(resampleSum(resamples, d, table, b));
        }
      });
    }
  });

  it('refuses draws that do not fit its 32-bit memory, naming the fix', () => {
    expect(() => new SharedDrawSums(4000, 2 ** 22, [new Uint8Array(0)])).toThrow(
      /4194304 draws of 4000 positions need \d+ MB of kernel memory \(at most 2048 MB\)/,
    );
  });
});
