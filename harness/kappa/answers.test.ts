import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { memoryLogger } from '../log.js';
import { BAD_GOOD_ARMS, writeAnswerStudy } from '../testing/answers.js';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { writeMemoryEvalSet } from '../testing/study.js';
import { tempDir } from '../testing/temp.js';
import { answerKappaReport, type LabelledAnswer } from './answers-report.js';
import { answerSample, defaultAnswerQuestions } from './answers-sample.js';
import type { AnswerSessionState } from './answers-session.js';
import { readAnsweredReport } from './answers-source.js';
import { type AnswerKappaRunOptions, runAnswerKappa } from './answers.js';

// `harness kappa --answers` over a real report folder: an answer study of two systems, answered by a loopback
// reader and graded by a loopback judge that errs on known questions, so the judge's agreement with a human
// labelling by the truth is known exactly.

const BIN = join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'bin.js');
const N = 30;
/** Question k (1-based): stratum `exact` for the first half, `multi-hop` for the rest. */
const stratumOf = (k: number) => (k <= N / 2 ? 'exact' : 'multi-hop');
const gold = (k: number) => `code${k}`;

/** The judge's errors: a right answer to every 5th question called WRONG, a wrong one to questions 3, 10, 17, 24 called CORRECT. */
const judgeSays = (k: number, right: boolean) => (right ? k % 5 !== 0 : k % 7 === 3);

let dir: string;
let reportDir: string;
let servers: Loopback[] = [];

function readerReply(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
  const word = /\bcode\d+\b/.exec(prompt)?.[0];
  return chatCompletion(word === undefined ? 'I do not know.' : `It is ${word}.`, { prompt: 10, completion: 3 });
}

function judgeReply(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
  const k = Number(/Question: .*memory (\d+)\b/.exec(prompt)?.[1]);
  const said = /Answer: It is (\w+)\./.exec(prompt)?.[1];
  return chatCompletion(judgeSays(k, said === gold(k)) ? 'CORRECT' : 'WRONG', { prompt: 10, completion: 1 });
}

/** The truth a careful human sees: `good` answers every question right, `bad` (the next memory) every one wrong. */
const truth = (system: string) => (system === 'good' ? 1 : 0);

beforeAll(async () => {
  dir = tempDir('kappa-answers');
  const corpus = Array.from({ length: N }, (_, i) => ({ id: `m${i + 1}`, text: `Memory ${i + 1}: the code word is ${gold(i + 1)}.` }));
  const queries = Array.from({ length: N }, (_, i) => ({
    id: `q${i + 1}`,
    text: `What is the code word of memory ${i + 1}?`,
    stratum: stratumOf(i + 1),
    answer: gold(i + 1),
    qrels: { [`m${i + 1}`]: 1 },
  }));
  writeMemoryEvalSet(dir, corpus, queries);
  const run = (name: string, pick: (k: number) => number) =>
    writeFileSync(join(dir, `${name}.trec`), `${queries.map((_, i) => `q${i + 1} Q0 m${pick(i + 1)} 1 1 ${name}`).join('\n')}\n`);
  run('good', (k) => k);
  run('bad', (k) => (k % N) + 1);
  const reader = await startLoopback(readerReply);
  const judge = await startLoopback(judgeReply);
  servers = [reader, judge];
  writeAnswerStudy(
    dir,
    'study.yaml',
    { name: 'answers', evalset: '{ format: memory, path: es }', measures: ['Acc'], topK: 10 },
    `${BAD_GOOD_ARMS}compare: { baseline: bad }
answer:
  reader: { kind: chat, model: reader-m, baseURL: "${reader.url}/v1", apiKeyEnv: TEST_KEY, local: true, topK: 1, maxRetries: 0 }
  judge: { profile: binary, model: judge-m, baseURL: "${judge.url}/v1", apiKeyEnv: TEST_KEY, local: true, parseRetries: 0, maxRetries: 0 }
`,
  );
  const r = await runCaptured(['ablate', '--config', 'study.yaml'], dir, { TEST_KEY: 'k' });
  if (r.code !== 0) throw new Error(r.stderr + r.log.join('\n'));
  reportDir = join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.close();
});

const options = (more: Partial<AnswerKappaRunOptions> = {}): AnswerKappaRunOptions => ({
  report: reportDir,
  reportOnly: false,
  seed: 7,
  threshold: 0.6,
  resamples: 300,
  level: 0.95,
  ...more,
});

async function* keys(text: string): AsyncGenerator<string> {
  yield text;
}

const io = (input: string, written: string[] = []) => ({
  input: keys(input),
  write: (t: string) => void written.push(t),
  log: memoryLogger(),
  env: {},
  cwd: dir,
});

