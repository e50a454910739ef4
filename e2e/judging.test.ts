import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiError, type ChatCall, type ChatServer, startChatServer } from './openai-server.js';
import { cleanEnv, type Installed, installPackage, step } from './package.js';

/**
 * The README's "Judging a private store" protocol, run by the `harness` binary of the packed package installed
 * into a fresh project, against an OpenAI-compatible chat-completions server on 127.0.0.1 that decides every
 * reply from the request: judge, kappa (from a labels file and at a terminal), ablate on gold+judged, evalset
 * build and inspect. Each step leans on the files of the ones before.
 */

/** `judge.model` of configs/example-judged.yaml: the server must be asked for it. */
const JUDGE_MODEL = 'qwen2.5-7b-instruct';
/** The config's `judgments:` folder, relative to the study. */
const JUDGMENTS = 'data/judgments/example';
/** No API key in the child's environment: the config declares `local: true` and build gets `--local`. */
const NO_KEY = { OPENAI_API_KEY: undefined };
/** A memory the judge never grades (a parse failure) and one it grades only when re-asked. */
const NEVER = "Alex's usual coffee order is an oat-milk flat white.";
const ONCE = 'Jonah works as a route setter at Vertical Hold in Georgetown.';
const NEVER_REPLY = 'The passage is about a drink; how relevant it is depends on the user.';
const ONCE_REPLY = 'M: it matches the intent. T: it is trustworthy.';
/** Replies per unparsable pair: the first and `parseRetries` (default 2) re-asks. */
const ATTEMPTS = 3;

// --- the scripted judge: a grade from word overlap, so the judgments mean something -------------------------

const STOP = new Set(
  'a an the and or but of in on at to for with from by about into as is are was were be been has have had do does did what which who whom whose when where why how this that these those it its his her their my me i you your'.split(
    ' ',
  ),
);
const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 1 && !STOP.has(w)),
  );

/** The judge's grade of a pair: the number of content words query and memory share, at most 3. */
function overlapGrade(query: string, memory: string): number {
  const m = words(memory);
  return Math.min(3, [...words(query)].filter((w) => m.has(w)).length);
}

const QUERY = /\nQuery: (.*)\n/;
const PASSAGE = /\nPassage: ([\s\S]*?)\n\nSplit this problem/;
const REASK = /Your previous reply was:\n([\s\S]*?)\n\nIt did not end/;

/** Replies to the UMBRELA prompt (harness/judge/prompts/umbrela-v1.md) as a model asked for `##final score: N`. */
function judgeReply(prompt: string): string {
  const query = QUERY.exec(prompt)?.[1];
  const passage = PASSAGE.exec(prompt)?.[1];
  if (query === undefined || passage === undefined) return 'I cannot find a query and a passage in this prompt.';
  if (passage === NEVER) return NEVER_REPLY;
  if (passage === ONCE && !REASK.test(prompt)) return ONCE_REPLY;
  const g = overlapGrade(query, passage);
  return `M: ${g}, T: 3\n##final score: ${g}`;
}

// --- the scripted generator of evalset build (harness/evalset-build/prompts/*.md) ---------------------------

/**
 * Paraphrases made of words no memory of the example shares: the first, from a place the memory picks, that
 * shares no 4-letter stem with it (checked against harness's own rule: none is rejected).
 */
const PARAPHRASES = [
  'Which pastime did I pursue lately?',
  'What happened back then?',
  'Remind me of that episode.',
  'Anything noteworthy I mentioned earlier?',
  'What was that detail I shared once?',
];
const stems = (text: string) =>
  text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 2)
    .map((w) => w.slice(0, 4));

interface Generator {
  readonly reply: (prompt: string) => string;
  /** The malformed and leaking replies sent, in order. */
  readonly scripted: string[];
}

/**
 * Exact questions quote their memory; paraphrases use none of its words; multi-hop questions name a word of each
 * memory. Scripted misbehaviour, once each: an exact reply on two lines, a paraphrase that repeats the memory,
 * and a multi-hop NONE.
 */
