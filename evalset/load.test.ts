import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, InputError, UsageError } from '../harness/errors.js';
import { memoryLogger } from '../harness/log.js';
import { describeShared, sharedPath } from '../harness/testing/shared.js';
import { corpusFingerprint, evalSetFingerprint } from './fingerprint.js';
import { evalSetFormats, loadEvalSet, loadEvalSetChecked } from './load.js';
import type { EvalSet } from './types.js';
import { validateEvalSet } from './validate.js';
import { tempFolder } from '../harness/testing/files.js';

const folder = (files: Record<string, string>): Promise<string> => tempFolder('load', files);

const beirFiles = {
  'corpus.jsonl': '{"_id": "d1", "title": "T", "text": "a"}\n{"_id": "d2", "text": "b"}\n',
  'queries.jsonl': '{"_id": "q1", "text": "x"}\n{"_id": "q2", "text": "y"}\n',
  'qrels/test.tsv': 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t0\n',
};

function es(over: Partial<EvalSet> = {}): EvalSet {
  return {
    name: 't',
    documents: [
      { id: 'd1', text: 'a' },
      { id: 'd2', text: 'b' },
    ],
    queries: [{ id: 'q1', text: 'x', stratum: 's', scope: 'c1' }],
    qrels: new Map([['q1', new Map([['d1', 1]])]]),
    scopes: new Map([['c1', ['d1', 'd2']]]),
    ...over,
  };
}

describe('loadEvalSet', () => {
  it('loads a BEIR folder with a strata file and notes queries without relevant documents', async () => {
    const dir = await folder({ ...beirFiles, 'strata.tsv': '# comment\nq2\tparaphrase\n' });
    const log = memoryLogger();
    const set = await loadEvalSet({ format: 'beir', path: dir, strata: join(dir, 'strata.tsv') }, log);
    expect(set.queries.map((q) => [q.id, q.stratum])).toEqual([
      ['q1', 'all'],
      ['q2', 'paraphrase'],
    ]);
    expect(set.notes).toContain('1 queries with no relevant document: q2');
    expect(log.lines.some((l) => l.includes('2 documents, 2 queries'))).toBe(true);
  });

  it('rejects a strata file naming an unknown query, with its line', async () => {
    const dir = await folder({ ...beirFiles, 'strata.tsv': 'q1\texact\nq9\texact\n' });
    await expect(loadEvalSet({ format: 'beir', path: dir, strata: join(dir, 'strata.tsv') }, memoryLogger())).rejects.toThrow(
      /strata\.tsv:2: query "q9" is not in the eval set/,
    );
  });

  it('rejects unknown formats, bad options and splits where the format has none', async () => {
    await expect(loadEvalSet({ format: 'bier', path: '.' }, memoryLogger())).rejects.toThrow(/unknown eval-set format "bier"; did you mean "beir"\?/);
    const err = await loadEvalSet({ format: 'locomo', path: 'x.json', options: { unit: 'turns' } }, memoryLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems[0]).toMatch(/^options\.unit: /);
    const err2 = await loadEvalSet({ format: 'locomo', path: 'x.json', options: { untis: 'turn' } }, memoryLogger()).catch((e: unknown) => e);
    expect((err2 as ConfigError).problems[0]).toMatch(/untis/);
    await expect(loadEvalSet({ format: 'memory', path: '.', split: 'dev' }, memoryLogger())).rejects.toBeInstanceOf(UsageError);
  });

  it('a truncated LoCoMo file is an InputError with a line, not a smaller eval set', async () => {
    const dir = await folder({ 'l.json': '[{"sample_id": "c",\n "qa": [' });
    const err = await loadEvalSet({ format: 'locomo', path: join(dir, 'l.json') }, memoryLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/l\.json:2: not valid JSON/);
  });

  it('every format declares a strict options schema', () => {
    for (const [name, f] of Object.entries(evalSetFormats)) {
      expect(f.options.safeParse({ noSuchOption: 1 }).success, name).toBe(false);
      expect(f.options.safeParse({}).success, name).toBe(true);
    }
  });

  it('loadEvalSetChecked returns problems that loadEvalSet throws', async () => {
    const dir = await folder({
      'corpus.jsonl': '{"id": "m1", "text": "x"}\n',
      'queries.jsonl': '{"id": "q1", "text": " ", "stratum": "s", "qrels": {"m1": 1}}\n',
    });
    const { validation } = await loadEvalSetChecked({ format: 'memory', path: dir }, memoryLogger());
    expect(validation.problems).toEqual(['1 queries with empty text: q1']);
    await expect(loadEvalSet({ format: 'memory', path: dir }, memoryLogger())).rejects.toThrow(/eval set is inconsistent/);
  });
});

