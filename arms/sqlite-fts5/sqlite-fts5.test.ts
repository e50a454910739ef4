import { describe, expect, it } from 'vitest';
import { sqliteFts5Arm, toMatchExpression } from './index.js';
import type { ArmContext } from '../types.js';
import type { Document } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { stderrLogger } from '../../harness/log.js';
import { tempDir } from '../../harness/testing/temp.js';
import { join } from 'node:path';

const dir = tempDir('harness-fts5');
const ctx: ArmContext = { cache: new ContentStore(join(dir, 'cache')), log: stderrLogger({ quiet: true }), workDir: join(dir, 'work'), env: {} };

async function armOver(docs: Document[], params: Record<string, unknown> = {}) {
  const arm = sqliteFts5Arm.create('t', sqliteFts5Arm.params.parse(params), ctx);
  await arm.index(docs);
  const search = (text: string, topK = 10) => arm.search({ id: 'q', text, stratum: 'all' }, topK);
  return { arm, search };
}

const FOUR: Document[] = [
  { id: 'd1', text: 'apple banana apple' },
  { id: 'd2', text: 'banana cherry' },
  { id: 'd3', text: 'cherry cherry cherry date' },
  { id: 'd4', text: 'egg' },
];

describe('toMatchExpression', () => {
  it('quotes every token and ORs them', () => {
    expect(toMatchExpression('apple pie')).toBe('"apple" OR "pie"');
  });

  it('turns operators and syntax into plain words', () => {
    expect(toMatchExpression('NEAR(a b, 3) AND -c OR d* ^e f:g "h"')).toBe(
      '"NEAR" OR "a" OR "b" OR "3" OR "AND" OR "c" OR "OR" OR "d" OR "e" OR "f" OR "g" OR "h"',
    );
  });

  it('returns undefined when there is nothing to search for', () => {
    expect(toMatchExpression('')).toBeUndefined();
    expect(toMatchExpression(' "" () * - : ')).toBeUndefined();
  });
});

describe('sqlite-fts5 arm', () => {
  it("ranks by bm25() negated, hand-derived with FTS5's k1 = 1.2, b = 0.75", async () => {
    const { search } = await armOver(FOUR);
    // FTS5: idf = ln((N - n + 0.5) / (n + 0.5)); term score idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)).
    // N = 4, avgdl = 10 / 4 = 2.5. apple: n = 1, idf = ln(3.5 / 1.5) = 0.8472979.
    // d1: tf 2, dl 3: 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2.5)) = 4.4 / 3.38 = 1.3017751; score 0.8472979 * 1.3017751 = 1.1029913
    const hits = await search('apple');
    expect(hits.map((h) => h.docId)).toEqual(['d1']);
    expect(hits[0]!.score).toBeCloseTo(1.1029913, 5);
  });

  it('gives a term in at least half the documents a tiny positive weight (idf clamped to 1e-6), never below 0', async () => {
    const { search } = await armOver(FOUR);
    // banana: n = 2, ln(2.5 / 2.5) = 0 -> clamped to 1e-6. d2: tf 1, dl 2: 2.2 / (1 + 1.2 * (0.25 + 0.6)) = 1.0891089.
    const hits = await search('banana');
    expect(hits.map((h) => h.docId)).toEqual(['d2', 'd1']);
    expect(hits[0]!.score).toBeCloseTo(1e-6 * 1.0891089, 11);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect(sqliteFts5Arm.theoreticalMinScore(sqliteFts5Arm.params.parse({}))).toBe(0);
  });

  it('never fails on user text with quotes, colons, parentheses, NEAR, minus or star', async () => {
    const { search } = await armOver(FOUR);
    for (const q of [
      '"apple',
      "apple's",
      'apple:banana',
      '(apple',
      'apple)',
      'NEAR(apple cherry)',
      '-apple',
      'apple*',
      '*',
      '^apple',
      'AND OR NOT',
      'a"b"c',
      '{apple}',
      '',
    ]) {
      await expect(search(q)).resolves.toBeDefined();
    }
    expect((await search('NEAR(apple')).map((h) => h.docId)).toEqual(['d1']);
    expect(await search('"" ()')).toEqual([]);
  });

  it('matches inflections only with the porter tokenizer', async () => {
    const docs = [{ id: 'd', text: 'she was running' }];
    expect(await (await armOver(docs)).search('runs')).toEqual([]);
    expect((await (await armOver(docs, { tokenizer: 'porter' })).search('runs')).map((h) => h.docId)).toEqual(['d']);
  });

  it('indexes title with text (flat), or as weighted columns (separate)', async () => {
    const docs = [
      { id: 'in-title', title: 'zebra', text: 'stripes on an animal here' },
      { id: 'in-text', title: 'animal', text: 'zebra stripes on an here' },
    ];
    expect((await (await armOver(docs)).search('zebra')).map((h) => h.docId).sort()).toEqual(['in-text', 'in-title']);
    const titleHeavy = await armOver(docs, { fields: 'separate', titleWeight: 10 });
    expect((await titleHeavy.search('zebra')).map((h) => h.docId)).toEqual(['in-title', 'in-text']);
    const textHeavy = await armOver(docs, { fields: 'separate', textWeight: 10 });
    expect((await textHeavy.search('zebra')).map((h) => h.docId)).toEqual(['in-text', 'in-title']);
  });

  it('honours topK and returns nothing for topK 0', async () => {
    const { search } = await armOver(FOUR);
    expect(await search('cherry banana apple', 2)).toHaveLength(2);
    expect(await search('cherry banana apple', 1000)).toHaveLength(3);
    expect(await search('cherry', 0)).toEqual([]);
  });

  it('rejects weights without separate fields and unknown keys', () => {
    expect(sqliteFts5Arm.params.safeParse({ titleWeight: 2 }).success).toBe(false);
    expect(sqliteFts5Arm.params.safeParse({ k1: 1.2 }).success).toBe(false);
    expect(sqliteFts5Arm.params.parse({})).toEqual({ tokenizer: 'unicode61', fields: 'flat', titleWeight: 1, textWeight: 1 });
  });

  it('fingerprints tokenizer, fields and weights', () => {
    const fp = (p: Record<string, unknown>) => JSON.stringify(sqliteFts5Arm.fingerprint(sqliteFts5Arm.params.parse(p)));
    expect(fp({ tokenizer: 'porter' })).not.toBe(fp({}));
    expect(fp({ fields: 'separate', titleWeight: 2 })).not.toBe(fp({ fields: 'separate' }));
  });

  it('closes its database; searching after close is an error', async () => {
    const { arm } = await armOver(FOUR);
    await arm.close!();
    await expect(arm.search({ id: 'q', text: 'apple', stratum: 'all' }, 5)).rejects.toThrow(/before index/);
  });
});