function generator(): Generator {
  const scripted: string[] = [];
  const once = (tag: string) => !scripted.includes(tag) && scripted.push(tag) > 0;
  const reply = (prompt: string): string => {
    const retry = prompt.includes('Your previous question was rejected because');
    if (prompt.includes('combining every one of these memories')) {
      if (once('none')) return 'NONE';
      const firsts = [...prompt.matchAll(/^Memory \d+: (.*)$/gm)].map((m) => [...words(m[1] as string)][0] ?? 'that');
      return `How are ${firsts.join(' and ')} connected?`;
    }
    const memory = (/^Memory: (.*)$/m.exec(prompt)?.[1] ?? '').replace(/[.!?]+$/, '');
    if (prompt.includes('in entirely different words')) {
      if (!retry && once('leak')) return `What do I know about ${memory}?`;
      const mine = new Set(stems(memory));
      const start = memory.length % PARAPHRASES.length;
      const order = [...PARAPHRASES.slice(start), ...PARAPHRASES.slice(0, start)];
      return order.find((p) => stems(p).every((s) => !mine.has(s))) ?? (PARAPHRASES[0] as string);
    }
    if (!retry && once('two-lines')) return `Here is a question:\nWhat do I know about ${memory}?`;
    return `What do I know about ${memory}?`;
  };
  return { reply, scripted };
}

// --- a pseudo-terminal for the interactive kappa session ------------------------------------------------------

/** How to run a command under a pty: util-linux `script`, else python3's pty module; else why neither works. */
function ptyWrapper(): ((argv: readonly string[]) => [string, string[]]) | string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  if (spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0) {
    return (argv) => ['script', ['-q', '-e', '-c', argv.map(quote).join(' '), '/dev/null']];
  }
  if (spawnSync('python3', ['-c', 'import pty'], { encoding: 'utf8' }).status === 0) {
    return (argv) => ['python3', ['-c', 'import os, pty, sys; sys.exit((pty.spawn(sys.argv[1:]) >> 8) & 255)', ...argv]];
  }
  return 'neither util-linux script nor python3 with the pty module is installed, and Node has no pty of its own';
}
const PTY = ptyWrapper();
if (typeof PTY === 'string') console.warn(`e2e/judging.test.ts: skipping the interactive kappa session: ${PTY}`);

/** A command running with a pty as its terminal: what it printed so far, keys sent one at a time. */
class Terminal {
  private readonly child: ChildProcessWithoutNullStreams;
  private text = '';
  readonly exited: Promise<number>;

  constructor(argv: readonly string[], cwd: string) {
    const [command, args] = (PTY as Exclude<typeof PTY, string>)(argv);
    this.child = spawn(command, args, { cwd, env: cleanEnv(NO_KEY), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (c: Buffer) => void (this.text += c.toString('utf8')));
    this.child.stderr.on('data', (c: Buffer) => void (this.text += c.toString('utf8')));
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code) => resolve(code ?? 128));
    });
  }

  /** Everything printed so far, with the terminal's CR LF as LF. */
  get output(): string {
    return this.text.replace(/\r\n/g, '\n');
  }

  /** Waits until the output after `from` matches `pattern`; fails with the output after 20 s. */
  async waitFor(pattern: RegExp, from = 0): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!pattern.test(this.output.slice(from))) {
      if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}; it shows:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Types one key (no Enter: in raw mode it arrives alone) and waits for the screen that follows it. */
  async press(key: string, next: RegExp): Promise<void> {
    const from = this.output.length;
    this.child.stdin.write(key);
    await this.waitFor(next, from);
  }

  /** Ends a session a failed assertion left running (the wrapper, and with its pty the command, go). */
  kill(): void {
    this.child.kill('SIGKILL');
  }

  /** The exit code; a command still running after 20 s is killed and the output shown. */
  async close(): Promise<number> {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
      this.child.stdin.end();
    }
  }
}

// --- the study --------------------------------------------------------------------------------------------------

interface Judgment {
  queryId: string;
  docId: string;
  stratum: string;
  status: 'judged' | 'parse-failure' | 'skipped-sensitive';
  grade: number | null;
  samples: number[];
  parseFailures: number;
}

interface Manifest {
  qrelsVersion: string;
  judge: { model: string; prompt: { name: string; sha256: string }; decoding: { temperature: number; maxTokens: number }; baseURL: string; local: boolean };
  pool: { depth: number; systems: string[]; pairs: number; queries: number };
  counts: { pooled: number; gold: number; judged: number; parseFailures: number; skippedSensitive: number; requests: number; cachedReplies: number };
  tokens: { prompt: number; completion: number };
}

let study: Installed;
let judgeServer: ChatServer | undefined;
let genServer: ChatServer | undefined;
const memories = new Map<string, { text: string; sensitive: boolean }>();
const queries = new Map<string, string>();

const read = (...p: string[]) => readFileSync(join(study.dir, ...p), 'utf8');
const records = () =>
  read(JUDGMENTS, 'judgments.jsonl')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Judgment);
