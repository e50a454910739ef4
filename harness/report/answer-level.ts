import { stringify } from 'csv-stringify/sync';
import {
  type AccuracyRow,
  type AnswerJudgeAuditLevel,
  type AnswerLevel,
  type AnswerPairRow,
  type AnswerTokens,
  type AnswerProbeRow,
  type AnswerSystemLevel,
  answerAuditFindings,
  hasGrades,
  type ProtocolAccuracy,
} from '../decision/answer-level.js';
import { fmtDelta, fmtLevel, fmtMean, fmtP } from '../decision/format.js';
import type { ReportData } from '../decision/types.js';
import type { Block, Cell } from './blocks.js';

/**
 * The answer level as a report shows it (the section "Answer accuracy"): accuracy per stratum with Wilson
 * intervals, the protocol's aggregates, lexical means, the paired McNemar tests, attribution, judge variance,
 * the answer judge audit, failures and cost, as blocks Markdown and HTML render, as LaTeX tables, and as CSV
 * rows. Pure functions of report.json; they decide nothing (the numbers are `harness/answer/section.ts`'s).
 * Only what exists is shown: a study nobody graded (the extractive reader, lexical measures alone) gets no
 * accuracy table, no McNemar test and no judge variance, rather than tables of n = 0. Each table says which
 * questions it is over, so no accuracy here can be read against the summary's without its denominator.
 *
 * The heading is not "Answers": that section already holds what the study answers (its questions, the best
 * systems), and two sections of one name would make every reference to either ambiguous.
 */

/** Title of the section in every rendering. */
export const ANSWER_SECTION = 'Answer accuracy';

/** Family id of the McNemar rows in comparisons.csv: their Holm correction runs over the section's tests only. */
export const MCNEMAR_FAMILY = 'answers-mcnemar';

const h2 = (text: string): Block => ({ kind: 'heading', level: 2, text });
const h3 = (text: string): Block => ({ kind: 'heading', level: 3, text });
const para = (text: string): Block => ({ kind: 'para', text });

const PROTOCOL_NAME: Readonly<Record<AnswerLevel['protocol'], string>> = { longmemeval: 'LongMemEval', locomo: 'LoCoMo', generic: 'generic' };

const opt = (x: number | null, f: (v: number) => string = fmtMean): string => (x === null ? 'n/a' : f(x));
const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** `[0.3521, 0.7812]`, or `n/a` without graded questions. */
function fmtInterval(i: readonly [number, number] | null): string {
  return i === null ? 'n/a' : `[${fmtMean(i[0])}, ${fmtMean(i[1])}]`;
}

/** Dollars: cents from one dollar up; below, two significant digits (a run of a few questions costs fractions of a cent). */
export function fmtUsd(x: number | null): string {
  if (x === null) return 'n/a';
  if (x === 0) return '$0';
  if (x >= 1) return `$${x.toFixed(2)}`;
  return `$${x.toFixed(Math.min(12, Math.max(2, 1 - Math.floor(Math.log10(x)))))}`;
}

/** label, graded, correct, accuracy, interval. */
function accuracyCells(r: AccuracyRow): string[] {
  return [r.label, String(r.n), String(r.correct), opt(r.accuracy), fmtInterval(r.interval)];
}

function strataBlocks(a: AnswerLevel): Block[] {
  const rows = a.systems.flatMap((s) => s.strata.map((r) => [s.id, ...accuracyCells(r)]));
  if (rows.length === 0) return [];
  const ci = `${fmtLevel(a.level)} CI`;
  return [
    h3('Accuracy by stratum'),
    para(`Over the ${a.kept} kept questions, as the summary's Acc per stratum and overall.`),
    {
      kind: 'table',
      head: ['system', 'stratum', 'graded', 'correct', 'accuracy', ci],
      align: ['l', 'l', 'r', 'r', 'r', 'l'],
      rows,
      keyColumns: 2,
    },
  ];
}

