import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../harness/testing/temp.js';
import {
  applyStrataFile,
  corpusFingerprint,
  evalSetFingerprint,
  formatTrecQrels,
  formatTrecRun,
  loadEvalSet,
  readStrataFile,
  readTrecQrels,
  readTrecRun,
  validateEvalSet,
  writeTrecQrels,
  writeTrecRun,
  type EvalSet,
  type EvalSetLike,
} from './index.js';
import { toQrels, toRun } from './input.js';

const toMaps = <V>(o: Record<string, Record<string, V>>) => new Map(Object.entries(o).map(([k, v]) => [k, new Map(Object.entries(v))]));

const DOCUMENTS = [
  { id: 't1', text: 'Alex adopted a dog named Biscuit.' },
  { id: 't2', text: 'Biscuit is a beagle.' },
  { id: 't3', text: 'Rent is due on the first.', sensitive: true },
];
const QUERIES = [
  { id: 'q1', text: "What is Alex's dog called?", stratum: 'exact', scope: 'c1' },
  { id: 'q2', text: 'When is rent due?', stratum: 'paraphrase' },
];
const QRELS = { q1: { t1: 2, t2: 1 }, q2: { t3: 1 } };
const SCOPES = { c1: ['t1', 't2'] };
const UNITS = { session: { t1: 's1', t2: 's1', t3: 's2' } };
const PLAIN: EvalSetLike = { name: 'tiny', documents: DOCUMENTS, queries: QUERIES, qrels: QRELS, scopes: SCOPES, units: UNITS };
const MAPS: EvalSet = {
  name: 'tiny',
  documents: DOCUMENTS,
  queries: QUERIES,
  qrels: toMaps(QRELS),
  scopes: new Map(Object.entries(SCOPES)),
  units: toMaps(UNITS),
};
const RUN = { q1: { t2: 0.9, t1: 0.5 }, q2: { t3: 1.25, t1: 0.25 } };

