import { describe, expect, it } from 'vitest';
import { InputError, InputProblems } from '../harness/errors.js';
import { memoryLogger } from '../harness/log.js';
import { tempFolder } from '../harness/testing/files.js';
import { loadBeir } from './beir.js';
import { readJsonFile } from './lines.js';
import { loadEvalSetChecked } from './load.js';
import { loadMemory } from './memory.js';
import { formatInspect } from './inspect.js';

const BOM = '\uFEFF';
const corpus = '{"id": "m1", "text": "green tea"}\n{"id": "m2", "text": "black coffee"}\n';
const caught = <T>(p: Promise<T>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('loaders report every problem at once', () => {
  it('eight mistakes in two files: one InputProblems listing each as file:line: message, in file order', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': [
        '{"id": "m1", "text": "green tea", "date": "yesterday"}',
        '{"id": "m2", "text": "black coffee", "importnace": 1}',
        '{"id": "m1", "text": "again"}',
        '{"id": "m3", "text": "x", "importance": 2}',
      ].join('\n'),
      'queries.jsonl': [
        '{"id": "q1", "text": "tea", "stratum": "exact", "qrels": {"m9": 1}}',
        '{"id": "q2", "text": "tea", "qrels": {"m1": 1}}',
        '{"id": "q3", "text": "tea", "stratum": "exact", "qrels": {"m1": 5}',
        '{"id": "q4", "text": "tea", "stratum": "exact", "qrels": {"m1": 5}}',
      ].join('\n'),
    });
    const err = await caught(loadMemory(dir));
    expect(err).toBeInstanceOf(InputProblems);
    const p = err as InputProblems;
    expect(p.exitCode).toBe(2);
    expect(p.truncated).toBe(false);
    const rel = (m: string) => m.replace(`${dir}/`, '');
    expect(p.problems.map((e) => rel(e.message))).toEqual([
      'corpus.jsonl:1: memory "m1": date "yesterday" is not ISO 8601 (2024-03-05 or 2024-03-05T14:30:00Z)',
      'corpus.jsonl:2: unknown field "importnace"',
      'corpus.jsonl:3: duplicate memory id "m1"',
      'corpus.jsonl:4: memory "m3": importance must be a number in [0, 1], got 2',
      'queries.jsonl:1: query "q1": qrels doc id "m9" is not in the corpus',
      'queries.jsonl:2: missing field "stratum"',
      // Position 66 is the end of line 3 (66 characters): the object is never closed.
      "queries.jsonl:3: not valid JSON (Expected ',' or '}' after property value in JSON at position 66)",
      'queries.jsonl:4: query "q4": grade of "m1" must be an integer 0..3, got 5',
    ]);
    expect(rel(p.message).split('\n')[0]).toBe('8 problems in the input:');
    expect(p.hint).toContain('known fields: id, text, title');
  });

  it('stops at 50 problems and says there may be more', async () => {
    const bad = Array.from({ length: 60 }, (_, i) => `{"id": "m${i}", "text": "x", "date": "nope"}`).join('\n');
    const err = await caught(loadMemory(await tempFolder('robust', { 'corpus.jsonl': bad, 'queries.jsonl': '' })));
    expect(err).toBeInstanceOf(InputProblems);
    expect((err as InputProblems).problems).toHaveLength(50);
    expect((err as InputProblems).message.split('\n')[0]).toBe('50+ problems in the input (stopped after the first 50):');
    expect((err as InputProblems).problems[49]!.line).toBe(50);
  });
  it('BEIR and strata files too', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': '{"_id": "d1", "text": "tea"}\n{"_id": "d1", "text": "again"}\n{"text": "no id"}\n',
      'queries.jsonl': '{"_id": "q1", "text": "tea"}\n',
      'qrels/test.tsv': 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td9\t1\nq2\td1\tx\n',
    });
    const err = (await caught(loadBeir(dir, { split: 'test' }))) as InputProblems;
    expect(err).toBeInstanceOf(InputProblems);
    expect(err.problems.map((e) => e.message.replace(`${dir}/`, ''))).toEqual([
      'corpus.jsonl:2: duplicate document id "d1"',
      'corpus.jsonl:3: missing field "_id"',
      `qrels/test.tsv:3: document "d9" is not in ${dir}/corpus.jsonl`,
      'qrels/test.tsv:4: relevance grade "x" is not an integer',
    ]);
    const strata = await tempFolder('robust', {
      'corpus.jsonl': corpus,
      'queries.jsonl': '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m1": 1}}\n',
      's.tsv': 'q9\tx\nq1\t\nq1\ta\tb\n',
    });
    const e2 = (await caught(loadEvalSetChecked({ format: 'memory', path: strata, strata: `${strata}/s.tsv` }, memoryLogger()))) as InputProblems;
    expect(e2.problems.map((e) => e.message.replace(`${strata}/`, ''))).toEqual([
      's.tsv:1: query "q9" is not in the eval set',
      's.tsv:2: empty stratum for query "q1"',
      's.tsv:3: expected "queryId<TAB>stratum", got 3 tab-separated fields',
    ]);
  });
});