/** Every graded answer's label by the truth, as a labels file. */
function truthFile(name: string, pick: (k: number) => boolean = () => true, flip: (system: string, k: number) => boolean = () => false): string {
  const lines = ['# system questionId correct'];
  for (let k = 1; k <= N; k++) if (pick(k)) for (const s of ['bad', 'good']) lines.push(`${s}\tq${k}\t${flip(s, k) ? 1 - truth(s) : truth(s)}`);
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
  return join(dir, name);
}

/** Cohen's kappa on 0/1 written out: (po - pe) / (1 - pe). */
function kappa(h: number[], l: number[]): number {
  const n = h.length;
  const po = h.filter((x, i) => x === l[i]).length / n;
  const ph = h.filter((x) => x === 1).length / n;
  const pl = l.filter((x) => x === 1).length / n;
  const pe = ph * pl + (1 - ph) * (1 - pl);
  return (po - pe) / (1 - pe);
}

describe('the report folder as an answer kappa reads it', () => {
  it('holds every system answer to each question with the judge grade, and a grades version', async () => {
    const r = await readAnsweredReport(reportDir);
    expect(r.systems).toEqual(['bad', 'good']);
    expect(r.answers).toHaveLength(2 * N);
    const grade = (s: string, k: number) => r.answers.find((a) => a.system === s && a.questionId === `q${k}`)?.correct;
    for (let k = 1; k <= N; k++) {
      expect(grade('good', k)).toBe(judgeSays(k, true) ? 1 : 0);
      expect(grade('bad', k)).toBe(judgeSays(k, false) ? 1 : 0);
    }
    expect(r.gradesVersion).toMatch(/^[0-9a-f]{16}$/);
    expect((await readAnsweredReport(reportDir)).gradesVersion).toBe(r.gradesVersion);
  });
});

describe('answerSample', () => {
  const items = Array.from({ length: 40 }, (_, i) =>
    ['a', 'b'].map((system) => ({ questionId: `q${i}`, system, stratum: i < 30 ? 'big' : 'small', answerSha: 'x' })),
  ).flat();

  it('samples whole questions per stratum (10 at least by default), each with every system, deterministically', () => {
    // 20% of 40 is 8, at least 25: 25 allocated 19 / 6 by size; small is raised to the PPI floor (all 10 it holds).
    expect([
      ...defaultAnswerQuestions(
        new Map([
          ['big', 30],
          ['small', 10],
        ]),
      ),
    ]).toEqual([
      ['big', 19],
      ['small', 10],
    ]);
    const s = answerSample(items, { seed: 3 });
    expect(s).toHaveLength(2 * 29);
    const questions = [...new Set(s.map((x) => x.questionId))];
    expect(questions.filter((q) => Number(q.slice(1)) >= 30)).toHaveLength(10);
    // Each question's answers come together, one per system.
    for (let i = 0; i < s.length; i += 2) expect(new Set([s[i]?.questionId, s[i + 1]?.questionId]).size).toBe(1);
    expect(answerSample(items, { seed: 3 })).toEqual(s);
    // The systems' order within a question is shuffled, so a place says nothing of who answered.
    expect(new Set(questions.map((q) => s.find((x) => x.questionId === q)?.system)).size).toBe(2);
    expect(answerSample(items, { seed: 3, questions: 8, perStratum: { small: 2 } }).filter((x) => x.stratum === 'small')).toHaveLength(4);
  });
});