const manifest = () => JSON.parse(read(JUDGMENTS, 'manifest.json')) as Manifest;
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const ok = (calls: readonly ChatCall[]) => calls.filter((c) => c.status === 200);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const tokensOf = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** Cohen's kappa of two raters over `labels`, written out; undefined when chance agreement is 1. */
function kappa(a: readonly number[], b: readonly number[], labels: readonly number[]): number | undefined {
  const n = a.length;
  const observed = a.filter((x, i) => x === b[i]).length / n;
  const chance = sum(labels.map((l) => (a.filter((x) => x === l).length / n) * (b.filter((x) => x === l).length / n)));
  return chance === 1 ? undefined : (observed - chance) / (1 - chance);
}
const relevant = (g: number) => (g >= 2 ? 1 : 0);
const f3 = (k: number | undefined) => (k === undefined ? 'undefined' : k.toFixed(3));

/** The kappa check line `harness kappa --relevant-at 2` prints for these pairs (binary kappa against 0.6). */
function checkLine(human: readonly number[], judge: readonly number[]): RegExp {
  const k = kappa(human.map(relevant), judge.map(relevant), [0, 1]);
  const name = 'binary kappa \\(relevant at grade >= 2, set by --relevant-at 2\\)';
  if (k === undefined) return new RegExp(`^kappa check: UNDEFINED: ${name} is undefined`, 'm');
  const [verdict, op] = k >= 0.6 ? ['PASS', '>='] : ['FAIL', '<'];
  return new RegExp(`^kappa check: ${verdict}: ${name} ${f3(k).replace('.', '\\.')} ${op} threshold 0\\.6`, 'm');
}

beforeAll(async () => {
  study = await installPackage();
  // The README's commands run in a clone, beside configs/ and evalset/: the package ships both.
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  for (const d of jsonLines(read('evalset', 'examples', 'alex-memory', 'corpus.jsonl'))) {
    memories.set(d['id'] as string, { text: d['text'] as string, sensitive: d['sensitive'] === true });
  }
  for (const q of jsonLines(read('evalset', 'examples', 'alex-memory', 'queries.jsonl'))) queries.set(q['id'] as string, q['text'] as string);
  judgeServer = await startChatServer(judgeReply);
}, 600_000);

afterAll(async () => {
  await judgeServer?.close();
  await genServer?.close();
  study?.remove();
});

