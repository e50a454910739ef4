import { describe, expect, it } from 'vitest';
import { TokenTable } from './token-table.js';
import { createRng } from '../../harness/stats/rng.js';

/** The UTF-16 code units of `s`, as a scanner hands them to the table. */
const units = (s: string): Uint16Array => Uint16Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));

describe('TokenTable', () => {
  it('agrees with a Map on 20,000 random keys looked up as ranges of longer strings, through many resizes', () => {
    const rng = createRng(3);
    const alphabet = 'abcdefghijklmnopqrstuvwxyzé漢😀';
    const table = new TokenTable();
    const map = new Map<string, number>();
    for (let i = 0; i < 60_000; i++) {
      let key = '';
      const n = 1 + Math.floor(rng.nextFloat() * 6);
      for (let j = 0; j < n; j++) key += alphabet[Math.floor(rng.nextFloat() * alphabet.length)]!;
      // The key sits inside other text: lookups read the range, never a substring.
      const text = units(`  ${key}.`);
      const got = table.get(text, 2, 2 + key.length);
      expect(got).toBe(map.get(key));
      if (got === undefined) {
        table.set(text, 2, 2 + key.length, map.size);
        map.set(key, map.size);
      }
    }
    expect(table.size).toBe(map.size);
    expect(map.size).toBeGreaterThan(20_000);
  });

  it('tells apart keys that share a prefix or differ only in length', () => {
    const table = new TokenTable();
    const text = units('runnerrunrunning');
    table.set(text, 0, 6, 1); // runner
    expect(table.get(text, 6, 9)).toBeUndefined(); // run
    table.set(text, 6, 9, 2);
    expect(table.get(text, 9, 16)).toBeUndefined(); // running
    table.set(text, 9, 16, 3);
    expect([table.get(units('runner'), 0, 6), table.get(units('run'), 0, 3), table.get(units('running'), 0, 7), table.get(units('runn'), 0, 4)]).toEqual([
      1,
      2,
      3,
      undefined,
    ]);
  });
});
