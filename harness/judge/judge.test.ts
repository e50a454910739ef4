import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import { majorityGrade, parseGrade } from './grade.js';
import { depthPool } from './pool.js';
import { readJudgments } from './store.js';

const KEY = 'sk-judge-loopback-secret-42';

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The passage of a judge prompt (the line after `Passage: ` up to the instructions). */
function passageOf(req: LoopbackRequest): string {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  return /Passage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)![1]!;
}

/** A judge that grades by the `gN` tag in the passage and cannot make up its mind about `ambiguous` ones. */
const reasks: (string | undefined)[] = [];
function fakeJudge(req: LoopbackRequest) {
  const p = passageOf(req);
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  const content = p.includes('ambiguous') ? 'It depends on what the user meant.' : `##final score: ${/g(\d)/.exec(p)![1]}`;
  reasks.push(/Your previous reply was:\n(.*)\n/.exec(prompt)?.[1]);
  return chatCompletion(content, { prompt: 100, completion: 5 });
}

const corpus = [
  { id: 'd1', text: 'Alex runs the Green Lake loop g3' },
  { id: 'd2', text: 'Alex bought oat milk g2' },
  { id: 'd3', text: 'Rent is due on the first g1' },
  { id: 'd4', text: 'Therapy notes about anxiety g2', sensitive: true },
  { id: 'd5', text: 'ambiguous memory g0' },
  { id: 'd6', text: 'Dog named Biscuit g0' },
];
const queries = [
  { id: 'q1', text: 'Where does Alex run?', stratum: 'exact', qrels: { d1: 3 } },
  { id: 'q2', text: 'What did Alex buy?', stratum: 'multi-hop', qrels: { d2: 2 } },
];
// depth 2: A q1 {d1, d2}, B q1 {d2, d4} -> {d1, d2, d4}; A q2 {d4, d5}, B q2 {d5, d1} -> {d4, d5, d1}: 6 pairs.
const runA = 'q1 Q0 d1 1 3 A\nq1 Q0 d2 2 2 A\nq1 Q0 d3 3 1 A\nq2 Q0 d4 1 0.9 A\nq2 Q0 d5 2 0.8 A\nq2 Q0 d6 3 0.7 A\n';
const runB = 'q1 Q0 d2 1 5 B\nq1 Q0 d4 2 4 B\nq1 Q0 d6 3 3 B\nq2 Q0 d5 1 1 B\nq2 Q0 d1 2 0.5 B\nq2 Q0 d3 3 0.4 B\n';

async function fixture(): Promise<string> {
  return tempFolder('judge', {
    'es/corpus.jsonl': corpus.map((d) => JSON.stringify(d)).join('\n'),
    'es/queries.jsonl': queries.map((q) => JSON.stringify(q)).join('\n'),
    'a.trec': runA,
    'b.trec': runB,
  });
}

function judgeArgs(extra: string[] = []): string[] {
  return [
    'judge',
    '--runs',
    'a.trec',
    'b.trec',
    '--evalset',
    'es',
    '--out',
    'judgments',
    '--cache',
    'cache',
    '--depth',
    '2',
    '--model',
    'judge-m',
    '--base-url',
    `${server!.url}/v1`,
    ...extra,
  ];
}

describe('depthPool', () => {
  it('unions the top-depth documents of every run per query, deduplicated, in trec_eval rank order', () => {
    const run = (rows: [string, string, number][]) => {
      const m = new Map<string, Map<string, number>>();
      for (const [q, d, s] of rows) m.set(q, (m.get(q) ?? new Map()).set(d, s));
      return m;
    };
    // Ties by docId descending: in A's q1, x (score 1) ranks before a (score 1).
    const a = run([
      ['q1', 'a', 1],
      ['q1', 'x', 1],
      ['q1', 'b', 0.5],
      ['q2', 'c', 2],
    ]);
    const b = run([
      ['q1', 'b', 9],
      ['q1', 'a', 8],
      ['q1', 'z', 1],
      ['q3', 'w', 1],
    ]);
    const pool = depthPool(
      new Map([
        ['A', a],
        ['B', b],
      ]),
      2,
      ['q1', 'q2'],
    );
    expect(pool.pairs.map((p) => `${p.queryId}:${p.docId}`)).toEqual(['q1:x', 'q1:a', 'q1:b', 'q2:c']);
    expect([...pool.perQuery]).toEqual([
      ['q1', 3],
      ['q2', 1],
    ]);
  });
});