describe('judging a private store, with the installed package and a chat server on 127.0.0.1', { shuffle: false }, () => {
  let version = '';
  let neverPairs = 0;

  it('judge: pools every system at depth 10, grades the holes, survives a 429 and a 500, counts the unparsable', async () => {
    const server = judgeServer as ChatServer;
    // The first two requests fail: a rate limit with Retry-After, then a server error. The SDK retries both.
    server.fail(apiError(429, 'Rate limit reached for requests', { 'retry-after': '1' }), apiError(500, 'The server had an error'));
    const ran = await step(study, 'judge', ['judge', '--config', 'configs/example-judged.yaml', '--base-url', server.baseURL], { env: NO_KEY });
    const summary =
      /^pool: (\d+) pairs, (\d+) queries, 4 system\(s\), depth 10\n {2}graded by gold: (\d+); judged: (\d+); parse failures: (\d+); sensitive, not sent: 0\n {2}requests sent: (\d+); replies from cache: 0; tokens: (\d+) in, (\d+) out\nqrels version ([0-9a-f]{16}): data\/judgments\/example\n$/.exec(
        ran.stdout,
      );
    expect(summary, ran.stdout).not.toBeNull();
    const n = (i: number) => Number((summary as RegExpExecArray)[i]);
    const [pairs, pooledQueries, gold, judged, failures, requests, tokensIn, tokensOut] = [1, 2, 3, 4, 5, 6, 7, 8].map(n);
    version = (summary as RegExpExecArray)[9] as string;
    expect(ran.stderr).toMatch(/judge: pool of \d+ pairs over \d+ queries from 4 system\(s\) at depth 10/);
    // The progress line counts the pairs left without a grade as `failed N`: that is the unparsable memory, not an error.
    expect(ran.stderr.replace(/^judge \[.*$/gm, '')).not.toMatch(/error|failed/i);
    for (const f of ['judgments.jsonl', 'qrels.trec', 'manifest.json']) expect(existsSync(join(study.dir, JUDGMENTS, f)), f).toBe(true);

    // Every pooled pair gold does not grade has a record; every record's grade is the server's overlap grade.
    const recs = records();
    expect(recs).toHaveLength(Number(pairs) - Number(gold));
    expect(recs.filter((r) => r.status === 'judged')).toHaveLength(Number(judged));
    expect(recs.filter((r) => r.status === 'skipped-sensitive')).toHaveLength(0);
    for (const r of recs.filter((x) => x.status === 'judged')) {
      const want = overlapGrade(queries.get(r.queryId) as string, memories.get(r.docId)?.text as string);
      expect(r, `${r.queryId} ${r.docId}`).toMatchObject({ grade: want, samples: [want], parseFailures: 0 });
    }
    // local: true, so the sensitive memories in the pool were sent and judged.
    expect(recs.some((r) => memories.get(r.docId)?.sensitive === true && r.status === 'judged')).toBe(true);

    // The reply without a grade line: re-asked twice quoting it, then a parse failure with no grade.
    const calls = ok(server.calls);
    const never = recs.filter((r) => memories.get(r.docId)?.text === NEVER);
    neverPairs = never.length;
    expect(neverPairs).toBeGreaterThan(0);
    expect(failures).toBe(neverPairs);
    for (const r of never) expect(r).toMatchObject({ status: 'parse-failure', grade: null, samples: [], parseFailures: 1 });
    const neverCalls = calls.filter((c) => PASSAGE.exec(c.prompt)?.[1] === NEVER);
    expect(neverCalls).toHaveLength(ATTEMPTS * neverPairs);
    expect(neverCalls.filter((c) => REASK.exec(c.prompt)?.[1] === NEVER_REPLY)).toHaveLength((ATTEMPTS - 1) * neverPairs);
    // The reply that gets a grade when re-asked: judged, from the re-ask.
    const once = recs.filter((r) => memories.get(r.docId)?.text === ONCE);
    expect(once.length).toBeGreaterThan(0);
    for (const r of once) expect(r.status).toBe('judged');
    const onceCalls = calls.filter((c) => PASSAGE.exec(c.prompt)?.[1] === ONCE);
    expect(onceCalls).toHaveLength(2 * once.length);
    expect(onceCalls.filter((c) => REASK.exec(c.prompt)?.[1] === ONCE_REPLY)).toHaveLength(once.length);

    // The 429 was retried after its Retry-After (1 s), the 500 retried too; neither is counted as a reply.
    expect(server.calls.filter((c) => c.status === 429)).toHaveLength(1);
    expect(server.calls.filter((c) => c.status === 500)).toHaveLength(1);
    for (const status of [429, 500]) {
      const failed = server.calls.find((c) => c.status === status) as ChatCall;
      const retried = calls.find((c) => c.prompt === failed.prompt && c.retry > 0 && c.at > failed.at);
      expect(retried, `the retry after the ${status}`).toBeDefined();
      if (status === 429) expect((retried as ChatCall).at - failed.at).toBeGreaterThanOrEqual(950);
    }
    expect(server.calls).toHaveLength(calls.length + 2);
    expect(requests).toBe(calls.length);
    // The judge model and decoding of the config were asked for; the token counts are the server's.
    expect(new Set(server.calls.map((c) => c.model))).toEqual(new Set([JUDGE_MODEL]));
    expect(new Set(calls.map((c) => `${c.temperature} ${c.maxTokens}`))).toEqual(new Set(['0 64']));
    expect(tokensIn).toBe(sum(calls.map((c) => tokensOf(c.prompt))));
    expect(tokensOut).toBe(sum(calls.map((c) => tokensOf(c.content as string))));

    const m = manifest();
    expect(m).toMatchObject({
      qrelsVersion: version,
      judge: { model: JUDGE_MODEL, prompt: { name: 'umbrela-v1' }, decoding: { temperature: 0, maxTokens: 64 }, baseURL: server.baseURL, local: true },
      pool: { depth: 10, systems: ['bm25', 'bm25-nostem', 'fts5', 'fts5-plain'], pairs, queries: pooledQueries },
      counts: { pooled: pairs, gold, judged, parseFailures: neverPairs, skippedSensitive: 0, requests, cachedReplies: 0 },
      tokens: { prompt: tokensIn, completion: tokensOut },
    });
    expect(m.judge.prompt.sha256).toMatch(/^[0-9a-f]{64}$/);
    // qrels.trec: the judged grades only, in TREC qrels form; judgments.jsonl holds ids and grades, no text.
    const qrels = read(JUDGMENTS, 'qrels.trec');
    expect(qrels).toBe(
      recs
        .filter((r) => r.status === 'judged')
        .map((r) => `${r.queryId} 0 ${r.docId} ${r.grade}\n`)
        .join(''),
    );
    const jsonl = read(JUDGMENTS, 'judgments.jsonl');
    expect(jsonl).not.toContain('coffee');
    expect(jsonl).not.toContain(queries.get(recs[0]?.queryId as string) as string);
  });

  it('judge again: judged pairs come from the folder; only the unparsable pairs are asked again (only grades are cached)', async () => {
    const server = judgeServer as ChatServer;
    const sent = server.calls.length;
    const before = { jsonl: read(JUDGMENTS, 'judgments.jsonl'), qrels: read(JUDGMENTS, 'qrels.trec') };
    const ran = await step(study, 'judge (rerun)', ['judge', '--config', 'configs/example-judged.yaml', '--base-url', server.baseURL], { env: NO_KEY });
    // A reply with no grade is never cached, so each parse failure is asked again (and fails again): nothing else is sent.
    expect(server.calls).toHaveLength(sent + ATTEMPTS * neverPairs);
    expect(server.calls.slice(sent).every((c) => PASSAGE.exec(c.prompt)?.[1] === NEVER)).toBe(true);
    expect(ran.stdout).toMatch(new RegExp(`requests sent: ${ATTEMPTS * neverPairs}; replies from cache: 0; tokens: \\d+ in, \\d+ out`));
    expect(ran.stdout).toContain(`qrels version ${version}: data/judgments/example`);
    expect(read(JUDGMENTS, 'judgments.jsonl')).toBe(before.jsonl);
    expect(read(JUDGMENTS, 'qrels.trec')).toBe(before.qrels);
    expect(manifest()).toMatchObject({ qrelsVersion: version, counts: { requests: ATTEMPTS * neverPairs, cachedReplies: 0, parseFailures: neverPairs } });
  });

  it('kappa --labels: human labels from a qrels file, the kappas and the check against 0.6', async () => {
    const judged = records().filter((r) => r.status === 'judged');
    // 25 pairs the judge found relevant (grade >= 2) and 25 it did not, spread over the judgments.
    const spread = (rs: Judgment[]) => rs.filter((_, i) => i % Math.floor(rs.length / 25) === 0).slice(0, 25);
    const sample = [...spread(judged.filter((r) => (r.grade as number) >= 2)), ...spread(judged.filter((r) => (r.grade as number) < 2))];
    expect(sample).toHaveLength(50);
    const write = (file: string, human: readonly number[]) =>
      writeFileSync(join(study.dir, file), sample.map((r, i) => `${r.queryId} 0 ${r.docId} ${human[i]}\n`).join(''));
    const llm = sample.map((r) => r.grade as number);

    // Mostly agreeing: every tenth pair graded across the relevance line, one more a grade apart on the same side.
    const agree = llm.map((g, i) => (i % 10 === 3 ? (g >= 2 ? 1 : 2) : i === 0 ? (g === 3 ? 2 : 3) : g));
    write('labels-agree.qrels', agree);
    const pass = await step(study, 'kappa --labels (agreeing)', [
      'kappa',
      '--judgments',
      JUDGMENTS,
      '--labels',
      'labels-agree.qrels',
      // The sample is split at grade 2 (25 pairs either side), so the check reads that split (the default is 1).
      '--relevant-at',
      '2',
      '--disagreements',
      'disagreements.csv',
    ]);
    expect(pass.stdout).toContain(`kappa: hand labels vs the judge, qrels version ${version}\n`);
    expect(pass.stdout).toContain(`n = ${sample.length} labelled pairs; intervals: 95% percentile bootstrap, 2000 resamples\n`);
    expect(pass.stdout).toMatch(new RegExp(`^ {2}unweighted {2}${f3(kappa(agree, llm, [0, 1, 2, 3]))} \\[`, 'm'));
    expect(pass.stdout).toMatch(new RegExp(`^ {2}binary {6}${f3(kappa(agree.map(relevant), llm.map(relevant), [0, 1]))} \\[`, 'm'));
    expect(pass.stdout).toMatch(/^per stratum \(n, unweighted, quadratic, binary at grade >= 2\):\n {2}exact/m);
    expect(pass.stdout).toMatch(/^confusion \(rows: human 0-3, columns: judge 0-3\):$/m);
    expect(pass.stdout).toMatch(checkLine(agree, llm));
    expect(pass.stdout).toMatch(/^kappa check: PASS: /m);
    const csv = read('disagreements.csv').trim().split('\n');
    expect(csv[0]).toBe('queryId,docId,stratum,human,judge');
    expect(csv.slice(1)).toEqual(sample.flatMap((r, i) => (agree[i] === llm[i] ? [] : [`${r.queryId},${r.docId},${r.stratum},${agree[i]},${r.grade}`])));

    // Mostly disagreeing: every other pair graded across the relevance line. The verdict is printed, then exit 1
    // (only a PASS exits 0: docs/adr/0035, addendum).
    const disagree = llm.map((g, i) => (i % 2 === 0 ? (g >= 2 ? 0 : 3) : g));
    write('labels-disagree.qrels', disagree);
    const fail = await step(
      study,
      'kappa --labels (disagreeing)',
      ['kappa', '--judgments', JUDGMENTS, '--labels', 'labels-disagree.qrels', '--relevant-at', '2'],
      { code: 1 },
    );
    expect(fail.stdout).toMatch(checkLine(disagree, llm));
    expect(fail.stdout).toMatch(/^kappa check: FAIL: /m);

    // A label for a pair the judge did not grade (its parse failure): bad input, exit 2, naming the file.
    const failed = records().find((r) => r.status === 'parse-failure') as Judgment;
    writeFileSync(join(study.dir, 'labels-ungraded.qrels'), `${failed.queryId} 0 ${failed.docId} 1\n`);
    const bad = await step(study, 'kappa --labels (ungraded pair)', ['kappa', '--judgments', JUDGMENTS, '--labels', 'labels-ungraded.qrels'], { code: 2 });
    expect(bad.stderr).toContain('labels-ungraded.qrels');
    expect(bad.stderr).toContain(`query ${failed.queryId}, document ${failed.docId}: the judge has no grade for this pair`);
    expect(bad.stdout).toBe('');
  });

  it.skipIf(typeof PTY === 'string')('kappa at a terminal: keys label blind, q quits, a second session resumes and finishes', async () => {
    const bin = join(study.dir, 'node_modules', '.bin', 'harness');
    const argv = [bin, 'kappa', '--judgments', JUDGMENTS, '--sample', '6'];
    const sessionFile = join(study.dir, JUDGMENTS, 'kappa-session.json');
    expect(existsSync(sessionFile)).toBe(false);
    const grades = new Map(records().map((r) => [`${r.queryId} ${r.docId}`, r.grade] as const));
    const screen = (k: number) => new RegExp(`\\n\\[${k}/6\\] stratum [a-z-]+; [^\\n]*\\nquery [^\\n]*\\nmemory [^\\n]*\\n[^\\n]*\\n> $`);
    type Session = { items: { queryId: string; docId: string }[]; labels: (number | 'skip' | null)[]; position: number; qrelsVersion: string };
    const session = () => JSON.parse(readFileSync(sessionFile, 'utf8')) as Session;

    // First session: a new sample of 6 is drawn and saved; two pairs labelled as the judge did, then q.
    const first = new Terminal(argv, study.dir);
    let items: Session['items'] = [];
    const judgeOf = (i: number) => grades.get(`${items[i]?.queryId} ${items[i]?.docId}`) as number;
    try {
      await first.waitFor(screen(1));
      items = session().items;
      expect(items).toHaveLength(6);
      await first.press(String(judgeOf(0)), screen(2));
      await first.press(String(judgeOf(1)), screen(3));
      await first.press('q', /\nstopped; run the same command again to resume\n$/);
    } catch (err) {
      first.kill();
      throw err;
    }
    expect(await first.close(), first.output).toBe(0);
    expect(first.output).toContain(`kappa: new session of 6 pairs in ${sessionFile}`);
    expect(first.output).toContain('keys: 0-3 grade, s skip, b back, q quit');
    expect(first.output).toContain(`query ${items[0]?.queryId}: ${queries.get(items[0]?.queryId as string)}\nmemory ${items[0]?.docId}: `);
    // Blind: the screen never shows the judge's grade, and nothing was reported yet.
    expect(first.output.slice(first.output.indexOf('keys: '))).not.toMatch(/judge|llm|kappa check/i);
    expect(session()).toMatchObject({ qrelsVersion: version, labels: [judgeOf(0), judgeOf(1), null, null, null, null], position: 2 });

    // Second session: resumes at pair 3; b goes back to pair 2 (showing the label) to change it; s skips pair 4.
    const second = new Terminal(argv, study.dir);
    const changed = judgeOf(1) >= 2 ? 0 : 3;
    try {
      await second.waitFor(screen(3));
      await second.press('b', /\n\[2\/6\] stratum [a-z-]+; 2 labelled or skipped; your label: \d\n[\s\S]*> $/);
      await second.press(String(changed), screen(3));
      await second.press(String(judgeOf(2)), screen(4));
      await second.press('s', screen(5));
      await second.press(String(judgeOf(4)), screen(6));
      await second.press(
        String(judgeOf(5)),
        /\nevery pair labelled or skipped\n[\s\S]*kappa check: TOO-FEW: [^\n]*\n[\s\S]*kappa check not made: [^\n]*\n\s*hint: [^\n]*\n$/,
      );
    } catch (err) {
      second.kill();
      throw err;
    }
    // 5 labels are far below the check's minimum: the numbers print, the check says TOO-FEW and exits 1.
    expect(await second.close(), second.output).toBe(1);
    expect(second.output).toContain(`kappa: resuming ${sessionFile} at pair 3 of 6`);
    expect(second.output).toMatch(new RegExp(`\\[2/6\\][^\\n]*your label: ${judgeOf(1)}\\n`));
    expect(session()).toMatchObject({ labels: [judgeOf(0), changed, judgeOf(2), 'skip', judgeOf(4), judgeOf(5)], position: 6 });
    expect(second.output).toContain(`kappa: hand labels vs the judge, qrels version ${version}\nn = 5 labelled pairs;`);
    expect(second.output).toMatch(/^kappa check: TOO-FEW: 5 labelled pairs, the check needs \d+ /m);
    expect(second.output).not.toMatch(/kappa check: (PASS|FAIL)/);

    // --report (no terminal) prints the same report from the saved session, labelling nothing.
    const report = await step(study, 'kappa --report', ['kappa', '--judgments', JUDGMENTS, '--report'], { code: 1 });
    // The terminal shows the report, then the refusal on stderr.
    expect(second.output).toContain(report.stdout);
    expect(report.stderr).toMatch(/kappa check not made: 5 labelled pairs \(1 skipped\), it needs at least \d+/);
    expect(session().position).toBe(6);
  });

  it('ablate on gold+judged: the report scores on the judged qrels and names their version', async () => {
    const ran = await step(study, 'ablate example-judged', ['ablate', '--config', 'configs/example-judged.yaml']);
    expect(ran.stdout).toMatch(/^gate: (ACCEPT|REJECT)/m);
    const dir = readdirSync(join(study.dir, 'reports')).find((d) => d.startsWith('example-judged-'));
    expect(dir, ran.stdout).toBeDefined();
    expect(ran.stdout).toContain(`report: reports/${dir}/report.md`);
    for (const f of ['report.json', 'report.md', 'manifest.json', 'qrels.trec', 'summary.csv'])
      expect(existsSync(join(study.dir, 'reports', dir as string, f)), f).toBe(true);
    const m = manifest();
    const judge = {
      model: JUDGE_MODEL,
      prompt: `umbrela-v1@${m.judge.prompt.sha256.slice(0, 12)}`,
      qrelsVersion: version,
      depth: 10,
      pooled: ['bm25', 'bm25-nostem', 'fts5', 'fts5-plain'],
      // The parse failures are pooled pairs left without a grade.
      holes: neverPairs,
    };
    const report = JSON.parse(read('reports', dir as string, 'report.json')) as {
      evalset: { qrelsSource: string; judge: unknown };
      summary: { run: string; stratum: string; measure: string; mean: number }[];
      warnings: { code: string; subject: string }[];
    };
    expect(report.evalset).toMatchObject({ qrelsSource: 'gold+judged', judge });
    const runManifest = JSON.parse(read('reports', dir as string, 'manifest.json')) as { evalset: { qrels: unknown } };
    expect(runManifest.evalset.qrels).toEqual({ source: 'gold+judged', judge });
    expect(read('reports', dir as string, 'report.md')).toContain(`gold+judged (judge ${JUDGE_MODEL}, prompt ${judge.prompt}, qrels version ${version})`);
    // gold+judged: every gold grade, and the judged grades of the pairs gold leaves out.
    const goldPairs = sum(jsonLines(read('evalset', 'examples', 'alex-memory', 'queries.jsonl')).map((q) => Object.keys(q['qrels'] as object).length));
    expect(
      read('reports', dir as string, 'qrels.trec')
        .trim()
        .split('\n'),
    ).toHaveLength(goldPairs + m.counts.judged);
    // Judged@10 as the README gives it for the example (0.18 on gold alone): 0.83 for bm25, 0.98 for fts5.
    const judged10 = (run: string) => report.summary.find((s) => s.run === run && s.stratum === 'all' && s.measure === 'Judged@10')?.mean ?? 0;
    expect(judged10('bm25')).toBeCloseTo(0.83, 1);
    expect(judged10('fts5')).toBeGreaterThan(0.95);
    // With pooled pairs left ungraded the holes warning is not spared (README: only when no pooled pair is left
    // ungraded): bm25's Judged@10 below 0.9 is flagged.
    expect(report.warnings.find((w) => w.code === 'judged-holes')?.subject ?? '').toContain('bm25');
  });

  it('evalset build: exact, paraphrase and multi-hop questions from seed memories, then inspect reads them back', async () => {
    const gen = generator();
    genServer = await startChatServer((prompt) => gen.reply(prompt));
    genServer.fail(apiError(500, 'The server had an error'));
    const args = ['evalset', 'build', '--corpus', 'evalset/examples/alex-memory', '--out', 'data/evalsets/built', '--model', 'gen-model'];
    const more = ['--judge-model', 'judge-model', '--base-url', genServer.baseURL, '--local', '--strata-by', 'importance', '--per-stratum', '4'];
    const ran = await step(study, 'evalset build', [...args, ...more], { env: NO_KEY });
    expect(gen.scripted.sort()).toEqual(['leak', 'none', 'two-lines']);
    const calls = ok(genServer.calls);
    // 3 importance buckets x 4 seeds: 12 exact, 12 paraphrase, 6 multi-hop; one of each misbehaves once.
    expect(ran.stdout).toBe(
      [
        'seeds: 12 memories from 3 seed groups (importance); sensitive, not sent: 0',
        '  accepted: exact 12, paraphrase 12, multi-hop 5; hand-authored: 0',
        '  rejected and regenerated: exact 1, paraphrase 1, multi-hop 0; dropped: exact 0, paraphrase 0, multi-hop 1',
        `  requests sent: ${calls.length}; replies from cache: 0; tokens: ${sum(calls.map((c) => tokensOf(c.prompt)))} in, ${sum(calls.map((c) => tokensOf(c.content as string)))} out`,
        'eval set (memory format): data/evalsets/built',
        '',
      ].join('\n'),
    );
    expect(calls).toHaveLength(30 + 2);
    expect(genServer.calls.filter((c) => c.status === 500)).toHaveLength(1);
    expect(new Set(genServer.calls.map((c) => `${c.model} ${c.temperature}`))).toEqual(new Set(['gen-model 0.7']));
    // The rejected replies were regenerated with the reason in the prompt.
    const feedback = calls.map((c) => /Your previous question was rejected because (.*):\n/.exec(c.prompt)?.[1]).filter((x) => x !== undefined);
    expect(feedback.sort()).toEqual(['it shares words with the memory', 'the reply was more than one line'].map((s) => expect.stringContaining(s)));

    const built = join('data', 'evalsets', 'built');
    expect(readdirSync(join(study.dir, built)).sort()).toEqual(['build-manifest.json', 'corpus.jsonl', 'queries.jsonl']);
    expect(read(built, 'corpus.jsonl')).toBe(read('evalset', 'examples', 'alex-memory', 'corpus.jsonl'));
    const bm = JSON.parse(read(built, 'build-manifest.json')) as {
      generator: { model: string; baseURL: string; local: boolean };
      judgeModel: string;
      seeds: Record<string, string[]>;
      counts: Record<string, unknown>;
    };
    expect(bm).toMatchObject({ generator: { model: 'gen-model', baseURL: genServer.baseURL, local: true }, judgeModel: 'judge-model' });
    expect(Object.keys(bm.seeds).sort()).toEqual(['importance=high', 'importance=low', 'importance=mid']);
    expect(bm.counts).toMatchObject({ sensitiveExcluded: 0, requests: calls.length, cachedReplies: 0 });
    const qs = jsonLines(read(built, 'queries.jsonl')) as { id: string; text: string; stratum: string; qrels: Record<string, number> }[];
    expect(qs).toHaveLength(29);
    const seeds = new Set(Object.values(bm.seeds).flat());
    for (const q of qs) {
      const ids = Object.keys(q.qrels);
      expect(
        ids.every((id) => seeds.has(id)),
        q.id,
      ).toBe(true);
      expect(Object.values(q.qrels), q.id).toEqual(ids.map(() => (q.stratum === 'multi-hop' ? 2 : 3)));
      expect(ids, q.id).toHaveLength(q.stratum === 'multi-hop' ? 2 : 1);
      const memory = memories.get(ids[0] as string)?.text as string;
      if (q.stratum === 'exact') expect(q.text).toBe(`What do I know about ${memory.replace(/[.!?]+$/, '')}?`);
      if (q.stratum === 'paraphrase') {
        expect(PARAPHRASES).toContain(q.text);
        expect(
          stems(q.text).filter((x) => stems(memory).includes(x)),
          q.id,
        ).toEqual([]);
      }
    }

    const inspect = await step(study, 'evalset inspect (built)', ['evalset', 'inspect', '--format', 'memory', '--path', built]);
    expect(inspect.stdout).toMatch(/^documents\s+351 \(10 sensitive\)$/m);
    expect(inspect.stdout).toMatch(/^queries\s+29$/m);
    expect(inspect.stdout).toMatch(/^exact\s+12\s+min 1\s+median 1/m);
    expect(inspect.stdout).toMatch(/^paraphrase\s+12\s+min 1\s+median 1/m);
    expect(inspect.stdout).toMatch(/^multi-hop\s+5\s+min 2\s+median 2/m);
    expect(inspect.stdout).toMatch(/^validation: no problems$/m);
  });
});
