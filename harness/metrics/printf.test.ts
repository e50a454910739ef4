import { describe, expect, it } from 'vitest';
import { formatFixed, formatLong, padRight, printfFixed } from './printf.js';

describe('printf-exact %f', () => {
  it('rounds exact binary ties to even, where toFixed rounds them up', () => {
    // 0.03125 = 1/32 is exact in binary: 312.5 ten-thousandths, a true tie. glibc: even -> 0.0312.
    expect((0.03125).toFixed(4)).toBe('0.0313');
    expect(formatFixed(0.03125, 4)).toBe('0.0312');
    // 3/32 = 0.09375 -> 937.5 -> even 938
    expect(formatFixed(0.09375, 4)).toBe('0.0938');
    expect((0.125).toFixed(2)).toBe('0.13');
    expect(formatFixed(0.125, 2)).toBe('0.12');
    expect(formatFixed(2.5, 0)).toBe('2');
    expect(formatFixed(3.5, 0)).toBe('4');
  });
  it('rounds non-ties by the exact value, like C (0.00015 is stored just below the half)', () => {
    // 0.00015 = 1.49999999999999993e-4 in binary: rounds down to 0.0001, not up.
    expect(formatFixed(0.00015, 4)).toBe('0.0001');
    expect(formatFixed(1 / 3, 4)).toBe('0.3333');
    expect(formatFixed(2 / 3, 4)).toBe('0.6667');
    expect(formatFixed(-412.6666666666667, 4)).toBe('-412.6667');
  });
  it('prints negative zero, infinities and NaN as glibc does', () => {
    expect(formatFixed(-0, 4)).toBe('-0.0000');
    expect(formatFixed(Infinity, 4)).toBe('inf');
    expect(formatFixed(-Infinity, 4)).toBe('-inf');
    expect(formatFixed(NaN, 4)).toBe('-nan');
    expect(formatFixed(1e22, 2)).toBe('10000000000000000000000.00');
  });
  it('agrees with toFixed wherever there is no exact tie', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let i = 0; i < 20000; i++) {
      const x = (rnd() - 0.5) * 10 ** Math.floor(rnd() * 8 - 2);
      if (Number.isInteger(Math.abs(x) * 32) && (Math.abs(x) * 32) % 2 === 1) continue;
      expect(formatFixed(x, 4)).toBe(x.toFixed(4));
    }
  });
  it('pads like %6.4f, %-22s and %ld', () => {
    expect(printfFixed(0.5, 6, 4)).toBe('0.5000');
    expect(printfFixed(1500, 6, 4)).toBe('1500.0000');
    expect(printfFixed(-1, 8, 2)).toBe('   -1.00');
    expect(padRight('map', 6)).toBe('map   ');
    expect(padRight('a_name_longer_than_22_chars', 22)).toBe('a_name_longer_than_22_chars');
    expect(formatLong(131.9)).toBe('131');
    expect(formatLong(-2.5)).toBe('-2');
  });
});