describe('a UTF-8 byte-order mark is not part of the first id', () => {
  it('memory JSONL, memory CSV and a strata file', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': `${BOM}${corpus}`,
      'queries.jsonl': `${BOM}{"id": "q1", "text": "tea", "stratum": "exact", "qrels": {"m1": 1}}\n`,
      'strata.tsv': `${BOM}q1\tparaphrase\n`,
    });
    const { evalSet } = await loadEvalSetChecked({ format: 'memory', path: dir, strata: `${dir}/strata.tsv` }, memoryLogger());
    expect(evalSet.documents[0]!.id).toBe('m1');
    expect(evalSet.queries).toEqual([{ id: 'q1', text: 'tea', stratum: 'paraphrase' }]);
    const csv = await tempFolder('robust', {
      'corpus.csv': `${BOM}id,text\nm1,tea\n`,
      'queries.jsonl': '{"id": "q1", "text": "tea", "stratum": "exact", "qrels": {"m1": 1}}\n',
    });
    expect((await loadMemory(csv)).documents[0]!.id).toBe('m1');
  });

  it('BEIR queries, corpus and a qrels TSV whose header starts with one; a whole JSON file', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': `${BOM}{"_id": "d1", "text": "tea"}\n`,
      'queries.jsonl': `${BOM}{"_id": "q1", "text": "tea"}\n`,
      'qrels/test.tsv': `${BOM}query-id\tcorpus-id\tscore\nq1\td1\t1\n`,
      'one.json': `${BOM}{"a": 1}`,
    });
    const es = await loadBeir(dir, { split: 'test' });
    expect(es.queries.map((q) => q.id)).toEqual(['q1']);
    expect(es.qrels.get('q1')).toEqual(new Map([['d1', 1]]));
    expect(await readJsonFile(`${dir}/one.json`)).toEqual({ a: 1 });
  });
});

describe('a query with "qrels": {} has no judgment', () => {
  it('is dropped and counted, and inspect reports it', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': corpus,
      'queries.jsonl': [
        '{"id": "q1", "text": "tea", "stratum": "exact", "qrels": {"m1": 1}}',
        '{"id": "q2", "text": "coffee", "stratum": "exact", "qrels": {}}',
        '{"id": "q3", "text": "milk", "stratum": "exact", "qrels": {"m2": 0}}',
      ].join('\n'),
    });
    const { evalSet, validation } = await loadEvalSetChecked({ format: 'memory', path: dir }, memoryLogger());
    // q3 is judged (grade 0, judged not relevant): kept; q2 has no judgment at all: dropped.
    expect(evalSet.queries.map((q) => q.id)).toEqual(['q1', 'q3']);
    expect(evalSet.notes).toContain('1 query dropped: no judgments ("qrels": {}): q2');
    expect(formatInspect(evalSet, validation)).toContain('  - 1 query dropped: no judgments ("qrels": {}): q2');
  });
});

describe('no value of a sensitive memory appears in an error', () => {
  const secret = "Alex's US passport (no. 514-22-9087) expires 2031";
  it('a sensitive memory whose text is not a string is named by id and line only', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': `${corpus}{"id": "m3", "text": ["${secret}"], "sensitive": true, "date": "${secret}"}\n`,
      'queries.jsonl': '',
    });
    const err = (await caught(loadMemory(dir))) as InputProblems;
    expect(err).toBeInstanceOf(InputProblems);
    expect(err.message).not.toContain('passport');
    expect(err.message).not.toContain('514');
    expect(err.problems.map((p) => p.message.replace(`${dir}/`, ''))).toEqual([
      'corpus.jsonl:3: memory "m3": field "text" must be a string, got a list (value not shown: sensitive memory)',
      'corpus.jsonl:3: memory "m3": date a string (value not shown: sensitive memory) is not ISO 8601 (2024-03-05 or 2024-03-05T14:30:00Z)',
    ]);
  });

  it('a JSON syntax error quotes no text of the line, in any file', async () => {
    const dir = await tempFolder('robust', {
      'corpus.jsonl': `${corpus}{"id": "m3", "text": "${secret}" x, "sensitive": true}\n{"id": "m4", "text": "${secret}\n`,
      'queries.jsonl': `{"id": "q1", "text": ${secret}}\n`,
    });
    const err = (await caught(loadMemory(dir))) as InputProblems;
    expect(err).toBeInstanceOf(InputProblems);
    expect(err.problems).toHaveLength(3);
    for (const p of err.problems) {
      expect(p).toBeInstanceOf(InputError);
      expect(p.message).not.toContain('passport');
      expect(p.message).toMatch(/:\d: not valid JSON \(/);
    }
    const whole = await tempFolder('robust', { 'f.json': `{"a": ${secret}}` });
    const e2 = (await caught(readJsonFile(`${whole}/f.json`))) as InputError;
    expect(e2.message).toBe(`${whole}/f.json:1: not valid JSON (unexpected character)`);
  });
});