describe('harness/evalset (the Library): Maps or plain objects', () => {
  const dir = tempDir('harness-evalset-public');

  it('validateEvalSet and evalSetFingerprint give the same answer for both forms', () => {
    expect(validateEvalSet(PLAIN)).toEqual(validateEvalSet(MAPS));
    expect(validateEvalSet(PLAIN)).toEqual({ problems: [], notes: [] });
    expect(evalSetFingerprint(PLAIN)).toBe(evalSetFingerprint(MAPS));
    expect(corpusFingerprint(DOCUMENTS)).toMatch(/^[0-9a-f]{64}$/);
    // A real problem is found in either form.
    const bad = { ...PLAIN, qrels: { ...QRELS, q2: { t3: 1, t9: 1 } } };
    expect(validateEvalSet(bad).problems).toEqual(['1 qrels documents not in the corpus: q2 -> t9']);
    expect(validateEvalSet({ ...MAPS, qrels: toMaps(bad.qrels) })).toEqual(validateEvalSet(bad));
  });

  it('the TREC writers give the same text for both forms, and it reads back', async () => {
    expect(formatTrecRun(RUN, 'bm25')).toBe(formatTrecRun(toMaps(RUN), 'bm25'));
    expect(formatTrecRun(RUN, 'bm25')).toBe('q1 Q0 t2 1 0.9 bm25\nq1 Q0 t1 2 0.5 bm25\nq2 Q0 t3 1 1.25 bm25\nq2 Q0 t1 2 0.25 bm25\n');
    expect(formatTrecQrels(QRELS)).toBe(formatTrecQrels(toMaps(QRELS)));
    await writeTrecRun(join(dir, 'run.trec'), RUN, 'bm25');
    await writeTrecQrels(join(dir, 'qrels.trec'), QRELS);
    expect((await readTrecRun(join(dir, 'run.trec'))).run).toEqual(toMaps(RUN));
    expect(await readTrecQrels(join(dir, 'qrels.trec'))).toEqual(toMaps(QRELS));
  });

  it('applyStrataFile takes the plain form and returns Maps; readStrataFile takes an array of ids', async () => {
    const file = join(dir, 'strata.tsv');
    await writeFile(file, 'q2\ttemporal\n');
    const es = await applyStrataFile(PLAIN, file);
    expect(es.queries.map((q) => q.stratum)).toEqual(['exact', 'temporal']);
    expect(es.qrels).toEqual(MAPS.qrels);
    expect(es.scopes).toEqual(MAPS.scopes);
    expect(es.units).toEqual(MAPS.units);
    expect(await readStrataFile(file, ['q1', 'q2'])).toEqual(await readStrataFile(file, new Set(['q1', 'q2'])));
  });

  it('loadEvalSet needs no Logger', async () => {
    const set = join(dir, 'memory-set');
    await mkdir(set);
    await writeFile(join(set, 'corpus.jsonl'), DOCUMENTS.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n'));
    await writeFile(join(set, 'queries.jsonl'), `${JSON.stringify({ id: 'q1', text: 'dog?', stratum: 'exact', qrels: { t1: 1 } })}\n`);
    const es = await loadEvalSet({ format: 'memory', path: set });
    expect(es.documents.length).toBe(3);
    expect(es.qrels).toEqual(toMaps({ q1: { t1: 1 } }));
  });

  it('a valid Map is used as it is, not copied', () => {
    const qrels = toMaps(QRELS);
    const run = toMaps(RUN);
    expect(toQrels('f', 'qrels', qrels)).toBe(qrels);
    expect(toRun('f', 'run', run)).toBe(run);
    expect(validateEvalSet(MAPS)).toEqual({ problems: [], notes: [] });
  });
});

describe('harness/evalset (the Library): a wrong shape is a TypeError naming the argument', () => {
  // biome-ignore lint/suspicious/noExplicitAny: wrong types on purpose
  const any = (v: unknown) => v as any;
  const cases: [string, () => unknown, RegExp][] = [
    ['an eval set that is a Map', () => validateEvalSet(any(new Map())), /^validateEvalSet: evalSet must be an EvalSet object .*got a Map$/],
    [
      'documents not an array',
      () => validateEvalSet(any({ ...PLAIN, documents: { t1: 'x' } })),
      /evalSet.documents must be an array of Documents.*got an object/,
    ],
    [
      'a document without text',
      () => evalSetFingerprint(any({ ...PLAIN, documents: [{ id: 't1' }] })),
      /evalSet.documents\[0\].text must be a string; got undefined/,
    ],
    [
      'a query without a stratum',
      () => validateEvalSet(any({ ...PLAIN, queries: [{ id: 'q1', text: 'x' }] })),
      /evalSet.queries\[0\].stratum must be a string/,
    ],
    [
      'qrels an array',
      () => validateEvalSet(any({ ...PLAIN, qrels: [] })),
      /validateEvalSet: evalSet.qrels must be a Map or a plain object of queryId -> \{ docId: grade \}/,
    ],
    [
      'a scope not a list',
      () => validateEvalSet(any({ ...PLAIN, scopes: { c1: 't1' } })),
      /evalSet.scopes\["c1"\] must be an array of document ids; got a string/,
    ],
    [
      'a unit map entry not a string',
      () => validateEvalSet(any({ ...PLAIN, units: { session: { t1: 1 } } })),
      /evalSet.units\["session"\]\["t1"\] is the number 1/,
    ],
    [
      'a run score NaN',
      () => formatTrecRun(any({ q1: { t1: Number.NaN } }), 'r'),
      /formatTrecRun: run\["q1"\]\["t1"\] is the number NaN; a score must be a finite number/,
    ],
    ['a run a string', () => formatTrecRun(any('q1 Q0 t1 1 1 r'), 'r'), /formatTrecRun: run must be a Map or a plain object .*got a string/],
    ['a grade a string', () => formatTrecQrels(any({ q1: { t1: '1' } })), /formatTrecQrels: qrels\["q1"\]\["t1"\] is a string; a grade must be an integer/],
    ['a corpus not an array', () => corpusFingerprint(any(null)), /corpusFingerprint: docs must be an array of Documents.*got null/],
  ];
  for (const [name, call, message] of cases) {
    it(name, () => {
      expect(call).toThrow(TypeError);
      expect(call).toThrow(message);
    });
  }

  it('no message quotes a Document text (a Sensitive Document may be the one at fault)', () => {
    const secret = 'the PIN is 4711';
    const call = () =>
      validateEvalSet(
        any({
          ...PLAIN,
          documents: [
            { id: 't1', text: 42, title: secret },
            { id: 't2', text: secret, title: 7 },
          ],
        }),
      );
    expect(call).toThrow(/documents\[0\].text must be a string; got the number 42/);
    expect(call).not.toThrow(/4711/);
  });

  it('the async functions reject with the TypeError', async () => {
    await expect(loadEvalSet(any('data/scifact'))).rejects.toThrow(/^loadEvalSet: spec must be an object \{ format, path, .*got a string$/);
    await expect(loadEvalSet(any({ format: 'beir' }))).rejects.toThrow(/loadEvalSet: spec.path must be a string; got undefined/);
    await expect(writeTrecRun('/nonexistent/x', any([]), 'r')).rejects.toThrow(TypeError);
    await expect(writeTrecQrels('/nonexistent/x', any({ q1: { d1: 0.5 } }))).rejects.toThrow(/a grade must be an integer/);
    await expect(applyStrataFile(any(undefined), 'x')).rejects.toThrow(/applyStrataFile: evalSet must be an EvalSet object/);
    await expect(readStrataFile('x', any(new Map()))).rejects.toThrow(/readStrataFile: knownQueryIds must be a Set or an array of query ids; got a Map/);
  });
});
