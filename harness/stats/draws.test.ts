import { describe, expect, it } from 'vitest';
import { buildChunkTable, chunkCount, drawResamples, drawSignBytes, lookupSum, resampleSums } from './draws.js';

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
});