describe('validateEvalSet', () => {
  it('passes a consistent set', () => {
    expect(validateEvalSet(es())).toEqual({ problems: [], notes: [] });
  });
  it('names every kind of inconsistency', () => {
    const v = validateEvalSet(
      es({
        documents: [
          { id: 'd1', text: 'a' },
          { id: 'd1', text: 'b' },
          { id: 'd 3', text: '' },
        ],
        queries: [
          { id: 'q1', text: 'x', stratum: 's', scope: 'nope' },
          { id: 'q2', text: 'y', stratum: 's', scope: 'c1' },
        ],
        qrels: new Map([
          ['q1', new Map([['d9', 1]])],
          ['q2', new Map([['d 3', 1]])],
          ['q7', new Map([['d1', 1]])],
        ]),
        scopes: new Map([['c1', ['d1', 'd4']]]),
        units: new Map([['session', new Map([['d1', 's1']])]]),
      }),
    );
    expect(v.problems).toEqual([
      '1 duplicate document ids: d1',
      '1 document ids empty or with whitespace: "d 3"',
      '1 queries whose scope names no scope: q1 -> nope',
      "1 relevant documents outside their query's scope: q2 -> d 3",
      '1 qrels queries not in the queries: q7',
      '1 qrels documents not in the corpus: q1 -> d9',
      '1 scope members not in the corpus: c1 -> d4',
      '1 documents with no "session" unit: d 3',
    ]);
    expect(v.notes).toEqual(['1 documents with neither text nor title: d 3']);
  });
});

describe('fingerprints', () => {
  it('change with content and ignore name and notes', () => {
    const base = evalSetFingerprint(es());
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(evalSetFingerprint(es({ name: 'other', notes: ['n'] }))).toBe(base);
    expect(evalSetFingerprint(es({ qrels: new Map([['q1', new Map([['d1', 2]])]]) }))).not.toBe(base);
    expect(evalSetFingerprint(es({ scopes: new Map([['c1', ['d1']]]) }))).not.toBe(base);
    expect(evalSetFingerprint(es({ queries: [{ id: 'q1', text: 'x', stratum: 't', scope: 'c1' }] }))).not.toBe(base);
    // qrels insertion order is not content
    const two = new Map([
      [
        'q1',
        new Map([
          ['d1', 1],
          ['d2', 0],
        ]),
      ],
    ]);
    const owt = new Map([
      [
        'q1',
        new Map([
          ['d2', 0],
          ['d1', 1],
        ]),
      ],
    ]);
    expect(evalSetFingerprint(es({ qrels: two }))).toBe(evalSetFingerprint(es({ qrels: owt })));
    expect(corpusFingerprint(es().documents)).not.toBe(
      corpusFingerprint([
        { id: 'd1', text: 'a', sensitive: true },
        { id: 'd2', text: 'b' },
      ]),
    );
  });
});

describeShared('loadEvalSet on the shared sets', ['data/nfcorpus/qrels/test.tsv', 'data/locomo/locomo10.json'], () => {
  it('NFCorpus test through the registry validates clean', async () => {
    const { evalSet, validation } = await loadEvalSetChecked({ format: 'beir', path: sharedPath('data', 'nfcorpus') }, memoryLogger());
    expect(validation.problems).toEqual([]);
    expect(evalSet.queries).toHaveLength(323);
  });
  it('LoCoMo turns through the registry validate clean', async () => {
    const { evalSet, validation } = await loadEvalSetChecked({ format: 'locomo', path: sharedPath('data', 'locomo', 'locomo10.json') }, memoryLogger());
    expect(validation.problems).toEqual([]);
    expect(evalSet.queries).toHaveLength(1536);
  });
});
