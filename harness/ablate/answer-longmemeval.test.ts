import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnswerLevel, ProtocolAccuracy } from '../decision/answer-level.js';
import type { ReportData } from '../decision/types.js';
import { writeAnswerStudy } from '../testing/answers.js';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { tempDir } from '../testing/temp.js';

// LongMemEval's answer protocol through the product: a LongMemEval file, hypothesis files with the judged
// `.eval-results-*` log evaluate_qa.py writes, `harness ablate` on them as `answers-file` systems measuring Acc,
// and the report's per-type, task-averaged, overall and abstention accuracy checked against the numbers
// LongMemEval's print_qa_metrics.py gives for the same labels.

/** The judged log's model: print_qa_metrics.py asserts every label comes from it. */
const OFFICIAL_JUDGE = 'gpt-4o-2024-08-06';

/** LongMemEval's question types in the order print_qa_metrics.py lists (and prints) them. */
const TYPES = ['single-session-user', 'single-session-preference', 'single-session-assistant', 'multi-session', 'temporal-reasoning', 'knowledge-update'];

/**
 * The fixture of harness/metrics/answer-accuracy.test.ts: fourteen questions over the six types, two `_abs`, in
 * that order, with run A's labels. On these labels print_qa_metrics.py prints (run by hand on a hypothesis log
 * and a reference file of the same question types): single-session-user 0.5 (2), single-session-preference 1.0
 * (1), single-session-assistant 0.3333 (3), multi-session 1.0 (2), temporal-reasoning 0.0 (2), knowledge-update
 * 0.75 (4); task-averaged 0.5972, overall 0.5714, abstention 0.5 (2). Run B's labels are another split of the
 * same questions, checked against the script's logic restated below.
 */
const ROWS: readonly { readonly id: string; readonly type: string; readonly gold: string; readonly a: 0 | 1; readonly b: 0 | 1 }[] = [
  { id: 'q14', type: 'knowledge-update', gold: 'Seattle', a: 1, b: 1 },
  { id: 'q1', type: 'single-session-user', gold: 'Biscuit', a: 1, b: 1 },
  { id: 'q2', type: 'single-session-user', gold: 'cello', a: 0, b: 1 },
  { id: 'q3', type: 'single-session-preference', gold: 'The user would like vegetarian recipes.', a: 1, b: 0 },
  { id: 'q4', type: 'single-session-assistant', gold: 'Dune', a: 0, b: 1 },
  { id: 'q5', type: 'single-session-assistant', gold: 'oat milk', a: 0, b: 1 },
  { id: 'q6', type: 'single-session-assistant', gold: 'tennis', a: 1, b: 1 },
  { id: 'q7', type: 'multi-session', gold: '3', a: 1, b: 0 },
  { id: 'q8_abs', type: 'multi-session', gold: 'You never mentioned a brother.', a: 1, b: 1 },
  { id: 'q9', type: 'temporal-reasoning', gold: '12 days', a: 0, b: 1 },
  { id: 'q10_abs', type: 'temporal-reasoning', gold: 'You did not say when you sold the boat.', a: 0, b: 1 },
  { id: 'q11', type: 'knowledge-update', gold: 'Porto', a: 1, b: 0 },
  { id: 'q12', type: 'knowledge-update', gold: 'Volvo', a: 1, b: 1 },
  { id: 'q13', type: 'knowledge-update', gold: 'Borges', a: 0, b: 0 },
];

/** The numbers print_qa_metrics.py prints for run A (its output, as recorded in the fixture above). */
const PRINTED_A = {
  perType: [
    ['single-session-user', '0.5', 2],
    ['single-session-preference', '1.0', 1],
    ['single-session-assistant', '0.3333', 3],
    ['multi-session', '1.0', 2],
    ['temporal-reasoning', '0.0', 2],
    ['knowledge-update', '0.75', 4],
  ],
  taskAveraged: '0.5972',
  overall: '0.5714',
  abstention: ['0.5', 2],
} as const;

interface OfficialMetrics {
  readonly perType: readonly { readonly type: string; readonly accuracy: number; readonly n: number }[];
  readonly taskAveraged: number;
  readonly overall: number;
  readonly abstention: { readonly accuracy: number; readonly n: number };
}

/**
 * print_qa_metrics.py's arithmetic, restated: each label (1 or 0) goes to its question's type, to the list of
 * every label, and, when the id contains `_abs`, to the abstention list; each type's accuracy is the mean of
 * its list, task-averaged the mean of the six type means (summed in the order above), overall the mean of
 * every label, abstention the mean of its list.
 */
