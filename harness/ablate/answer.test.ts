import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnswerLevel } from '../decision/answer-level.js';
import type { ReportData } from '../decision/types.js';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { ANSWER_MEMORIES, BAD_GOOD_ARMS, writeAnswerStudy } from '../testing/answers.js';
import { filesContaining } from '../testing/secret.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { writeMemoryEvalSet } from '../testing/study.js';
import { tempDir } from '../testing/temp.js';

// The answer and grade stages of `harness ablate` end to end (docs/adr/0045-answer-level-evaluation.md), with a
// loopback OpenAI-compatible reader and judge on 127.0.0.1 whose replies follow simple rules.

const MEMORIES = ANSWER_MEMORIES;
const WORDS: readonly string[] = MEMORIES.map((m) => m[2]);
/** A question whose reader request the server refuses (HTTP 400, not retried). */
const REFUSED = 'What does the bakery sell on Fridays?';

let dir: string;
let reader: Loopback;
let judge: Loopback;

/** The reader: "It is <word>." for the first answer word in its prompt, else it does not know; 400 for REFUSED. */
function readerReply(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
  if (prompt.includes(REFUSED)) return { status: 400, body: { error: { message: 'refused by the test' } } };
  const word = WORDS.find((w) => prompt.includes(w));
  return chatCompletion(word === undefined ? 'I do not know.' : `It is ${word}.`, { prompt: 100, completion: 5 });
}

/** The judge: CORRECT when the answer's word appears twice in its prompt (once as the gold), else WRONG. */
function judgeReply(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
  const said = /It is (\w+)\./.exec(prompt)?.[1];
  const twice = said !== undefined && prompt.split(said).length - 1 >= 2;
  return chatCompletion(twice ? 'CORRECT' : 'WRONG', { prompt: 50, completion: 1 });
}

/** A TREC run that puts, for each question, `pick(i)`'s memory first. */
function runFile(name: string, pick: (i: number) => number): void {
  const lines = MEMORIES.map((_, i) => `q${i + 1} Q0 ${MEMORIES[pick(i)]?.[0]} 1 1 ${name}`);
  writeFileSync(join(dir, `${name}.trec`), `${lines.join('\n')}\n`);
}

beforeEach(async () => {
  dir = tempDir('harness-answer');
  const corpus = MEMORIES.map(([id, text]) => ({ id, text, ...(id.startsWith('s') ? { sensitive: true } : {}) }));
  const queries = MEMORIES.map(([id, , answer, text], i) => ({ id: `q${i + 1}`, text, stratum: 'exact', answer, qrels: { [id]: 1 } }));
  writeMemoryEvalSet(dir, corpus, queries);
  // `good` ranks each question's own memory first; `bad` the next one.
  runFile('good', (i) => i);
  runFile('bad', (i) => (i + 1) % MEMORIES.length);
  reader = await startLoopback(readerReply);
  judge = await startLoopback(judgeReply);
});
afterEach(async () => {
  await reader.close();
  await judge.close();
});

/** A study of the two run-file systems with a chat reader and a binary judge on the loopback servers. */
function study(opts: { readerLocal?: boolean; judgeLocal?: boolean; samples?: number } = {}): string {
  return writeAnswerStudy(
    dir,
    'study.yaml',
    { name: 'answers', evalset: '{ format: memory, path: es }', measures: ['Acc', 'F1-LoCoMo', 'EM'], topK: 10 },
    `${BAD_GOOD_ARMS}compare: { baseline: bad, permutations: 2000 }
gate: { candidate: good, measure: Acc, rule: gain-overall }
answer:
  reader: { kind: chat, model: reader-m, baseURL: "${reader.url}/v1", apiKeyEnv: TEST_KEY, local: ${opts.readerLocal ?? true}, topK: 1, maxRetries: 0 }
  judge: { profile: binary, model: judge-m, baseURL: "${judge.url}/v1", apiKeyEnv: TEST_KEY, local: ${opts.judgeLocal ?? true}, samples: ${opts.samples ?? 1}, parseRetries: 0, maxRetries: 0 }
  price: { reader-m: { input: 1, output: 2 }, judge-m: { input: 0.5, output: 1 } }
`,
  );
}

const ablate = (file: string) => runCaptured(['ablate', '--config', file], dir, { TEST_KEY: 'test-key-0451' });