/** A protocol's rows in the order it reports them; task-averaged without an interval (it is a mean of means). */
function protocolCells(p: ProtocolAccuracy): string[][] {
  if (p.protocol === 'generic') return [p.withAbstention, p.withoutAbstention].map(accuracyCells);
  if (p.protocol === 'locomo') return [...p.perCategory, p.overall, ...(p.withAdversarial ? [p.withAdversarial] : [])].map(accuracyCells);
  const types = p.perType.length;
  return [
    ...p.perType.map(accuracyCells),
    [`task-averaged (mean of ${types} type accuracies)`, '', '', opt(p.taskAveraged), 'n/a (a mean of means)'],
    ...[p.overall, p.abstention, p.withoutAbstention].map(accuracyCells),
  ];
}

const PROTOCOL_NOTE: Readonly<Record<AnswerLevel['protocol'], string>> = {
  longmemeval:
    "As LongMemEval's script reports them, over the kept questions: accuracy per question type, task-averaged (the mean of the type accuracies), overall over every kept question (micro), and the abstention questions apart with their n; overall without them beside it.",
  locomo:
    "LoCoMo's categories as its own scoring code numbers them, over the kept questions. The overall row is on categories 1-4 (mem0's protocol, which skips category 5); the row with category 5 is shown apart where category 5 was answered.",
  generic: 'Over the kept questions: overall with the abstention questions (correct: saying the history does not tell) and without them.',
};

function protocolBlocks(a: AnswerLevel): Block[] {
  const judged = a.systems.filter((s) => s.protocol !== undefined);
  if (judged.length === 0) return [];
  return [
    h3(`Protocol aggregates (${PROTOCOL_NAME[a.protocol]})`),
    para(PROTOCOL_NOTE[a.protocol]),
    {
      kind: 'table',
      head: ['system', 'aggregate', 'graded', 'correct', 'accuracy', `${fmtLevel(a.level)} CI`],
      align: ['l', 'l', 'r', 'r', 'r', 'l'],
      rows: judged.flatMap((s) => protocolCells(s.protocol as ProtocolAccuracy).map((r) => [s.id, ...r])),
      keyColumns: 2,
    },
  ];
}

function lexicalBlocks(a: AnswerLevel): Block[] {
  const rows = a.systems.flatMap((s) => s.lexical.map((m) => [s.id, m.measure, String(m.n), fmtMean(m.mean)]));
  if (rows.length === 0) return [];
  return [
    h3('Lexical measures'),
    para(
      `Means over the ${a.kept} kept questions (the summary's, for the lexical measures it reports): F1-LoCoMo is LoCoMo's F1 (stemmed tokens, per-category rules), F1-set mem0's (token sets), EM exact match.`,
    ),
    { kind: 'table', head: ['system', 'measure', 'questions', 'mean'], align: ['l', 'l', 'r', 'r'], rows, keyColumns: 2 },
  ];
}

function pairCells(baseline: string, system: string, r: AnswerPairRow, alpha: number): Cell[] {
  const delta = opt(r.delta, fmtDelta);
  const significant = r.pAdjusted !== null && r.pAdjusted < alpha;
  return [
    `${system} vs ${baseline}`,
    r.stratum,
    String(r.n),
    opt(r.baselineAccuracy),
    opt(r.systemAccuracy),
    significant ? { text: delta, strong: true } : delta,
    `${r.onlyBaseline} / ${r.onlySystem}`,
    fmtP(r.p),
    fmtP(r.pAdjusted),
  ];
}

function pairBlocks(a: AnswerLevel, alpha: number): Block[] {
  if (a.pairs.length === 0) return [];
  return [
    h3('Paired comparisons (exact McNemar)'),
    para(
      `Each pair on the kept questions, the same as every other test of comparisons.csv: b = only the baseline correct, c = only the system correct; exact two-sided McNemar p (binomial on b of b + c), Holm-corrected over every test of this table as one family; bold where the corrected p is below ${alpha}. Exploratory: none of these moves the gate.`,
    ),
    {
      kind: 'table',
      head: ['system vs baseline', 'stratum', 'n', 'baseline', 'system', 'delta', 'b / c', 'p', 'p (Holm)'],
      align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      rows: a.pairs.flatMap((p) => p.rows.map((r) => pairCells(p.baseline, p.system, r, alpha))),
      keyColumns: 2,
    },
  ];
}