describe('parseGrade and majorityGrade', () => {
  it('reads the UMBRELA answer line or a bare digit, and nothing else', () => {
    expect(parseGrade('M: 2, T: 1\n##final score: 2')).toBe(2);
    expect(parseGrade('## Final Score : 3')).toBe(3);
    expect(parseGrade('1')).toBe(1);
    expect(parseGrade('##final score: 4')).toBeUndefined();
    expect(parseGrade('##final score: 1\n##final score: 3')).toBeUndefined();
    expect(parseGrade('I think it is relevant')).toBeUndefined();
    expect(parseGrade('')).toBeUndefined();
  });
  it('takes the most frequent grade, ties to the lowest tied grade', () => {
    expect(majorityGrade([2, 3, 2])).toBe(2);
    expect(majorityGrade([3, 1])).toBe(1);
    expect(majorityGrade([3, 3, 1, 1, 2])).toBe(1);
    expect(majorityGrade([])).toBeUndefined();
  });
});

describe('harness judge through the openai SDK against a loopback server', () => {
  it('pools two runs, sends only the holes, counts an unparsable answer and a skipped sensitive memory, and a rerun sends nothing', async () => {
    reasks.length = 0;
    server = await startLoopback(fakeJudge);
    const dir = await fixture();
    const r = await runCaptured(judgeArgs(), dir, { OPENAI_API_KEY: KEY });
    expect(r.code, r.out + r.log.join('\n')).toBe(0);
    expect(r.out).toContain('pool: 6 pairs, 2 queries, 2 system(s), depth 2');
    const j = await readJudgments(join(dir, 'judgments'));
    // Gold grades q1:d1 (d2 is gold only for q2, which does not pool it). Sent: q1:d2, q2:d5, q2:d1; q1:d4 and
    // q2:d4 are sensitive and the server is not declared local.
    const byPair = Object.fromEntries(j.records.map((x) => [`${x.queryId}:${x.docId}`, [x.status, x.grade]]));
    expect(byPair).toEqual({
      'q1:d2': ['judged', 2],
      'q1:d4': ['skipped-sensitive', null],
      'q2:d4': ['skipped-sensitive', null],
      'q2:d5': ['parse-failure', null],
      'q2:d1': ['judged', 3],
    });
    // Three pairs sent; the unparsable one three times (1 + parseRetries 2), re-asked with its reply quoted.
    expect(server.requests).toHaveLength(2 + 3);
    expect(reasks.filter((x) => x !== undefined)).toEqual(['It depends on what the user meant.', 'It depends on what the user meant.']);
    expect(server.requests.every((q) => q.path === '/v1/chat/completions')).toBe(true);
    expect(server.requests.some((q) => q.body.includes('anxiety'))).toBe(false);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const m = j.manifest;
    expect(m.counts).toMatchObject({ pooled: 6, gold: 1, judged: 2, parseFailures: 1, skippedSensitive: 2, requests: 5, cachedReplies: 0 });
    expect(m.tokens).toEqual({ prompt: 500, completion: 25 });
    expect(m.judge.model).toBe('judge-m');
    expect(m.judge.prompt.name).toBe('umbrela-v1');
    expect(m.judge.prompt.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(dir, 'judgments', 'qrels.trec'), 'utf8')).toBe('q1 0 d2 2\nq2 0 d1 3\n');
    expect(readFileSync(join(dir, 'judgments', 'judgments.jsonl'), 'utf8')).not.toContain('anxiety');

    const again = await runCaptured(judgeArgs(), dir, { OPENAI_API_KEY: KEY });
    expect(again.code).toBe(0);
    const j2 = await readJudgments(join(dir, 'judgments'));
    expect(j2.manifest.qrelsVersion).toBe(m.qrelsVersion);
    // The judged pairs are kept from the folder; the parse failure left nothing in the cache, so it is asked again.
    expect(server.requests).toHaveLength(5 + 3);
    expect(j2.manifest.counts).toMatchObject({ requests: 3, cachedReplies: 0, parseFailures: 1 });
    expect(j2.manifest.servedModels).toEqual(['judge-m']);
    expect(filesContaining([dir], KEY)).toEqual([]);
  });

  it('sends sensitive memories to a judge declared local', async () => {
    server = await startLoopback(fakeJudge);
    const dir = await fixture();
    const r = await runCaptured(judgeArgs(['--local']), dir, {});
    expect(r.code, r.log.join('\n')).toBe(0);
    const j = await readJudgments(join(dir, 'judgments'));
    expect(j.manifest.counts.skippedSensitive).toBe(0);
    expect(j.records.find((x) => x.queryId === 'q1' && x.docId === 'd4')).toMatchObject({ status: 'judged', grade: 2 });
  });

  it('retries a 429 after the Retry-After it carries, and a 503', async () => {
    server = await startLoopback(fakeJudge);
    server.enqueue(
      '/v1/chat/completions',
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'rate limited' } } },
      { status: 503, headers: { 'retry-after-ms': '10' }, body: { error: { message: 'overloaded' } } },
    );
    const dir = await fixture();
    const t0 = performance.now();
    const r = await runCaptured(judgeArgs(['--concurrency', '1']), dir, { OPENAI_API_KEY: KEY });
    expect(r.code, r.log.join('\n')).toBe(0);
    const times = server.requests.map((q) => q.headers['x-stainless-retry-count']);
    expect(times[0]).toBe('0');
    expect(times[1]).toBe('1');
    expect(times[2]).toBe('2');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1000);
    expect((await readJudgments(join(dir, 'judgments'))).manifest.counts.judged).toBe(2);
  });

  it('fails with exit 1 naming the HTTP status when retries run out, and a rerun resumes from the cache', async () => {
    let calls = 0;
    server = await startLoopback((req) => (++calls === 2 ? { status: 500, body: { error: { message: 'boom' } } } : fakeJudge(req)));
    const dir = await fixture();
    const failed = await runCaptured(judgeArgs(['--concurrency', '1', '--max-retries', '0', '--local']), dir, { OPENAI_API_KEY: KEY });
    expect(failed.code).toBe(1);
    const said = failed.stderr + failed.log.join('\n');
    expect(said).toMatch(/chat completion with model judge-m failed after 1 attempt \(maxRetries 0 used up\): HTTP 500 \(boom\)/);
    expect(said).not.toContain(KEY);
    expect(existsSync(join(dir, 'judgments'))).toBe(false);
    // Local: 5 pairs to judge (q1:d1 is gold), the unparsable one 3 times: 7 replies, 1 of them cached before the 500.
    const resumed = await runCaptured(judgeArgs(['--concurrency', '1', '--local']), dir, { OPENAI_API_KEY: KEY });
    expect(resumed.code).toBe(0);
    expect((await readJudgments(join(dir, 'judgments'))).manifest.counts).toMatchObject({ requests: 6, cachedReplies: 1 });
  });

  it('takes the majority of several samples', async () => {
    let n = 0;
    // q1:d2 gets 3, 1, 1 -> 1; every other reply follows the tag.
    server = await startLoopback((req) => {
      if (passageOf(req).includes('oat milk')) {
        const g = [3, 1, 1][n++]!;
        return {
          ...fakeJudge(req),
          body: { ...fakeJudge(req).body, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `##final score: ${g}` } }] },
        };
      }
      return fakeJudge(req);
    });
    const dir = await fixture();
    const r = await runCaptured(judgeArgs(['--samples', '3']), dir, { OPENAI_API_KEY: KEY });
    expect(r.code, r.log.join('\n')).toBe(0);
    const rec = (await readJudgments(join(dir, 'judgments'))).records.find((x) => x.docId === 'd2')!;
    expect(rec).toMatchObject({ grade: 1, samples: [3, 1, 1] });
  });

  it('refuses a hosted judge without a key, and a judge that generated the queries', async () => {
    server = await startLoopback(fakeJudge);
    const dir = await fixture();
    const noKey = await runCaptured(judgeArgs(), dir, {});
    expect(noKey.code).toBe(2);
    expect(noKey.stderr + noKey.log.join('\n')).toContain('OPENAI_API_KEY is not set');
    const dir2 = await tempFolder('judge-gen', {});
    const { cp, writeFile } = await import('node:fs/promises');
    await cp(dir, dir2, { recursive: true });
    await writeFile(join(dir2, 'es', 'build-manifest.json'), JSON.stringify({ generator: { model: 'judge-m' } }));
    const same = await runCaptured(judgeArgs(), dir2, { OPENAI_API_KEY: KEY });
    expect(same.code).toBe(2);
    expect(same.stderr + same.log.join('\n')).toContain('also generated');
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(dir2, 'judgments'))).toBe(false);
  });
});
