import { describe, expect, it } from 'vitest';
import { Rng } from './rng.js';
import {
  blockLookupSums,
  blockResampleSums,
  buildChunkTable,
  buildChunkTables,
  chunkCount,
  drawResamples,
  drawSignBytes,
  LANES,
  lookupSum,
  resampleSums,
} from './draws.js';

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
    const sums = new Float64Array(500);
    resampleSums(draws, ones, table, sums);
    for (const s of sums) expect(s).toBe(n);
    // E[multiplicity of position 0] = 1: the mean over 500 resamples of Σ c_i·[i = 0] is close to 1.
    const e0 = new Float64Array(n);
    e0[0] = 1;
    buildChunkTable(e0, table);
    resampleSums(draws, e0, table, sums);
    const mean = sums.reduce((s, x) => s + x, 0) / 500;
    expect(Math.abs(mean - 1)).toBeLessThan(5 * Math.sqrt(1 / 500)); // Var ≈ 1 for Binomial(37, 1/37)
  });

  it('the blocked kernels give every lane the bits of the one-vector kernels, for full and partial blocks', () => {
    const rng = new Rng(3);
    for (const [n, lanes] of [
      [37, 4],
      [500, 3],
      [8, 1],
    ] as const) {
      // Grid values with ties and mixed signs: sums whose rounding depends on the order they are added in.
      const block = Array.from({ length: lanes }, () => Float64Array.from({ length: n }, () => Math.round(rng.nextFloat() * 20) / 20 - 0.37));
      const chunks = chunkCount(n);
      const table = new Float64Array(chunks * 256);
      const tables = new Float64Array(chunks * 256 * LANES);
      buildChunkTables(block, tables, table);
      const count = 300;
      const signs = drawSignBytes(n, count, 5);
      const resamples = drawResamples(n, count, 5);
      const signSums = Array.from({ length: LANES }, () => new Float64Array(count));
      const resampled = Array.from({ length: LANES }, () => new Float64Array(count));
      blockLookupSums(tables, signs, count, chunks, signSums);
      blockResampleSums(resamples, block, tables, resampled);
      block.forEach((d, v) => {
        buildChunkTable(d, table);
        const expected = new Float64Array(count);
        resampleSums(resamples, d, table, expected);
        expect(resampled[v]).toEqual(expected);
        for (let b = 0; b < count; b++) expect(signSums[v]?.[b]).toBe(lookupSum(table, signs, b * chunks, chunks));
      });
    }
  });
});