function attributionBlocks(a: AnswerLevel): Block[] {
  const withIt = a.systems.filter((s) => s.attribution !== undefined);
  if (withIt.length === 0) return [];
  return [
    h3('Attribution: retrieval misses and reader misses'),
    para(
      'Over the kept questions with evidence ids: was any evidence document in the context the reader saw, and was the answer correct. A retrieval miss is a wrong answer without the evidence in the context; a reader miss, a wrong answer with it; both as shares of the wrong answers.',
    ),
    {
      kind: 'table',
      head: [
        'system',
        'questions',
        'in context: correct / wrong',
        'missing: correct / wrong',
        'P(correct | in context)',
        'P(correct | missing)',
        'retrieval misses',
        'reader misses',
        'left out',
      ],
      align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      rows: withIt.map((s) => {
        const t = s.attribution as NonNullable<AnswerSystemLevel['attribution']>;
        return [
          s.id,
          String(t.n),
          `${t.inContextCorrect} / ${t.inContextWrong}`,
          `${t.missingCorrect} / ${t.missingWrong}`,
          opt(t.correctGivenInContext),
          opt(t.correctGivenMissing),
          opt(t.retrievalMisses, pct),
          opt(t.readerMisses, pct),
          String(t.withoutEvidence),
        ];
      }),
    },
  ];
}

function varianceBlocks(a: AnswerLevel): Block[] {
  const judged = a.systems.filter((s) => s.judgeVariance !== undefined);
  if (judged.length === 0) return [];
  const repeated = judged.filter((s) => (s.judgeVariance?.samples ?? 0) > 1);
  const rule = judged[0]?.judgeVariance?.rule ?? '';
  if (repeated.length === 0)
    return [
      h3('Judge variance'),
      para('One judge sample per answer: the judge\'s variance was not measured (judge each answer several times with "samples").'),
    ];
  return [
    h3('Judge variance'),
    para(
      `Each answer judged several times; its grade: ${rule}. Flip rate: the share of an answer's samples that disagree with its majority, over every graded answer of the system (kept or not: it measures the judge).`,
    ),
    {
      kind: 'table',
      head: ['system', 'judge', 'samples', 'answers', 'mean flip rate', 'split answers', 'unreadable samples'],
      align: ['l', 'l', 'r', 'r', 'r', 'r', 'r'],
      rows: judged.map((s) => {
        const v = s.judgeVariance as NonNullable<AnswerSystemLevel['judgeVariance']>;
        const split = v.disagreeingShare === null ? String(v.disagreeing) : `${v.disagreeing} (${pct(v.disagreeingShare)})`;
        return [s.id, s.judge ?? '', String(v.samples), String(v.answers), opt(v.meanFlipRate, pct), split, String(v.failedSamples)];
      }),
    },
  ];
}

function failureBlocks(a: AnswerLevel): Block[] {
  const files = a.systems.flatMap((s) =>
    s.mapping === undefined
      ? []
      : [`${s.id}: ${plural(s.mapping.unmapped, 'answers-file row')} mapped to no question; ${plural(s.mapping.missing, 'question')} with no row`],
  );
  return [
    h3('Failures'),
    para(
      `Questions without a usable answer or grade, by cause: counted here, never graded as wrong; a question any system failed on is left out of every system's measures (${a.kept} of ${a.questions} kept). Not judged: answered, with no judge configured and no grade recorded (lexical measures only).`,
    ),
    {
      kind: 'table',
      head: ['system', 'source', 'questions', 'graded', 'reader failed', 'judge failed', 'skipped: sensitive', 'no outcome', 'not judged'],
      align: ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      rows: a.systems.map((s) => {
        const f = s.failures;
        return [s.id, s.source, String(s.questions), String(s.graded), ...[f.reader, f.judge, f.sensitive, f.missing, f.ungraded].map(String)];
      }),
    },
    ...(files.length === 0 ? [] : [para('How the answers files met the questions:'), { kind: 'list', items: files } as const]),
    ...ownBlocks(a),
  ];
}