function officialMetrics(log: readonly { question_id: string; autoeval_label: { label: boolean } }[]): OfficialMetrics {
  const typeOf = new Map(ROWS.map((r) => [r.id, r.type] as const));
  const byType = new Map(TYPES.map((t) => [t, [] as number[]] as const));
  const all: number[] = [];
  const abstention: number[] = [];
  for (const entry of log) {
    const label = entry.autoeval_label.label ? 1 : 0;
    byType.get(typeOf.get(entry.question_id) as string)?.push(label);
    all.push(label);
    if (entry.question_id.includes('_abs')) abstention.push(label);
  }
  const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const perType = TYPES.map((type) => ({ type, accuracy: mean(byType.get(type) ?? []), n: byType.get(type)?.length ?? 0 }));
  return {
    perType,
    taskAveraged: mean(perType.map((t) => t.accuracy)),
    overall: mean(all),
    abstention: { accuracy: mean(abstention), n: abstention.length },
  };
}

/** Python's `round(x, 4)` as print_qa_metrics.py prints it (no trailing zeros past the first decimal). */
const printed = (x: number): string => String(Math.round(x * 1e4) / 1e4).replace(/^(\d+)$/, '$1.0');

let dir: string;

/** A LongMemEval file of ROWS: each question's haystack one session whose user turn states the gold answer. */
function writeLongMemEval(): void {
  const items = ROWS.map((r, i) => ({
    question_id: r.id,
    question_type: r.type,
    question: `Question ${r.id}?`,
    answer: r.gold,
    question_date: '2023/06/01 (Thu) 10:00',
    haystack_dates: ['2023/05/20 (Sat) 09:00'],
    haystack_session_ids: [`answer_${i}`],
    haystack_sessions: [
      [
        { role: 'user', content: `Note ${i}: ${r.gold}.`, has_answer: true },
        { role: 'assistant', content: 'Noted.' },
      ],
    ],
    answer_session_ids: [`answer_${i}`],
  }));
  writeFileSync(join(dir, 'lme.json'), JSON.stringify(items));
}

