import { describe, expect, it } from 'vitest';
import { ContentStore } from '../../harness/cache/index.js';
import { memoryLogger } from '../../harness/log.js';
import { fnv1a32, hashEmbed, hashEmbedArm } from './index.js';
import { tempDir } from '../../harness/testing/temp.js';

const root = tempDir('hash-embed');

describe('fnv1a32', () => {
  it('matches the published FNV-1a 32-bit test vectors', () => {
    // draft-eastlake-fnv test vectors: "" -> 0x811c9dc5, "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968.
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });
});

describe('hashEmbed', () => {
  it('puts each lower-cased token at FNV-1a mod 256 with the sign of bit 31, then L2-normalises', () => {
    // python: h("hello") = 1335831723 -> index 171, bit 31 clear (+1); h("world") = 933488787 -> 147, +1;
    // h("a") = 3826002220 -> 44, bit 31 set (-1).
    const v = hashEmbed('Hello, WORLD! a hello');
    expect(v.length).toBe(256);
    const norm = Math.sqrt(2 * 2 + 1 + 1);
    expect(v[171]).toBeCloseTo(2 / norm, 6);
    expect(v[147]).toBeCloseTo(1 / norm, 6);
    expect(v[44]).toBeCloseTo(-1 / norm, 6);
    expect(v.reduce((n, x) => n + (x === 0 ? 0 : 1), 0)).toBe(3);
  });

  it('is deterministic and gives the zero vector for a text without tokens', () => {
    expect(hashEmbed('same text')).toEqual(hashEmbed('same text'));
    expect(hashEmbed('  ...  ').every((x) => x === 0)).toBe(true);
  });

  it('rejects dims that are not a power of two', () => {
    expect(hashEmbedArm.params.safeParse({ dims: 300 }).success).toBe(false);
    expect(hashEmbedArm.params.parse({}).dims).toBe(256);
  });
});

describe('hash-embed arm', () => {
  it('ranks by cosine: the document sharing more words first, an unrelated one at 0', async () => {
    const ctx = { cache: new ContentStore(root), log: memoryLogger(), workDir: root, env: {} };
    const arm = hashEmbedArm.create('h', hashEmbedArm.params.parse({}), ctx);
    await arm.index([
      { id: 'd1', text: 'hiking in the mountains' },
      { id: 'd2', text: 'hiking trip' },
      { id: 'd3', text: 'quantum' },
    ]);
    const hits = await arm.search({ id: 'q', text: 'hiking trip', stratum: 's' }, 3);
    expect(hits.map((h) => h.docId)).toEqual(['d2', 'd1', 'd3']);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
    // d1 has 4 tokens at distinct components (python: 53, 158, 28, 3), one shared: cos = 1 / (sqrt(2) * sqrt(4)).
    expect(hits[1]!.score).toBeCloseTo(1 / (Math.sqrt(2) * 2), 6);
    expect(hashEmbedArm.theoreticalMinScore(hashEmbedArm.params.parse({}))).toBe(-1);
  });
});
