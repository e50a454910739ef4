import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../harness/errors.js';
import { memoryLogger } from '../harness/log.js';
import { runCaptured } from '../harness/testing/cli.js';
import { tempDir } from '../harness/testing/temp.js';
import { loadBeir } from './beir.js';
import { LIMITS } from './limits.js';
import { loadEvalSet } from './load.js';
import { loadMemory } from './memory.js';
import { readStrataFile } from './strata.js';

// Inputs just past each limit, so the suite stays fast; the sizes that hung (a 100 MB query, 100,000 strata)
// meet the same checks at the same line, since the checks run as each line is read.

/** A memory eval set whose queries are `queries` (objects, one per line), over one document. */
function memorySet(queries: readonly Record<string, unknown>[]): string {
  const dir = tempDir('harness-limits');
  writeFileSync(join(dir, 'corpus.jsonl'), '{"id":"m1","text":"the dog is called Biscuit"}\n');
  writeFileSync(join(dir, 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
  return dir;
}

const query = (i: number, extra: Record<string, unknown> = {}) => ({ id: `q${i}`, text: 'dog name', stratum: 'exact', qrels: { m1: 1 }, ...extra });

async function failure(p: Promise<unknown>): Promise<InputError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputError);
  return err as InputError;
}

describe('query size', () => {
  it('a query past the limit is refused naming the file, the line and the limit', async () => {
    const dir = memorySet([query(1), query(2, { text: 'x'.repeat(LIMITS.queryChars + 1) }), query(3)]);
    const err = await failure(loadMemory(dir));
    expect(err.message).toBe(`${join(dir, 'queries.jsonl')}:2: query "q2": text is 65,537 characters, past the limit of 65,536`);
    expect([err.exitCode, err.line]).toEqual([2, 2]);
    expect(err.hint).toContain('docs/limits.md');
  });

  it('a query at the limit loads', async () => {
    const es = await loadMemory(memorySet([query(1, { text: 'x'.repeat(LIMITS.queryChars) })]));
    expect(es.queries[0]!.text).toHaveLength(LIMITS.queryChars);
  });

  it('BEIR queries meet the same limit, at their line', async () => {
    const dir = tempDir('harness-limits');
    mkdirSync(join(dir, 'qrels'));
    writeFileSync(join(dir, 'corpus.jsonl'), '{"_id":"d1","text":"a"}\n');
    writeFileSync(join(dir, 'queries.jsonl'), `{"_id":"q1","text":"a"}\n${JSON.stringify({ _id: 'q2', text: 'y'.repeat(70_000) })}\n`);
    writeFileSync(join(dir, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t1\n');
    const err = await failure(loadBeir(dir, { split: 'test' }));
    expect(err.message).toBe(`${join(dir, 'queries.jsonl')}:2: query "q2": text is 70,000 characters, past the limit of 65,536`);
  });

  it('the `ablate` command exits 2 on it, before any system runs', async () => {
    const dir = memorySet([query(1, { text: 'z'.repeat(100_000) })]);
    writeFileSync(
      join(dir, 'c.yaml'),
      'name: t\nevalset: { format: memory, path: . }\nmeasures: [nDCG@10]\noutput: out\ncache: cache\narms:\n  - { id: a, kind: bm25 }\n',
    );
    const r = await runCaptured(['ablate', '--config', 'c.yaml'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('queries.jsonl:1: query "q1": text is 100,000 characters, past the limit of 65,536');
  });
});

describe('formats read as one JSON document', () => {
  it('name the query past the limit by id (LongMemEval has no line to name)', async () => {
    const dir = tempDir('harness-limits');
    const file = join(dir, 'lme.json');
    const item = (id: string, question: string) => ({
      question_id: id,
      question_type: 'single-session-user',
      question,
      answer: 'a',
      question_date: '2023/06/01 (Thu) 00:58',
      haystack_dates: ['2023/05/25 (Thu) 20:21'],
      haystack_session_ids: ['answer_1'],
      haystack_sessions: [[{ role: 'user', content: 'Got a dog.', has_answer: true }]],
      answer_session_ids: ['answer_1'],
    });
    writeFileSync(file, JSON.stringify([item('q1', 'pets?'), item('q2', 'w '.repeat(40_000))]));
    const err = await failure(loadEvalSet({ format: 'longmemeval', path: file }, memoryLogger()));
    expect(err.message).toBe(`${file}: query "q2": text is 80,000 characters, past the limit of 65,536`);
    expect(err.exitCode).toBe(2);
  });
});

describe('document size', () => {
  it('a document past the limit is refused by id and line, its text never quoted (it may be sensitive)', async () => {
    const dir = memorySet([query(1)]);
    const secret = 's'.repeat(LIMITS.documentChars + 1);
    writeFileSync(join(dir, 'corpus.jsonl'), `{"id":"m1","text":"ok"}\n${JSON.stringify({ id: 'm2', text: secret, sensitive: true })}\n`);
    const err = await failure(loadMemory(dir));
    expect(err.message).toBe(`${join(dir, 'corpus.jsonl')}:2: document "m2": text is 8,388,609 characters, past the limit of 8,388,608`);
    expect(err.message).not.toContain('sss');
  });

  it('BEIR documents meet the same limit', async () => {
    const dir = tempDir('harness-limits');
    mkdirSync(join(dir, 'qrels'));
    writeFileSync(join(dir, 'corpus.jsonl'), `${JSON.stringify({ _id: 'd1', text: 'b'.repeat(LIMITS.documentChars + 3) })}\n`);
    writeFileSync(join(dir, 'queries.jsonl'), '{"_id":"q1","text":"a"}\n');
    writeFileSync(join(dir, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t1\n');
    const err = await failure(loadBeir(dir, { split: 'test' }));
    expect(err.message).toContain('corpus.jsonl:1: document "d1": text is 8,388,611 characters, past the limit of 8,388,608');
  });
});

describe('strata count', () => {
  it('a memory eval set with more strata than the limit names the line of the first one past it', async () => {
    const queries = Array.from({ length: LIMITS.strata + 5 }, (_, i) => query(i, { stratum: `s${i}` }));
    const dir = memorySet(queries);
    const err = await failure(loadMemory(dir));
    expect(err.message).toBe(`${join(dir, 'queries.jsonl')}:1001: stratum "s1000" is distinct stratum number 1001, past the limit of 1,000 strata`);
  });

  it('as many strata as the limit load', async () => {
    const es = await loadMemory(memorySet(Array.from({ length: LIMITS.strata }, (_, i) => query(i, { stratum: `s${i}` }))));
    expect(new Set(es.queries.map((q) => q.stratum)).size).toBe(LIMITS.strata);
  });

  it('a strata file past the limit is refused at its line; one that mixes past it with the set is refused by query', async () => {
    const dir = tempDir('harness-limits');
    const ids = Array.from({ length: LIMITS.strata + 2 }, (_, i) => `q${i}`);
    writeFileSync(join(dir, 'strata.tsv'), `# a comment\n${ids.map((id) => `${id}\t${id}`).join('\n')}\n`);
    const err = await failure(readStrataFile(join(dir, 'strata.tsv'), new Set(ids)));
    expect(err.message).toBe(`${join(dir, 'strata.tsv')}:1002: stratum "q1000" is distinct stratum number 1001, past the limit of 1,000 strata`);

    // 600 strata of the set's own, 500 new ones from the file: each within the limit, together past it.
    const own = memorySet(Array.from({ length: 1100 }, (_, i) => query(i, { stratum: `own${i % 600}` })));
    writeFileSync(join(own, 'strata.tsv'), `${Array.from({ length: 500 }, (_, i) => `q${i + 600}\tfile${i}`).join('\n')}\n`);
    const mixed = await failure(loadEvalSet({ format: 'memory', path: own, strata: join(own, 'strata.tsv') }, memoryLogger()));
    expect(mixed.message).toMatch(/^.*: stratum "file\d+" is distinct stratum number 1001, past the limit of 1,000 strata$/);
    expect(mixed.exitCode).toBe(2);
  });

  it('`compare --strata` past the limit exits 2 at once naming the file, line and limit (100,000 strata printed nothing in 300 s)', async () => {
    const dir = tempDir('harness-limits');
    const n = LIMITS.strata + 1;
    const ids = Array.from({ length: n }, (_, i) => `q${i}`);
    writeFileSync(join(dir, 'qrels.trec'), ids.map((q) => `${q} 0 d1 1\n`).join(''));
    writeFileSync(join(dir, 'a.trec'), ids.map((q) => `${q} Q0 d1 1 1 a\n`).join(''));
    writeFileSync(join(dir, 'b.trec'), ids.map((q) => `${q} Q0 d2 1 1 b\n`).join(''));
    writeFileSync(join(dir, 'strata.tsv'), ids.map((q) => `${q}\tstratum-of-${q}\n`).join(''));
    const t0 = performance.now();
    const r = await runCaptured(['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.trec', '--strata', 'strata.tsv'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`strata.tsv:${n}: stratum "stratum-of-q1000" is distinct stratum number 1001, past the limit of 1,000 strata`);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });
});
