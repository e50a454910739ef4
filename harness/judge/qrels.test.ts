import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EvalSet } from '../../evalset/types.js';
import { tempJudgments } from '../testing/judgments.js';
import { withChosenQrels } from './qrels.js';
import type { JudgmentRecord, JudgmentsManifest } from './store.js';

const es: EvalSet = {
  name: 'es',
  documents: ['a', 'b', 'c'].map((id) => ({ id, text: id })),
  queries: [{ id: 'q', text: 'q', stratum: 'exact' }],
  qrels: new Map([['q', new Map([['a', 3]])]]),
};

const rec = (docId: string, grade: number | null): JudgmentRecord => ({
  queryId: 'q',
  docId,
  stratum: 'exact',
  status: grade === null ? 'parse-failure' : 'judged',
  grade,
  samples: grade === null ? [] : [grade],
  parseFailures: grade === null ? 1 : 0,
});

/** A judgments folder of `records` whose pool also held `gold` pairs gold graded (the judge skipped them). */
async function folder(records: JudgmentRecord[], gold = 1): Promise<string> {
  const n = records.length + gold;
  const manifest: Partial<JudgmentsManifest> = {
    judge: {
      model: 'm',
      prompt: { name: 'umbrela-v1', sha256: 'ab'.repeat(32) },
      decoding: { temperature: 0, maxTokens: 64 },
      samples: 1,
      parseRetries: 2,
      baseURL: 'x',
      local: true,
    },
    pool: { depth: 5, systems: ['s'], pairs: n, queries: 1 },
    counts: { pooled: n, gold, judged: 0, parseFailures: 0, skippedSensitive: 0, requests: 0, cachedReplies: 0 },
  };
  return join(await tempJudgments('qrels', records, 'v1', { manifest }), 'judgments');
}

describe('withChosenQrels', () => {
  it('gold+judged keeps gold and fills holes; judged uses the judge alone; a parse failure grades nothing', async () => {
    // The judge (asked with --all) says a is 1: gold's 3 wins under gold+judged.
    const j = await folder([rec('a', 1), rec('b', 2), rec('c', null)], 0);
    const merged = await withChosenQrels(es, { qrels: 'gold+judged', judgments: j, file: 'c.yaml' });
    expect([...merged.es.qrels.get('q')!]).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
    const { grades, gold, ...judge } = merged.qrels.judge!;
    expect({ source: merged.qrels.source, judge }).toEqual({
      source: 'gold+judged',
      judge: { model: 'm', prompt: `umbrela-v1@${'ab'.repeat(6)}`, qrelsVersion: 'v1', depth: 5, pooled: ['s'], holes: 1 },
    });
    // The judge's own grades (for the report's histogram) and the gold qrels (for the gold-only verdict) ride along.
    expect(gold).toBe(es.qrels);
    expect([...grades.values()].flatMap((d) => [...d.values()]).length).toBeGreaterThan(0);
    const judged = await withChosenQrels(es, { qrels: 'judged', judgments: j, file: 'c.yaml' });
    expect([...judged.es.qrels.get('q')!]).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    expect((await withChosenQrels(es, { qrels: 'gold', file: 'c.yaml' })).es).toBe(es);
  });

  it('counts the pairs only gold graded as holes of judged-only qrels, and refuses judgments of another eval set', async () => {
    const j = await folder([rec('b', 2)], 1);
    expect((await withChosenQrels(es, { qrels: 'judged', judgments: j, file: 'c.yaml' })).qrels.judge?.holes).toBe(1);
    expect((await withChosenQrels(es, { qrels: 'gold+judged', judgments: j, file: 'c.yaml' })).qrels.judge?.holes).toBe(0);
    const other = await folder([rec('zzz', 2)]);
    await expect(withChosenQrels(es, { qrels: 'gold+judged', judgments: other, file: 'c.yaml' })).rejects.toThrow(
      /document zzz, which eval set es does not hold/,
    );
  });

  it('refuses judgments without a graded pair under judged and gold+judged (exit 2, naming the folder); none needed where gold graded the pool', async () => {
    const failed = await folder([rec('b', null), rec('c', null)]);
    for (const qrels of ['judged', 'gold+judged'] as const) {
      const err = await withChosenQrels(es, { qrels, judgments: failed, file: 'c.yaml' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ exitCode: 2 });
      expect((err as Error).message).toBe(
        `${failed}: the judgments hold no graded pair (2 records: 2 without a grade, 0 sensitive and not sent), so qrels: ${qrels} would add no judged grade`,
      );
    }
    const goldCovered = await folder([], 3);
    expect((await withChosenQrels(es, { qrels: 'gold+judged', judgments: goldCovered, file: 'c.yaml' })).es.qrels.get('q')?.get('a')).toBe(3);
    await expect(withChosenQrels(es, { qrels: 'judged', judgments: goldCovered, file: 'c.yaml' })).rejects.toThrow(/no graded pair \(0 records/);
  });
});