/**
 * Each system's accuracy over all of its own graded questions, kept or not: shown only when questions were left
 * out (otherwise it is the kept-question accuracy above), and labelled so it is never read as the summary's.
 */
function ownBlocks(a: AnswerLevel): Block[] {
  if (a.kept === a.questions || !hasGrades(a)) return [];
  return [
    para(
      `Own accuracy: correct over every question the system has a grade for, the ${plural(a.questions - a.kept, 'left-out question')} included where it was graded on them. It is not the summary's Acc nor what the gate compares (both are over the ${a.kept} kept questions, as the tables above); it says what a failure of another system hid.`,
    ),
    {
      kind: 'table',
      head: ['system', 'own graded', 'correct', 'own accuracy', `${fmtLevel(a.level)} CI`],
      align: ['l', 'r', 'r', 'r', 'l'],
      rows: a.systems.map((s) => [s.id, ...accuracyCells(s.ownAccuracy).slice(1)]),
    },
  ];
}

/** What a probe row says against the threshold: within it, or the finding it is. */
function probeStatus(p: AnswerProbeRow, findings: ReturnType<typeof answerAuditFindings>): string {
  if (p.acceptedRate === null) return 'not graded';
  if (findings.fooled.includes(p)) return 'FOOLED (accepted above the threshold)';
  if (findings.goldRejected.includes(p)) return 'REJECTS GOLD (accepted below 1 - threshold)';
  return 'ok';
}

function auditBlocks(audit: AnswerJudgeAuditLevel | undefined): Block[] {
  if (audit === undefined) return [];
  const findings = answerAuditFindings(audit);
  const graded = audit.systems.length === 0 ? 'no answered system (their grades are recorded ones)' : audit.systems.join(', ');
  return [
    h3('Answer judge audit'),
    para(
      `The judge ${audit.judge}, which graded ${graded}, was given probed answers made from ${Math.min(audit.pairs, audit.eligible)} questions (seed ${audit.seed}; drawn from ${audit.eligible} with an answer that is not a rubric, no abstention and no sensitive evidence). A sound judge rejects every probe and accepts the gold control. Threshold (answer.judge.audit.maxAcceptRate): a probe accepted in more than ${pct(audit.maxAcceptRate)}, or the gold in less than ${pct(1 - audit.maxAcceptRate)}, is a finding, a serious warning when the gate decides on Acc. Judge tokens: ${audit.tokens.prompt} / ${audit.tokens.completion}.`,
    ),
    { kind: 'list', items: audit.probes.map((p) => `${p.probe}: ${p.change}`) },
    {
      kind: 'table',
      head: ['probe', 'expected', 'graded', 'accepted', 'accepted rate', `${fmtLevel(0.95)} CI`, 'no verdict', 'status'],
      align: ['l', 'l', 'r', 'r', 'r', 'l', 'r', 'l'],
      rows: audit.probes.map((p) => [
        p.probe,
        p.expected,
        String(p.graded),
        String(p.accepted),
        opt(p.acceptedRate, pct),
        fmtInterval(p.interval),
        String(p.failures),
        probeStatus(p, findings),
      ]),
      keyColumns: 1,
    },
  ];
}