/** A hypothesis file, and when `labels` is given, the judged log evaluate_qa.py would write for it. */
function writeHypotheses(name: string, answer: (r: (typeof ROWS)[number]) => string, labels?: 'a' | 'b') {
  const lines = ROWS.map((r) => ({ question_id: r.id, hypothesis: answer(r) }));
  writeFileSync(join(dir, name), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  if (labels === undefined) return [];
  const log = lines.map((l, i) => ({ ...l, autoeval_label: { model: OFFICIAL_JUDGE, label: (ROWS[i] as (typeof ROWS)[number])[labels] === 1 } }));
  writeFileSync(join(dir, `${name}.eval-results-${OFFICIAL_JUDGE}`), log.map((l) => `${JSON.stringify(l)}\n`).join(''));
  return log;
}

beforeEach(() => {
  dir = tempDir('harness-answer-lme');
  writeLongMemEval();
});

/**
 * Writes `<dir>/<name>.yaml`: a study of lme.json measuring Acc whose first system is run A with its recorded
 * labels; `rest` goes on with the other systems and what else the test sets. Returns its path.
 */
function lmeStudy(name: string, rest: string): string {
  const runA = `  - { id: run-a, kind: answers-file, params: { path: a.jsonl, format: longmemeval, labels: a.jsonl.eval-results-${OFFICIAL_JUDGE} } }\n`;
  return writeAnswerStudy(dir, `${name}.yaml`, { name, evalset: '{ format: longmemeval, path: lme.json }', measures: ['Acc'] }, `systems:\n${runA}${rest}`);
}

const ablate = (file: string, env: NodeJS.ProcessEnv = {}) => runCaptured(['ablate', '--config', file], dir, env);

function reportDir(): string {
  const [name] = readdirSync(join(dir, 'out'));
  return join(dir, 'out', name as string);
}
const report = () => JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as ReportData & { answerLevel: AnswerLevel };
const reportMd = () => readFileSync(join(reportDir(), 'report.md'), 'utf8');

type LongMemEvalRows = Extract<ProtocolAccuracy, { protocol: 'longmemeval' }>;

describe("LongMemEval's protocol numbers through harness ablate", () => {
  it('reproduces print_qa_metrics.py per type, task-averaged, overall and abstention from recorded labels', async () => {
    const logA = writeHypotheses('a.jsonl', (r) => `I think it is ${r.gold}`, 'a');
    const logB = writeHypotheses('b.jsonl', (r) => `Maybe ${r.gold}`, 'b');
    const file = lmeStudy(
      'lme-answers',
      `  - { id: run-b, kind: answers-file, params: { path: b.jsonl, format: longmemeval, labels: b.jsonl.eval-results-${OFFICIAL_JUDGE} } }
compare: { baseline: run-a, permutations: 1000 }
`,
    );
    const r = await ablate(file);
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const data = report();
    // Every question, the two _abs ones too: a study of answers alone keeps them (includeAbstention).
    expect(data.queries.map((q) => q.id).sort()).toEqual(ROWS.map((x) => x.id).sort());
    expect(data.answerLevel).toMatchObject({ protocol: 'longmemeval', questions: 14, kept: 14 });

    for (const [id, log] of [
      ['run-a', logA],
      ['run-b', logB],
    ] as const) {
      const official = officialMetrics(log);
      const system = data.answerLevel.systems.find((s) => s.id === id);
      expect(system).toMatchObject({ source: 'answers-file', judge: `recorded:${OFFICIAL_JUDGE}`, graded: 14, mapping: { unmapped: 0, missing: 0 } });
      const p = system?.protocol as LongMemEvalRows;
      expect(p.protocol).toBe('longmemeval');
      expect(p.perType.map((t) => [t.label, t.accuracy, t.n])).toEqual(official.perType.map((t) => [t.type, t.accuracy, t.n]));
      expect(p.taskAveraged).toBe(official.taskAveraged);
      expect(p.overall.accuracy).toBe(official.overall);
      expect(p.overall.n).toBe(14);
      expect([p.abstention.accuracy, p.abstention.n]).toEqual([official.abstention.accuracy, official.abstention.n]);
      // The summary's Acc (what a gate decides on) is the overall accuracy: the same questions, the same number.
      const summary = data.summary.find((s) => s.run === id && s.measure === 'Acc' && s.stratum === 'all');
      expect(summary?.mean).toBe(official.overall);
    }

    // Run A as the official script printed it, at its 4 decimals.
    const a = data.answerLevel.systems.find((s) => s.id === 'run-a')?.protocol as LongMemEvalRows;
    expect(a.perType.map((t) => [t.label, printed(t.accuracy as number), t.n])).toEqual(PRINTED_A.perType.map((t) => [...t]));
    expect(printed(a.taskAveraged as number)).toBe(PRINTED_A.taskAveraged);
    expect(printed(a.overall.accuracy as number)).toBe(PRINTED_A.overall);
    expect([printed(a.abstention.accuracy as number), a.abstention.n]).toEqual([...PRINTED_A.abstention]);

    // report.md says the same, labelled as the protocol reports it.
    const md = reportMd();
    expect(md).toContain('### Protocol aggregates (LongMemEval)');
    expect(md).toContain('| run-a | single-session-assistant | 3 | 1 | 0.3333 |');
    expect(md).toContain('| run-a | task-averaged (mean of 6 type accuracies) |  |  | 0.5972 |');
    expect(md).toContain('| run-a | overall (every question) | 14 | 8 | 0.5714 |');
    expect(md).toContain('| run-a | abstention (_abs questions) | 2 | 1 | 0.5000 |');
    expect(md).toContain('| run-a | overall without abstention | 12 | 7 | 0.5833 |');
    // B over A on the same 14 questions: the paired tests in comparisons.csv.
    const csv = readFileSync(join(reportDir(), 'comparisons.csv'), 'utf8');
    expect(csv).toMatch(/\nall,14,Acc,run-b,run-a,/);
  }, 60_000);
});

/** The gold and the answer in a LongMemEval judge prompt (every prompt of the profile words them this way). */
function pairIn(prompt: string): { gold: string; answer: string } {
  const gold = /^(?:Reference answer|Note on what is missing|What a good reply does): (.*)$/m.exec(prompt)?.[1] ?? '';
  const answer = /^Assistant's (?:answer|reply): ([\s\S]*?)\n\n/m.exec(prompt)?.[1] ?? '';
  return { gold: gold.trim(), answer: answer.trim() };
}

describe('the answer judge audit in harness ablate', () => {
  let judge: Loopback;
  /**
   * naive: yes when the answer contains the gold (fooled by candidates, padding and negation); sound: yes when it
   * is the gold; down: every request fails.
   */
  let mode: 'naive' | 'sound' | 'down' = 'naive';
  const judgeReply = (req: LoopbackRequest) => {
    if (mode === 'down') return { status: 500, body: { error: { message: 'down for the test' } } };
    const { gold, answer } = pairIn((req.json as { messages: { content: string }[] }).messages[0]?.content ?? '');
    const yes = mode === 'naive' ? answer.toLowerCase().includes(gold.toLowerCase()) : answer === gold;
    return chatCompletion(yes ? 'yes' : 'no', { prompt: 40, completion: 1 });
  };
  beforeEach(async () => {
    judge = await startLoopback(judgeReply);
  });
  afterEach(async () => {
    await judge.close();
  });

  /** Run A (recorded labels) against run C, whose hypotheses the configured judge grades, gated on Acc. */
  function auditStudy(): string {
    writeHypotheses('a.jsonl', (r) => r.gold, 'a');
    writeHypotheses('c.jsonl', (r) => (r.a === 1 ? r.gold : 'no idea'));
    return lmeStudy(
      'lme-audit',
      `  - { id: run-c, kind: answers-file, params: { path: c.jsonl, format: longmemeval } }
compare: { baseline: run-a, permutations: 1000 }
gate: { candidate: run-c, measure: Acc, rule: gain-overall }
answer:
  judge: { profile: longmemeval, model: judge-m, baseURL: "${judge.url}/v1", apiKeyEnv: TEST_KEY, local: true, parseRetries: 0, maxRetries: 0, audit: { pairs: 5, seed: 3 } }
`,
    );
  }

  it('probes the judge after grading: a judge fooled by probes is a serious warning that qualifies a verdict on Acc', async () => {
    mode = 'naive';
    const file = auditStudy();
    const r = await ablate(file, { TEST_KEY: 'k' });
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const data = report();
    const audit = data.answerLevel.judgeAudit;
    // 11 questions can be probed: not the two _abs ones, not the preference one (its gold is a rubric).
    expect(audit).toMatchObject({ judge: 'longmemeval/judge-m', pairs: 5, seed: 3, maxAcceptRate: 0.2, eligible: 11, systems: ['run-c'] });
    expect(audit?.probes.map((p) => [p.probe, p.expected, p.graded, p.accepted])).toEqual([
      ['candidates', 'reject', 5, 5],
      ['dont-know', 'reject', 5, 0],
      ['padding', 'reject', 5, 5],
      ['negated', 'reject', 5, 5],
      ['gold', 'accept', 5, 5],
    ]);
    // 25 probed answers, one sample each, beside the 14 answers of run-c; a gold control whose text is run-c's
    // answer to that question is the same prompt, graded once (the grade cache), so no prompt is sent twice.
    const prompts = judge.requests.map((q) => q.body);
    expect(new Set(prompts).size).toBe(prompts.length);
    expect(prompts.length).toBeGreaterThanOrEqual(14 + 20);
    expect(prompts.length).toBeLessThanOrEqual(14 + 25);
    // Every probed answer's tokens count, served from the cache or not.
    expect(audit?.tokens).toEqual({ prompt: 25 * 40, completion: 25 });
    const warning = data.warnings.find((w) => w.code === 'answer-judge-audit');
    expect(warning).toMatchObject({ severity: 'serious', gate: true, subject: 'longmemeval/judge-m' });
    expect(data.decision?.qualifiers).toContain('serious warning on the gate: answer-judge-audit');
    const md = reportMd();
    expect(md).toContain('### Answer judge audit');
    expect(md).toMatch(/\| candidates \| reject \| 5 \| 5 \| 100\.0% \| \[[0-9.]+, 1\.0000\] \| 0 \| FOOLED/);
    expect(md).toContain(data.decision?.headline as string);

    // A second run asks the judge nothing: the grades and the probed answers' grades are cached.
    const before = judge.requests.length;
    expect((await ablate(file, { TEST_KEY: 'k' })).code).toBe(0);
    expect(judge.requests).toHaveLength(before);
    expect(report().answerLevel).toEqual(data.answerLevel);
  }, 60_000);

  it('finds nothing to warn about in a sound judge', async () => {
    mode = 'sound';
    const r = await ablate(auditStudy(), { TEST_KEY: 'k' });
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const data = report();
    expect(data.answerLevel.judgeAudit?.probes.map((p) => p.acceptedRate)).toEqual([0, 0, 0, 0, 1]);
    expect(data.warnings.map((w) => w.code)).not.toContain('answer-judge-audit');
    expect(data.decision?.qualifiers.join('; ') ?? '').not.toContain('answer-judge-audit');
  }, 60_000);

  it('stops the run (exit 1) when the judge graded no probed answer: an audit of nothing is no clean audit', async () => {
    mode = 'down';
    const r = await ablate(auditStudy(), { TEST_KEY: 'k' });
    expect(r.code).toBe(1);
    expect(r.stderr + r.log.join('\n')).toContain('answer judge audit: longmemeval/judge-m graded none of the 25 probed answers');
  }, 60_000);
});