function reportDir(): string {
  const [name] = readdirSync(join(dir, 'out'));
  return join(dir, 'out', name as string);
}
const report = () => JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as ReportData & { answerLevel: AnswerLevel };
/** The lines of a file of the report's `answers/` folder, each parsed. */
const jsonLines = (file: string) =>
  readFileSync(join(reportDir(), 'answers', file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
const bodies = (server: Loopback) => server.requests.map((r) => r.body).join('\n');

describe('harness ablate with an answer: block', () => {
  it('answers, grades and gates on Acc; a refused question is counted, never graded wrong, and left out of every system', async () => {
    const r = await ablate(study());
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const data = report();
    // q8 (refused by the reader) and q9 (sensitive, but reader and judge are local here: it is answered) ...
    expect(data.queries.map((q) => q.id)).toEqual(['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q9']);
    expect(data.perQuery['good']?.['Acc']).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(data.perQuery['bad']?.['Acc']).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(data.gateResult?.config.measure).toBe('Acc');
    expect(data.decision?.verdict).toBe('ADOPT');
    // Acc is the answer judge's verdicts: with no human answer labels the verdict says so, and --gate-exit exits 4.
    expect(data.decision).toMatchObject({ basis: 'judge', exitCode: 4, judge: { qrels: 'answers', validation: 'missing' } });
    expect(data.decision?.headline).toBe('ADOPT on judge labels; answer judge not validated (no human labels)');
    expect(data.warnings.find((w) => w.code === 'judge-unvalidated')).toMatchObject({ subject: 'answer judge', severity: 'serious', gate: true });
    expect(data.evalset.notes.join('\n')).toMatch(/1 question left out of every system's measures .*bad: 1 reader failed; good: 1 reader failed/);
    const good = data.answerLevel.systems.find((s) => s.id === 'good');
    expect(good?.failures).toMatchObject({ reader: 1, judge: 0, sensitive: 0, missing: 0 });
    expect(good?.correct).toBe(8);
    // 8 answers of 100 + 5 tokens at $1/$2 per million, 8 grades of 50 + 1 at $0.5/$1; the refused request cost nothing.
    expect(good?.cost.readerUsd).toBeCloseTo((800 * 1 + 40 * 2) / 1e6, 12);
    expect(good?.cost.judgeUsd).toBeCloseTo((400 * 0.5 + 8 * 1) / 1e6, 12);
    expect(data.warnings.map((w) => w.code)).toContain('answer-failures');
    const lines = jsonLines('good.jsonl');
    expect(lines[7]).toMatchObject({ question_id: 'q8', answer: null, correct: null, failures: [{ cause: 'reader' }] });
    expect(lines[0]).toMatchObject({ question_id: 'q1', answer: 'It is Biscuit.', correct: true, evidenceInContext: true, judge: 'binary/judge-m' });
    // q9's answer came from a sensitive memory (read by a local reader): neither the report folder nor the cache
    // holds its text.
    expect(filesContaining([join(dir, 'out'), join(dir, 'cache')], 'lisinopril')).toEqual([]);
    expect(lines[8]).toMatchObject({ question_id: 'q9', answer: null, withheld: 'sensitive', correct: true });
    const hyp = jsonLines('good.hypotheses.jsonl');
    expect(hyp).toHaveLength(7);
    expect(hyp[0]).toEqual({ question_id: 'q1', hypothesis: 'It is Biscuit.' });
    // The Acc comparison is in comparisons.csv, and the manifest records who read and graded, without the key.
    expect(readFileSync(join(reportDir(), 'comparisons.csv'), 'utf8')).toMatch(/\nexact,8,Acc,good,bad,1,0,1,confirmatory,/);
    const manifest = readFileSync(join(reportDir(), 'manifest.json'), 'utf8');
    expect(manifest).toContain('"profile": "binary"');
    expect(manifest).not.toContain('test-key-0451');
  }, 60_000);

  it('serves a second run from the cache: no request reaches the reader or the judge, the same report', async () => {
    const file = study({ samples: 2 });
    expect((await ablate(file)).code).toBe(0);
    const first = report();
    const asked = { reader: reader.requests.length, judge: judge.requests.length };
    // 9 questions x 2 systems, the refused ones asked once each; 16 answers x 2 samples graded.
    expect(asked).toEqual({ reader: 18, judge: 32 });
    expect((await ablate(file)).code).toBe(0);
    // Asked again: the refused answers (failures are never cached) and q9's answers and grades (a sensitive
    // memory's restatement is never kept in the cache), for both systems.
    expect({ reader: reader.requests.length, judge: judge.requests.length }).toEqual({ reader: 18 + 4, judge: 32 + 4 });
    const second = report();
    expect(second.answerLevel).toEqual(first.answerLevel);
    expect(second.perQuery).toEqual(first.perQuery);
    const counts = (JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8')) as { answer: { requests: unknown } }).answer.requests;
    expect(counts).toEqual({ reader: { requests: 4, cached: 14 }, judge: { requests: 4, cached: 28 } });
  }, 60_000);

  it('never sends a sensitive memory to a reader or judge that is not local: the question is skipped and counted', async () => {
    const r = await ablate(study({ readerLocal: false, judgeLocal: false }));
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    expect(bodies(reader)).not.toContain('lisinopril');
    expect(bodies(judge)).not.toContain('lisinopril');
    const data = report();
    expect(data.queries.map((q) => q.id)).not.toContain('q9');
    const good = data.answerLevel.systems.find((s) => s.id === 'good');
    // good's context for q9 is the sensitive memory: the reader never sees it.
    expect(good?.failures.sensitive).toBe(1);
    const lines = jsonLines('good.jsonl');
    expect(lines[8]).toMatchObject({ question_id: 'q9', answer: null, failures: [{ cause: 'skipped-sensitive' }] });
    // bad's context for q9 is m1, sent; but q9's gold comes from a sensitive memory, so the judge does not see it.
    const bad = jsonLines('bad.jsonl');
    expect(bad[8]).toMatchObject({ question_id: 'q9', answer: null, withheld: 'sensitive', correct: null, failures: [{ cause: 'skipped-sensitive' }] });
  }, 60_000);

  it('refuses at load what cannot be measured: Acc without a judge, answer measures without an answer block', async () => {
    const file = join(dir, 'bad.yaml');
    const good = 'arms:\n  - { id: good, kind: run-file, params: { path: good.trec } }\n';
    for (const [measures, rest, message] of [
      ['[Acc, nDCG@10]', 'answer:\n  reader: { kind: extractive }\n', 'measures: Acc is the answer judge'],
      ['[EM]', '', 'measures: EM is an answer measure; add an answer: block'],
    ] as const) {
      writeFileSync(file, `name: x\nevalset: { format: memory, path: es }\nmeasures: ${measures}\n${good}${rest}`);
      const r = await ablate(file);
      expect(r.code, measures).toBe(2);
      expect(r.stderr + r.log.join('\n')).toContain(message);
    }
  });
});

/** A LoCoMo file of two conversations, three questions each, and two mem0 evaluation files graded on them. */
function locomoStudy(): string {
  const turn = (id: string, text: string) => ({ speaker: 'Ann', dia_id: id, text });
  const conversation = (n: number, facts: readonly [string, string, string][]) => ({
    sample_id: `conv-${n}`,
    conversation: {
      speaker_a: 'Ann',
      speaker_b: 'Bo',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: facts.map(([fact], i) => turn(`D1:${i + 1}`, fact)),
    },
    // The last question of the second conversation has no evidence id: kept for answers (keepWithoutEvidence).
    qa: facts.map(([, question, answer], i) => ({ question, answer, evidence: n === 1 && i === 2 ? [] : [`D1:${i + 1}`], category: 4 })),
  });
  const convs = [
    conversation(0, [
      ['I adopted a cat named Tom.', 'What is the name of the cat?', 'Tom'],
      ['We moved to Lisbon.', 'Where did they move?', 'Lisbon'],
      ['I play the cello.', 'Which instrument?', 'cello'],
    ]),
    conversation(1, [
      ['I drive a Volvo.', 'Which car?', 'Volvo'],
      ['I was born in Porto.', 'Where born?', 'Porto'],
      ['I read Borges.', 'Which author?', 'Borges'],
    ]),
  ];
  writeFileSync(join(dir, 'locomo10.json'), JSON.stringify(convs));
  const mem0 = (scores: readonly number[]) =>
    Object.fromEntries(
      convs.map((c, ci) => [
        String(ci),
        c.qa.map((q, i) => ({ question: q.question, answer: q.answer, response: `r ${q.answer}`, category: '4', llm_score: scores[ci * 3 + i] })),
      ]),
    );
  writeFileSync(join(dir, 'mem0-a.json'), JSON.stringify(mem0([1, 1, 1, 1, 1, 0])));
  writeFileSync(join(dir, 'mem0-b.json'), JSON.stringify(mem0([1, 0, 0, 1, 0, 0])));
  return writeAnswerStudy(
    dir,
    'locomo-answers.yaml',
    { name: 'mem0-runs', evalset: '{ format: locomo, path: locomo10.json }', measures: ['Acc'] },
    `systems:
  - { id: run-a, kind: answers-file, params: { path: mem0-a.json, format: mem0 } }
  - { id: run-b, kind: answers-file, params: { path: mem0-b.json, format: mem0 } }
compare: { baseline: run-a, permutations: 1000 }
`,
  );
}

describe('answers-file systems', () => {
  it('scores two mem0 evaluation files on their recorded llm_score, and compares them paired in comparisons.csv', async () => {
    const r = await ablate(locomoStudy());
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const data = report();
    expect(data.runs.map((x) => [x.id, x.kind])).toEqual([
      ['run-a', 'answers-file'],
      ['run-b', 'answers-file'],
    ]);
    // All six, the one without evidence ids too: an answers-only study keeps LoCoMo's QAs without evidence.
    expect(data.queries).toHaveLength(6);
    const overall = data.strata.length > 1 ? 'all' : data.strata[0]?.id;
    const all = data.summary.filter((s) => s.measure === 'Acc' && s.stratum === overall);
    expect(Object.fromEntries(all.map((s) => [s.run, s.mean]))).toEqual({ 'run-a': 5 / 6, 'run-b': 2 / 6 });
    const a = data.answerLevel.systems.find((s) => s.id === 'run-a');
    expect(a).toMatchObject({ source: 'answers-file', judge: 'recorded:mem0', graded: 6, correct: 5, mapping: { unmapped: 0, missing: 0 } });
    const csv = readFileSync(join(reportDir(), 'comparisons.csv'), 'utf8').split('\n');
    const header = (csv[0] as string).split(',');
    const rows = csv.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [header[i], v])));
    const pair = rows.filter((row) => row['measure'] === 'Acc' && row['baseline'] === 'run-a' && row['system'] === 'run-b' && row['stratum'] === overall);
    // The decision stage's paired randomization test, and the answer level's exact McNemar, on the same 6 questions.
    expect(pair.map((row) => row['test']).sort()).toEqual(['mcnemar-exact', 'randomization']);
    for (const row of pair) {
      expect(Number(row['n'])).toBe(6);
      expect(Number(row['delta'])).toBeCloseTo(-0.5, 12);
    }
    // No retrieval ran: no run files, no recall curve with made-up zeros.
    expect(readdirSync(reportDir())).not.toContain('runs');
    expect(data.curves).toBeUndefined();
  }, 60_000);
});

describe('the bundled example', () => {
  it('runs offline with the extractive reader and lexical answer measures', async () => {
    const work = tempDir('harness-answer-example');
    const r = await runCaptured(
      ['ablate', '--config', 'configs/example.yaml', '--output', join(work, 'out'), '--cache', join(work, 'cache')],
      PROJECT_ROOT,
      {},
    );
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    expect(r.out).toMatch(/F1-LoCoMo +EM/);
    const [name] = readdirSync(join(work, 'out'));
    const data = JSON.parse(readFileSync(join(work, 'out', name as string, 'report.json'), 'utf8')) as ReportData & { answerLevel: AnswerLevel };
    expect(data.measures).toEqual(expect.arrayContaining(['nDCG@10', 'F1-LoCoMo', 'EM']));
    expect(data.queries).toHaveLength(106);
    for (const s of data.answerLevel.systems) {
      expect(s.reader).toBe('extractive');
      expect(s.failures).toMatchObject({ reader: 0, judge: 0, sensitive: 0, missing: 0 });
      expect(s.lexical.find((l) => l.measure === 'F1-LoCoMo')?.mean).toBeGreaterThan(0.05);
    }
    expect(readdirSync(join(work, 'out', name as string, 'answers')).sort()).toContain('bm25.hypotheses.jsonl');
  }, 120_000);
});