function costBlocks(a: AnswerLevel): Block[] {
  const tokens = (t: AnswerTokens) => `${t.prompt} / ${t.completion}${t.batched === undefined ? '' : ` (batch ${t.batched.prompt} / ${t.batched.completion})`}`;
  return [
    h3('Answer cost'),
    para(
      "Tokens summed over every question, failed requests included (prompt / completion; in brackets those sent through a provider's batch API). Dollars from the config's price table (USD per million tokens, batched tokens at its batchDiscount, half by default); n/a where a model that used tokens has no price.",
    ),
    {
      kind: 'table',
      head: ['system', 'reader', 'reader tokens', 'judge', 'judge tokens', 'reader $', 'judge $', 'total $', '$ per correct'],
      align: ['l', 'l', 'r', 'l', 'r', 'r', 'r', 'r', 'r'],
      rows: a.systems.map((s) => [
        s.id,
        s.reader ?? '',
        tokens(s.cost.reader),
        s.judge ?? '',
        tokens(s.cost.judge),
        fmtUsd(s.cost.readerUsd),
        fmtUsd(s.cost.judgeUsd),
        fmtUsd(s.cost.totalUsd),
        fmtUsd(s.cost.usdPerCorrect),
      ]),
    },
  ];
}

/**
 * The section "Answer accuracy" as blocks (Markdown and HTML): empty when the report has no answer level.
 * `alpha` marks the McNemar rows whose corrected p is below it, as bold means significant everywhere else.
 */
export function answerLevelBlocks(data: Pick<ReportData, 'answerLevel' | 'compare'>): Block[] {
  const a = data.answerLevel;
  if (a === undefined) return [];
  return [
    h2(ANSWER_SECTION),
    para(introText(a)),
    ...strataBlocks(a),
    ...protocolBlocks(a),
    ...lexicalBlocks(a),
    ...pairBlocks(a, data.compare.alpha),
    ...attributionBlocks(a),
    ...varianceBlocks(a),
    ...auditBlocks(a.judgeAudit),
    ...failureBlocks(a),
    ...costBlocks(a),
  ];
}

/** The section's first paragraph: what was answered, over which questions every table is, and how failures count. */
function introText(a: AnswerLevel): string {
  const head = `${a.questions} questions (${PROTOCOL_NAME[a.protocol]} protocol), ${a.systems.length} answered systems.`;
  const what = hasGrades(a) ? 'Every accuracy, lexical mean and test below is' : 'The lexical means below are';
  const kept =
    a.kept === a.questions
      ? `${what} over all ${a.kept} questions (no system failed on any), the questions the summary, comparisons.csv and the gate score.`
      : `${what} over the ${a.kept} kept questions, those every system has a usable answer${hasGrades(a) ? ' and grade' : ''} for: the questions the summary, comparisons.csv and the gate score${hasGrades(a) ? ", so the accuracies are the summary's Acc" : ''}. The ${a.questions - a.kept} others are counted under Failures, never graded as wrong; Failures and Answer cost count every question.`;
  if (!hasGrades(a))
    return `${head} No answer was graded (no answer judge is configured and no grade was recorded): lexical measures only, no accuracy. ${kept}`;
  return `${head} Accuracy is correct answers over graded questions, with ${fmtLevel(a.level)} Wilson intervals. ${kept}`;
}

/** One block as LaTeX: sections unnumbered, tables as longtables (they may break across pages), nothing bold. */
function blockLatex(b: Block, esc: (s: string) => string): string[] {
  if (b.kind === 'heading') return [`\\${b.level === 2 ? 'subsection' : 'subsubsection'}*{${esc(b.text)}}`, ''];
  if (b.kind === 'para') return [esc(b.text), ''];
  if (b.kind === 'list') return ['\\begin{itemize}', ...b.items.map((i) => `\\item ${esc(i)}`), '\\end{itemize}', ''];
  const text = (c: Cell) => esc(typeof c === 'string' ? c : c.text);
  return [
    '{\\small\\setlength{\\tabcolsep}{3pt}',
    `\\begin{longtable}{${b.align.join('')}}`,
    '\\toprule',
    `${b.head.map(esc).join(' & ')} \\\\`,
    '\\midrule',
    '\\endhead',
    ...b.rows.map((r) => `${r.map(text).join(' & ')} \\\\`),
    '\\bottomrule',
    '\\end{longtable}',
    '}',
    '',
  ];
}

