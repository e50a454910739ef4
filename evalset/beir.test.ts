import { describe, expect, it } from 'vitest';
import { InputError, InputProblems } from '../harness/errors.js';
import { describeShared, sharedPath } from '../harness/testing/shared.js';
import { loadBeir } from './beir.js';
import { tempFolder } from '../harness/testing/files.js';

const beirDir = (files: Record<string, string>): Promise<string> => tempFolder('beir', files);

const corpus = [
  '{"_id": "d1", "title": "Cats", "text": "Cats purr."}',
  '{"_id": "d2", "title": "", "text": "Dogs bark."}',
  '{"_id": "d3", "text": "Birds sing."}',
].join('\n');
const queries = ['{"_id": "q1", "text": "purring"}', '{"_id": "q2", "text": "barking"}', '{"_id": "q3", "text": "unused"}'].join('\n');
const qrels = 'query-id\tcorpus-id\tscore\nq2\td2\t2\nq1\td1\t1\nq1\td3\t0\n';

describe('loadBeir', () => {
  it('reads corpus, the queries judged in the split and graded qrels', async () => {
    const dir = await beirDir({ 'corpus.jsonl': corpus, 'queries.jsonl': queries, 'qrels/test.tsv': qrels });
    const es = await loadBeir(dir, { split: 'test' });
    expect(es.documents).toEqual([
      { id: 'd1', text: 'Cats purr.', title: 'Cats' },
      { id: 'd2', text: 'Dogs bark.' },
      { id: 'd3', text: 'Birds sing.' },
    ]);
    // q3 has no qrels line in the split, so it is not a query of this eval set; order follows queries.jsonl.
    expect(es.queries.map((q) => [q.id, q.stratum])).toEqual([
      ['q1', 'all'],
      ['q2', 'all'],
    ]);
    expect(es.qrels.get('q1')).toEqual(
      new Map([
        ['d1', 1],
        ['d3', 0],
      ]),
    );
    expect(es.qrels.get('q2')).toEqual(new Map([['d2', 2]]));
  });

  it('finds a single corpus/*.jsonl and takes an explicit corpus file', async () => {
    const dir = await beirDir({ 'corpus/human.jsonl': corpus, 'queries.jsonl': queries, 'qrels/dev.tsv': 'q1\td1\t1\n' });
    expect((await loadBeir(dir, { split: 'dev' })).documents).toHaveLength(3);
    const dir2 = await beirDir({ 'corpus/a.jsonl': corpus, 'corpus/b.jsonl': corpus, 'queries.jsonl': queries, 'qrels/dev.tsv': 'q1\td1\t1\n' });
    await expect(loadBeir(dir2, { split: 'dev' })).rejects.toThrow(/several corpus files \(a.jsonl, b.jsonl\)/);
    expect((await loadBeir(dir2, { split: 'dev', corpusFile: 'corpus/b.jsonl' })).documents).toHaveLength(3);
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['truncated JSON', { 'corpus.jsonl': `${corpus}\n{"_id": "d4", "te` }, /corpus\.jsonl:4: not valid JSON/],
    ['missing _id', { 'corpus.jsonl': '{"_id": "d1", "text": "x"}\n{"text": "y"}' }, /corpus\.jsonl:2: missing field "_id"/],
    ['missing text', { 'corpus.jsonl': '{"_id": "d1", "text": "x"}\n{"_id": "d2"}' }, /corpus\.jsonl:2: missing field "text"/],
    ['duplicate doc id', { 'corpus.jsonl': `${corpus}\n{"_id": "d2", "text": "again"}` }, /corpus\.jsonl:4: duplicate document id "d2"/],
    ['duplicate query id', { 'queries.jsonl': `${queries}\n{"_id": "q1", "text": "x"}` }, /queries\.jsonl:4: duplicate query id "q1"/],
    ['id with whitespace', { 'queries.jsonl': '{"_id": "q 1", "text": "x"}' }, /queries\.jsonl:1: _id "q 1" contains whitespace/],
    ['unknown doc in qrels', { 'qrels/test.tsv': 'query-id\tcorpus-id\tscore\nq1\td9\t1\n' }, /test\.tsv:2: document "d9" is not in/],
    ['unknown query in qrels', { 'qrels/test.tsv': 'q9\td1\t1\n' }, /test\.tsv:1: query "q9" is not in/],
    ['duplicate pair', { 'qrels/test.tsv': 'q1\td1\t1\nq1\td1\t2\n' }, /test\.tsv:2: duplicate judgment for query "q1", document "d1"/],
    ['non-integer grade', { 'qrels/test.tsv': 'q1\td1\t0.5\n' }, /test\.tsv:1: relevance grade "0.5" is not an integer/],
    ['bad column count', { 'qrels/test.tsv': 'q1 d1 1\n' }, /test\.tsv:1: expected 3 tab-separated fields/],
  ];
  for (const [name, override, message] of bad) {
    it(`rejects ${name} with file and line`, async () => {
      const dir = await beirDir({ 'corpus.jsonl': corpus, 'queries.jsonl': queries, 'qrels/test.tsv': qrels, ...override });
      const err = await loadBeir(dir, { split: 'test' }).catch((e: unknown) => e);
      // Several problems (an override can leave qrels naming what it removed) come as one InputProblems.
      expect(err instanceof InputError || err instanceof InputProblems).toBe(true);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('names the splits present when the split is missing', async () => {
    const dir = await beirDir({ 'corpus.jsonl': corpus, 'queries.jsonl': queries, 'qrels/test.tsv': qrels });
    const err = (await loadBeir(dir, { split: 'dev' }).catch((e: unknown) => e)) as InputError;
    expect(err.message).toMatch(/no qrels for split "dev"/);
    expect(err.hint).toBe('splits present: test');
  });
});

describeShared('loadBeir on NFCorpus', ['data/nfcorpus/qrels/test.tsv'], () => {
  it('has 3,633 documents, 323 test queries and 12,334 test judgments (SOURCE.md)', async () => {
    const es = await loadBeir(sharedPath('data', 'nfcorpus'), { split: 'test' });
    expect(es.documents).toHaveLength(3633);
    expect(es.queries).toHaveLength(323);
    let judgments = 0;
    let grade2 = 0;
    for (const m of es.qrels.values()) {
      judgments += m.size;
      for (const g of m.values()) if (g === 2) grade2 += 1;
    }
    expect(judgments).toBe(12334);
    expect(grade2).toBe(576); // SOURCE.md: score 1: 11,758, score 2: 576 (11,758 + 576 = 12,334)
    expect(es.documents.find((d) => d.id === 'MED-10')?.title).toBeTruthy();
  });
});
