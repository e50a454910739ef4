import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JudgmentRecord } from '../judge/store.js';
import { newSession, saveSession } from '../kappa/session.js';
import { tempJudgments } from '../testing/judgments.js';
import { humanQrels, readHumanLabels } from './labels.js';

/** Human labels for an ablation: a kappa session or TREC qrels, checked against the judgments, as query-level labels. */

const records: JudgmentRecord[] = ['q1', 'q2'].flatMap((q) =>
  ['d1', 'd2'].map((d, k) => ({ queryId: q, docId: d, stratum: 'exact', status: 'judged' as const, grade: k + 1, samples: [k + 1], parseFailures: 0 })),
);

const judgments = () => tempJudgments('evidence-labels', records, 'aaaaaaaaaaaaaaaa');

describe('readHumanLabels', () => {
  it('TREC qrels: a query is labelled when every judged pair of it has a human grade', async () => {
    const dir = await judgments();
    writeFileSync(join(dir, 'h.qrels'), 'q1 0 d1 0\nq1 0 d2 3\nq2 0 d1 2\n');
    const l = await readHumanLabels(join(dir, 'h.qrels'), join(dir, 'judgments'));
    expect(l.kind).toBe('qrels');
    expect(l.complete).toEqual(['q1']);
    expect(l.incomplete).toEqual(['q2']);
    expect(l.pairs.map((p) => [p.queryId, p.docId, p.human, p.llm])).toEqual([
      ['q1', 'd1', 0, 1],
      ['q1', 'd2', 3, 2],
      ['q2', 'd1', 2, 1],
    ]);
  });

  it('a bad line is named at file:line; labels with no whole query are refused with what to do', async () => {
    const dir = await judgments();
    const f = join(dir, 'h.qrels');
    writeFileSync(f, 'q1 0 d1 0\nq1 0 d9 3\n');
    await expect(readHumanLabels(f, join(dir, 'judgments'))).rejects.toThrow(`${f}:2: query q1, document d9: the judge has no grade for this pair`);
    writeFileSync(f, 'q1 0 d1 0\n');
    await expect(readHumanLabels(f, join(dir, 'judgments'))).rejects.toThrow('no query has every judged pair labelled (1 labelled in part)');
  });

  it('a kappa session: skips leave a query incomplete; a session of another qrels version is refused', async () => {
    const dir = await judgments();
    const f = join(dir, 's.json');
    const s = newSession(
      'aaaaaaaaaaaaaaaa',
      1,
      records.map((r) => ({ queryId: r.queryId, docId: r.docId, stratum: r.stratum })),
      'query',
    );
    s.labels.splice(0, 4, 1, 1, 'skip', 2);
    s.position = 4;
    await saveSession(f, s);
    const l = await readHumanLabels(f, join(dir, 'judgments'));
    expect(l).toMatchObject({ kind: 'session', complete: ['q1'], incomplete: ['q2'], qrelsVersion: 'aaaaaaaaaaaaaaaa' });
    await saveSession(f, { ...s, qrelsVersion: 'bbbbbbbbbbbbbbbb' });
    await expect(readHumanLabels(f, join(dir, 'judgments'))).rejects.toThrow('labels judgments of qrels version bbbbbbbbbbbbbbbb, not aaaaaaaaaaaaaaaa');
  });
});

describe('humanQrels', () => {
  it('the scoring qrels of each labelled query with the judged pairs replaced by the human grades; others untouched', () => {
    const scoring = new Map([
      [
        'q1',
        new Map([
          ['d1', 1],
          ['d2', 2],
          ['g', 3],
        ]),
      ],
      ['q2', new Map([['d1', 1]])],
    ]);
    const q = humanQrels(scoring, {
      complete: ['q1'],
      pairs: [
        { queryId: 'q1', docId: 'd1', stratum: 'exact', human: 0, llm: 1 },
        { queryId: 'q1', docId: 'd2', stratum: 'exact', human: 3, llm: 2 },
        { queryId: 'q2', docId: 'd1', stratum: 'exact', human: 3, llm: 1 },
      ],
    });
    expect([...q.keys()]).toEqual(['q1']);
    expect(q.get('q1')).toEqual(
      new Map([
        ['d1', 0],
        ['d2', 3],
        ['g', 3],
      ]),
    );
    expect(scoring.get('q1')?.get('d1')).toBe(1);
  });
});