/** The section in report.tex (`esc`: latex.ts's escaping); empty without an answer level. */
export function answerLevelLatex(data: Pick<ReportData, 'answerLevel' | 'compare'>, esc: (s: string) => string): string[] {
  return answerLevelBlocks(data).flatMap((b) => blockLatex(b, esc));
}

/** Full precision for CSV, empty for a number that does not exist. */
const num = (x: number | null | undefined): string => (x === null || x === undefined ? '' : String(x));

/**
 * The McNemar tests as comparisons.csv rows, each cell filled by its column name in `header` (the file's own
 * first row), so the rows follow that file's columns: measure `Acc`, test `mcnemar-exact`, family
 * {@link MCNEMAR_FAMILY}, wins / ties / losses = c / both + neither / b; no interval, no MDE.
 */
export function answerComparisonRows(data: Pick<ReportData, 'answerLevel' | 'compare'>, header: readonly string[]): string[][] {
  const a = data.answerLevel;
  if (a === undefined) return [];
  return a.pairs.flatMap((p) =>
    p.rows.map((r) => {
      const cells: Readonly<Record<string, string>> = {
        stratum: r.stratum,
        n: String(r.n),
        measure: 'Acc',
        system: p.system,
        baseline: p.baseline,
        systemMean: num(r.systemAccuracy),
        baselineMean: num(r.baselineAccuracy),
        delta: num(r.delta),
        role: 'exploratory',
        test: 'mcnemar-exact',
        p: num(r.p),
        pAdjusted: num(r.pAdjusted),
        nearAlpha: 'false',
        family: MCNEMAR_FAMILY,
        significant: String(r.pAdjusted !== null && r.pAdjusted < data.compare.alpha),
        wins: String(r.onlySystem),
        ties: String(r.both + r.neither),
        losses: String(r.onlyBaseline),
      };
      return header.map((h) => cells[h] ?? '');
    }),
  );
}

/** answers.csv rows of one system: its strata, its protocol's aggregates, then its own-graded accuracy. */
function answerCsvRows(s: AnswerSystemLevel, level: number): string[][] {
  const row = (group: string, r: AccuracyRow): string[] => [
    s.id,
    s.source,
    group,
    r.label,
    String(r.n),
    String(r.correct),
    num(r.accuracy),
    num(r.interval?.[0]),
    num(r.interval?.[1]),
    String(level),
  ];
  const p = s.protocol;
  const protocol: string[][] =
    p === undefined
      ? []
      : p.protocol === 'generic'
        ? [p.withAbstention, p.withoutAbstention].map((r) => row('generic', r))
        : p.protocol === 'locomo'
          ? [...p.perCategory, p.overall, ...(p.withAdversarial ? [p.withAdversarial] : [])].map((r) => row('locomo', r))
          : [
              ...p.perType.map((r) => row('longmemeval', r)),
              [s.id, s.source, 'longmemeval', 'task-averaged', '', '', num(p.taskAveraged), '', '', ''],
              ...[p.overall, p.abstention, p.withoutAbstention].map((r) => row('longmemeval', r)),
            ];
  const own = s.graded === 0 ? [] : [row('own', s.ownAccuracy)];
  return [...s.strata.map((r) => row('stratum', r)), ...protocol, ...own];
}

/**
 * `answers.csv`: one row per system x stratum and per system x protocol aggregate (over the kept questions),
 * then the system's accuracy over its own graded questions (group `own`), with graded questions, correct
 * answers, accuracy and its Wilson interval at full precision; undefined without an answer level.
 */
export function renderAnswersCsv(data: Pick<ReportData, 'answerLevel'>): string | undefined {
  const a = data.answerLevel;
  if (a === undefined) return undefined;
  const head = ['system', 'source', 'group', 'label', 'n', 'correct', 'accuracy', 'ciLo', 'ciHi', 'level'];
  return stringify([head, ...a.systems.flatMap((s) => answerCsvRows(s, a.level))]);
}