describe('harness kappa --answers --labels', () => {
  it('reports kappa on correct/wrong as the formula gives it, per stratum and system, with the disagreements', async () => {
    const file = truthFile('truth.tsv');
    const out = await runAnswerKappa(options({ labels: file, disagreements: join(dir, 'dis.csv') }), io(''));
    const r = out.report;
    if (r === undefined) throw new Error('no report');
    const h: number[] = [];
    const l: number[] = [];
    for (let k = 1; k <= N; k++)
      for (const s of ['bad', 'good']) {
        h.push(truth(s));
        l.push(judgeSays(k, s === 'good') ? 1 : 0);
      }
    expect(r.n).toBe(60);
    expect(r.kappa.kappa).toBeCloseTo(kappa(h, l), 12);
    expect(r.kappa.agreement).toBeCloseTo(h.filter((x, i) => x === l[i]).length / 60, 12);
    // Judge errors: good on 5, 10, ..., 30 (6) called wrong; bad on 3, 10, 17, 24 called correct.
    expect(r.confusion).toEqual([
      [24, 6],
      [4, 26],
    ]);
    expect(r.strata.map((s) => [s.stratum, s.n])).toEqual([
      ['exact', 30],
      ['multi-hop', 30],
    ]);
    expect(r.systems.map((s) => s.system)).toEqual(['bad', 'good']);
    expect(r.questions).toMatchObject({ complete: 30, incomplete: 0 });
    expect(r.check).toBe('PASS');
    expect(r.judges).toEqual(['binary/judge-m']);
    const csv = readFileSync(join(dir, 'dis.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('system,questionId,stratum,human,judge,judgeName');
    expect(csv).toHaveLength(1 + 10);
    expect(csv).toContain('good,q5,exact,1,0,binary/judge-m');
    expect(csv).toContain('bad,q24,multi-hop,0,1,binary/judge-m');
  });

  it('exits 0 on PASS only: FAIL and TOO-FEW exit 1 after printing the numbers; bad lines exit 2 at their line', async () => {
    const cli = (args: string[]) => runCaptured(['kappa', '--answers', reportDir, '--resamples', '200', ...args], dir);
    truthFile('truth.tsv');
    const pass = await cli(['--labels', 'truth.tsv']);
    expect(pass.code, pass.stderr + pass.log.join('\n')).toBe(0);
    expect(pass.out).toMatch(/kappa check: PASS: kappa 0\.\d{3} >= threshold 0\.6/);
    expect(pass.out).toContain('questions labelled for every system: 30 (exact 15, multi-hop 15)');
    expect(pass.out).not.toContain('code');
    const fail = await cli(['--labels', 'truth.tsv', '--threshold', '0.95']);
    expect(fail.code).toBe(1);
    expect(fail.out).toContain('kappa check: FAIL');
    expect(fail.stderr + fail.log.join('\n')).toContain('kappa check FAIL: the answer judge does not agree');
    const few = await cli(['--labels', truthFile('few.tsv', (k) => k <= 10)]);
    expect(few.code).toBe(1);
    expect(few.out).toContain('kappa check: TOO-FEW: 20 labelled answers, the check needs 50');
    writeFileSync(join(dir, 'bad.tsv'), 'good q1 1\nnobody q2 1\ngood q3 2\ngood q1 0\ngood q4\n');
    const bad = await cli(['--labels', 'bad.tsv']);
    expect(bad.code).toBe(2);
    const said = bad.stderr + bad.log.join('\n');
    expect(said).toContain('bad.tsv:2: system nobody, question q2 is not a graded answer of');
    expect(said).toContain('bad.tsv:3: system good, question q3: label "2" is not 1 (correct) or 0 (wrong)');
    expect(said).toContain('bad.tsv:4: system good, question q1: labelled twice (first at line 1)');
    expect(said).toContain('bad.tsv:5: not an answer label line');
  });

  it('refuses flags of relevance sessions, two things to check, and a missing session file; suggests a mistyped flag', async () => {
    const cli = (args: string[]) => runCaptured(['kappa', ...args], dir);
    const said = async (args: string[]) => {
      const r = await cli(args);
      expect(r.code).toBe(2);
      return r.stderr + r.log.join('\n');
    };
    truthFile('truth.tsv');
    expect(await said(['--answers', reportDir, '--judgments', 'j', '--labels', 'truth.tsv'])).toContain('--judgments and --answers name two things to check');
    expect(await said(['--answers', reportDir, '--by', 'query', '--session', 's.json'])).toContain('--by query samples relevance judgments');
    expect(await said(['--answers', reportDir, '--sample', '5', '--session', 's.json'])).toContain('with --answers give --queries');
    expect(await said(['--answers', reportDir, '--on', 'quadratic', '--labels', 'truth.tsv'])).toContain('there is one kappa');
    expect(await said(['--answers', reportDir])).toContain('--answers: give --session FILE');
    expect(await said(['--labels', 'truth.tsv'])).toContain('give --judgments FOLDER');
    expect(await said(['--answer', reportDir, '--labels', 'truth.tsv'])).toContain('did you mean --answers?');
    expect(await said(['--answers', dir, '--labels', 'truth.tsv'])).toContain('manifest.json: missing');
  });
});

describe('harness kappa --answers --session', () => {
  it('shows question, gold and answer, never the grade or the system; quits, resumes, and reports', async () => {
    const file = join(dir, 'session.json');
    const written: string[] = [];
    const first = await runAnswerKappa(options({ session: file, questions: 12 }), io('1w0cs', written));
    expect(first.complete).toBe(false);
    const s = JSON.parse(readFileSync(file, 'utf8')) as AnswerSessionState;
    expect(s.kind).toBe('answers');
    expect(s.items).toHaveLength(24);
    expect(s.labels.slice(0, 6)).toEqual([1, 0, 0, 1, 'skip', null]);
    expect(s.position).toBe(5);
    const shown = written.join('');
    expect(shown).toMatch(/question q\d+: What is the code word of memory \d+\?\ngold answer: code\d+\nanswer: It is code\d+\./);
    expect(shown).not.toMatch(/\b(good|bad|CORRECT|WRONG)\b/);
    expect(shown).not.toMatch(/judge/i);
    // Resumed: back over the skip, then every remaining answer labelled by the truth.
    const rest = s.items
      .slice(4)
      .map((it) => String(truth(it.system)))
      .join('');
    const done = await runAnswerKappa(options({ session: file }), io(`b${rest}`));
    expect(done.complete).toBe(true);
    expect(done.report?.n).toBe(24);
    expect(done.report?.questions.complete).toBe(12);
    const again = await runAnswerKappa(options({ session: file, reportOnly: true }), io(''));
    expect(again.report?.kappa).toEqual(done.report?.kappa);
  });

  it('refuses a session of other grades, a listed-twice answer and a relevance session, each exit 2', async () => {
    const file = join(dir, 'other.json');
    await runAnswerKappa(options({ session: file, questions: 3 }), io('q'));
    const s = JSON.parse(readFileSync(file, 'utf8')) as AnswerSessionState;
    const refused = async (text: string) => {
      writeFileSync(file, text);
      const err = await runAnswerKappa(options({ session: file }), io('q')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HarnessError);
      expect((err as HarnessError).exitCode).toBe(2);
      return (err as Error).message;
    };
    expect(await refused(JSON.stringify({ ...s, gradesVersion: '0000000000000000' }))).toMatch(
      /labels answers of grades version 0000000000000000, not [0-9a-f]{16}/,
    );
    const twice = `${JSON.stringify({ ...s, items: [...s.items, s.items[0]], labels: [...s.labels, null] }, null, 0)
      .replace('"items":[', '"items":[\n')
      .replaceAll('},{', '},\n{')}`;
    expect(await refused(twice)).toMatch(/items\[6\]: system \w+, question q\d+ is listed twice \(first as items\[0\]/);
    expect(await refused(JSON.stringify({ ...s, items: [{ ...s.items[0], answerSha: 'ffff' }, ...s.items.slice(1)] }))).toContain(
      "the report's answer is not the one labelled",
    );
    const { kind: _, ...relevance } = s;
    expect(await refused(JSON.stringify(relevance))).toContain('a kappa session of relevance grades');
  });

  it('resumes after kill -9: every key is saved atomically before the next answer shows', async () => {
    expect(existsSync(BIN), `${BIN} is missing: run npm run build first`).toBe(true);
    const file = join(dir, 'killed.json');
    const child = spawn(process.execPath, [BIN, 'kappa', '--answers', reportDir, '--session', file, '--queries', '6', '--resamples', '100'], { cwd: dir });
    const positionIs = async (n: number) => {
      for (let t = 0; t < 200; t++) {
        if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as AnswerSessionState).position === n) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the session never reached position ${n}`);
    };
    await positionIs(0);
    child.stdin.write('1');
    await positionIs(1);
    child.stdin.write('0');
    await positionIs(2);
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    const s = JSON.parse(readFileSync(file, 'utf8')) as AnswerSessionState;
    expect(s.labels.slice(0, 3)).toEqual([1, 0, null]);
    const rest = s.items
      .slice(2)
      .map((it) => String(truth(it.system)))
      .join('');
    const resumed = await new Promise<{ code: number; out: string }>((resolve) => {
      const c = execFile(process.execPath, [BIN, 'kappa', '--answers', reportDir, '--session', file, '--resamples', '100'], { cwd: dir }, (error, out) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out }),
      );
      c.stdin?.end(rest);
    });
    // 12 labelled answers: too few for the check (exit 1), and the numbers are printed.
    expect(resumed.code).toBe(1);
    expect(resumed.out).toContain('n = 12 labelled answers of 60 graded');
  }, 60_000);
});

describe('answerKappaReport', () => {
  it('is UNDEFINED when both raters call every answer one thing, FAIL at no agreement whatever the threshold', () => {
    const xs = (h: 0 | 1, l: 0 | 1): LabelledAnswer[] =>
      Array.from({ length: 60 }, (_, i) => ({ questionId: `q${i}`, system: 's', stratum: 'x', judge: 'j', human: h, llm: l }));
    const opts = { gradesVersion: 'v', systems: ['s'], threshold: -1, resamples: 0, seed: 1, level: 0.95, graded: 60 };
    expect(answerKappaReport(xs(1, 1), opts).check).toBe('UNDEFINED');
    expect(answerKappaReport(xs(1, 0), opts).check).toBe('FAIL');
  });
});
