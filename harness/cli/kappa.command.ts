import type { AnswerKappaReport } from '../kappa/answers-report.js';
import type { KappaReport } from '../kappa/report.js';
import type { KappaRelevance } from '../kappa/relevance.js';
import { type CliIo, defineCommand } from './io.js';

export const kappaCommand = defineCommand({
  command: 'kappa',
  describe: "Hand-verify a stratified sample of an LLM judge's grades (blind, resumable) and report Cohen's kappa against a threshold",
  builder: (y) =>
    y
      .option('judgments', { type: 'string', describe: 'judgments folder written by harness judge: check its relevance grades' })
      .option('answers', {
        type: 'string',
        describe: 'report folder written by harness ablate with an answer level: check its answer judge (question, gold, answer shown)',
      })
      .option('session', { type: 'string', describe: 'session file (default <judgments>/kappa-session.json; required with --answers)' })
      .option('labels', {
        type: 'string',
        describe: 'human labels from a file instead of a session (TREC qrels: queryId 0 docId grade; with --answers: system questionId 1|0)',
      })
      .option('report', { type: 'boolean', default: false, describe: 'print the report of the labels so far; label nothing' })
      .option('sample', { type: 'number', describe: 'pairs to label (default 20% of the judged pairs, at least 50)' })
      .option('by', {
        choices: ['pair', 'query'] as const,
        default: 'pair' as const,
        describe: 'a new session samples pairs, or queries with every judged pair of each (labels by query: also per-query human labels)',
      })
      .option('queries', {
        type: 'number',
        describe:
          'with --by query: queries to sample (default 20% of the judged queries, at least 25); with --answers: questions (default the same, and 10 per stratum)',
      })
      .option('stratum-queries', {
        type: 'string',
        array: true,
        describe: 'with --by query: stratum=N queries for that stratum exactly; repeatable',
      })
      .option('oversample', {
        type: 'string',
        array: true,
        describe: 'stratum=weight in the sample allocation (default multi-hop=2); repeatable',
      })
      .option('seed', { type: 'number', default: 42, describe: 'seed of the sample and the bootstrap' })
      .option('on', {
        choices: ['none', 'linear', 'quadratic', 'binary'] as const,
        default: 'binary' as const,
        describe: "the kappa the check reads (binary: relevant or not, split where the gate's measure first gains)",
      })
      .option('config', {
        type: 'string',
        describe:
          "the study config: the binary kappa splits at the lowest grade its gate's measure gains from (relevanceLevel for P, R, AP...); with --answers: whose eval set gives the gold answers (default the report's)",
      })
      .option('relevant-at', {
        type: 'number',
        describe: 'split the binary kappa here by hand: relevant at this grade 1-3 or above (default 1, or from --config)',
      })
      .option('threshold', { type: 'number', default: 0.6, describe: 'kappa at or above which the judge is trusted' })
      .option('resamples', { type: 'number', default: 2000, describe: 'bootstrap resamples for the intervals' })
      .option('level', { type: 'number', default: 0.95, describe: 'interval level' })
      .option('disagreements', { type: 'string', describe: 'write the pairs where human and judge differ to this CSV' })
      .example('$0 kappa --judgments data/judgments', 'label pairs at the terminal: 0-3, s skip, b back, q quit')
      .example('$0 kappa --judgments data/judgments --by query --queries 40', 'label every judged pair of 40 queries (human labels for an ablation)')
      .example('$0 kappa --judgments data/judgments --report --disagreements disagree.csv', 'report the labels so far')
      .example(
        '$0 kappa --answers reports/example-1a2b3c4d --session answers-session.json',
        "label answers blind: 1 correct, 0 wrong (the judge's grades checked)",
      )
      .example('$0 kappa --answers reports/example-1a2b3c4d --labels answer-labels.tsv', 'check the answer judge against labels made elsewhere'),
  async run(args, io) {
    const { resolve } = await import('node:path');
    const { UsageError } = await import('../errors.js');
    const { runKappa } = await import('../kappa/run.js');
    const { formatKappaReport } = await import('../kappa/report.js');
    const sample = await sampleArgs(args);
    if (args.answers !== undefined) return answerKappa({ ...args, answers: args.answers }, io, sample);
    const { oversample, perStratum } = sample;
    if (args.judgments === undefined)
      throw new UsageError('give --judgments FOLDER (relevance grades of harness judge) or --answers REPORT_DIR (answer grades of harness ablate)');
    if (args.by !== 'query' && (args.queries !== undefined || perStratum !== undefined))
      throw new UsageError('--queries and --stratum-queries sample queries: add --by query');
    if (args.by === 'query' && args.sample !== undefined) throw new UsageError('--sample counts pairs; with --by query give --queries');
    const relevance = await relevanceOf(args.config, args['relevant-at'], io);
    const stdin = process.stdin;
    const raw = stdin.isTTY === true && args.labels === undefined && !args.report;
    if (raw) stdin.setRawMode(true);
    try {
      const result = await runKappa(
        {
          judgments: resolve(io.cwd, args.judgments),
          ...(args.session === undefined ? {} : { session: resolve(io.cwd, args.session) }),
          ...(args.labels === undefined ? {} : { labels: resolve(io.cwd, args.labels) }),
          reportOnly: args.report,
          ...(args.sample === undefined ? {} : { size: args.sample }),
          by: args.by,
          ...(args.queries === undefined ? {} : { queries: args.queries }),
          ...(perStratum === undefined ? {} : { perStratum }),
          ...(oversample === undefined ? {} : { oversample }),
          seed: args.seed,
          on: args.on,
          relevance,
          threshold: args.threshold,
          resamples: args.resamples,
          level: args.level,
          ...(args.disagreements === undefined ? {} : { disagreements: resolve(io.cwd, args.disagreements) }),
        },
        { input: stdin.iterator({ destroyOnReturn: false }), write: (t) => void process.stderr.write(t), log: io.log },
      );
      if (result.report) io.out(formatKappaReport(result.report));
      const skipped = result.session?.labels.filter((l) => l === 'skip').length ?? 0;
      if (result.report) await refuseUnlessPassed(result.report, skipped, args.sample);
    } finally {
      // stdin stays open (not destroyed on quit), so the terminal is put back in cooked mode here.
      if (raw) stdin.setRawMode(false);
      stdin.pause();
    }
  },
});

/** Where the binary kappa splits: `--relevant-at`, the config's deciding measure, or the default. */
async function relevanceOf(config: string | undefined, relevantAt: number | undefined, io: { env: NodeJS.ProcessEnv; cwd: string }): Promise<KappaRelevance> {
  const { kappaRelevance } = await import('../kappa/relevance.js');
  if (config === undefined) return kappaRelevance(relevantAt === undefined ? {} : { relevantAt });
  const { loadConfig } = await import('../config/load.js');
  const cfg = loadConfig(config, { env: io.env, cwd: io.cwd });
  return kappaRelevance({ ...(relevantAt === undefined ? {} : { relevantAt }), config: cfg });
}

/**
 * Exit 1 unless the check passed: the numbers are printed first (they show how far the labels go), then the
 * reason: too few labels, a FAIL, or an UNDEFINED kappa (one category only), which cannot vouch for the judge.
 */
async function refuseUnlessPassed(r: KappaReport, skipped: number, sample: number | undefined): Promise<void> {
  if (r.check === 'PASS') return;
  const { HarnessError } = await import('../errors.js');
  const { KAPPA_MIN_LABELS } = await import('../kappa/report.js');
  if (r.check === 'TOO-FEW')
    throw new HarnessError(
      `kappa check not made: ${r.n} labelled pairs${skipped > 0 ? ` (${skipped} skipped)` : ''}, it needs at least ${r.minimum} (${KAPPA_MIN_LABELS}, or every judged pair when the judgments hold fewer; they hold ${r.judged})`,
      {
        hint: `label more pairs: start a session of ${r.minimum} or more (--session NEW_FILE --sample ${Math.max(r.minimum, sample ?? 0)}), or add lines to the labels file`,
      },
    );
  if (r.check === 'FAIL')
    throw new HarnessError('kappa check FAIL: the judge does not agree with the hand labels enough to score on its grades', {
      hint: 'read the disagreements (--disagreements FILE), fix the judge or its prompt, judge again and label a new sample',
    });
  throw new HarnessError('kappa check UNDEFINED: both raters used one category only, so kappa cannot say whether the judge tells relevant from not', {
    hint: 'label a sample that holds both relevant and not relevant pairs (--by query, or --oversample a stratum with relevant pairs)',
  });
}

/** `stratum=N` entries as counts; a malformed one is a usage error naming it. */
function stratumCounts(entries: readonly string[] | undefined, UsageError: typeof import('../errors.js').UsageError): Record<string, number> | undefined {
  if (entries === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const entry of entries) {
    const m = /^([^=]+)=(\d+)$/.exec(entry);
    if (!m || !(Number(m[2]) > 0)) throw new UsageError(`--stratum-queries ${entry}: give stratum=N with a whole N above 0, e.g. multi-hop=10`);
    out[m[1] as string] = Number(m[2]);
  }
  return out;
}

/** The flags the sampling and check helpers read, as yargs gives them. */
interface KappaFlags {
  readonly answers?: string | undefined;
  readonly judgments?: string | undefined;
  readonly session?: string | undefined;
  readonly labels?: string | undefined;
  readonly report: boolean;
  readonly sample?: number | undefined;
  readonly by: 'pair' | 'query';
  readonly queries?: number | undefined;
  readonly 'stratum-queries'?: string[] | undefined;
  readonly oversample?: string[] | undefined;
  readonly seed: number;
  readonly on: string;
  readonly config?: string | undefined;
  readonly 'relevant-at'?: number | undefined;
  readonly threshold: number;
  readonly resamples: number;
  readonly level: number;
  readonly disagreements?: string | undefined;
}

/** The sample's and the check's flags, checked alike for relevance and answer sessions: a bad one is a usage error naming it. */
async function sampleArgs(args: KappaFlags): Promise<{ oversample?: Record<string, number>; perStratum?: Record<string, number> }> {
  const { UsageError } = await import('../errors.js');
  let oversample: Record<string, number> | undefined;
  if (args.oversample !== undefined) {
    oversample = {};
    for (const entry of args.oversample) {
      const m = /^([^=]+)=(\d+(?:\.\d+)?)$/.exec(entry);
      if (!m || !(Number(m[2]) > 0)) throw new UsageError(`--oversample ${entry}: give stratum=weight with a weight above 0, e.g. multi-hop=2`);
      oversample[m[1] as string] = Number(m[2]);
    }
  }
  const perStratum = stratumCounts(args['stratum-queries'], UsageError);
  const positive = (flag: string, v: number | undefined) => {
    if (v !== undefined && !(Number.isInteger(v) && v > 0)) throw new UsageError(`--${flag} ${v}: give a whole number above 0`);
  };
  positive('sample', args.sample);
  positive('queries', args.queries);
  positive('resamples', args.resamples);
  if (!(args.level > 0 && args.level < 1)) throw new UsageError(`--level ${args.level}: give a level between 0 and 1, e.g. 0.95`);
  if (!(args.threshold >= -1 && args.threshold <= 1)) throw new UsageError(`--threshold ${args.threshold}: kappa lies in [-1, 1]`);
  return { ...(oversample === undefined ? {} : { oversample }), ...(perStratum === undefined ? {} : { perStratum }) };
}

/** The relevance session's flags that mean nothing for answers, each refused with what to give instead. */
function answerFlagProblem(args: KappaFlags): string | undefined {
  if (args.judgments !== undefined) return '--judgments and --answers name two things to check: give one';
  if (args.by === 'query') return "--by query samples relevance judgments; an answer session always samples questions, with every system's answer to each";
  if (args.sample !== undefined) return '--sample counts judged pairs; with --answers give --queries (questions)';
  if (args.on !== 'binary') return `--on ${args.on}: an answer is graded correct or wrong, so there is one kappa; leave out --on`;
  if (args['relevant-at'] !== undefined) return '--relevant-at splits relevance grades; answer grades are correct or wrong already';
  return undefined;
}

/** `harness kappa --answers`: the answer judge of a report checked against a session's labels or a labels file. */
async function answerKappa(
  args: KappaFlags & { answers: string },
  io: CliIo,
  sample: { oversample?: Record<string, number>; perStratum?: Record<string, number> },
): Promise<void> {
  const { resolve } = await import('node:path');
  const { UsageError } = await import('../errors.js');
  const problem = answerFlagProblem(args);
  if (problem !== undefined) throw new UsageError(problem);
  const { runAnswerKappa } = await import('../kappa/answers.js');
  const { formatAnswerKappaReport } = await import('../kappa/answers-report.js');
  const stdin = process.stdin;
  const raw = stdin.isTTY === true && args.labels === undefined && !args.report;
  if (raw) stdin.setRawMode(true);
  try {
    const result = await runAnswerKappa(
      {
        report: resolve(io.cwd, args.answers),
        ...(args.session === undefined ? {} : { session: resolve(io.cwd, args.session) }),
        ...(args.labels === undefined ? {} : { labels: resolve(io.cwd, args.labels) }),
        reportOnly: args.report,
        ...(args.config === undefined ? {} : { config: resolve(io.cwd, args.config) }),
        ...(args.queries === undefined ? {} : { questions: args.queries }),
        ...sample,
        seed: args.seed,
        threshold: args.threshold,
        resamples: args.resamples,
        level: args.level,
        ...(args.disagreements === undefined ? {} : { disagreements: resolve(io.cwd, args.disagreements) }),
      },
      { input: stdin.iterator({ destroyOnReturn: false }), write: (t) => void process.stderr.write(t), log: io.log, env: io.env, cwd: io.cwd },
    );
    if (result.report) {
      io.out(formatAnswerKappaReport(result.report));
      await refuseAnswersUnlessPassed(result.report, result.session?.labels.filter((l) => l === 'skip').length ?? 0);
    }
  } finally {
    if (raw) stdin.setRawMode(false);
    stdin.pause();
  }
}

/** Exit 1 unless the answer kappa check passed, after its numbers are printed: the relevance check's rule and codes. */
async function refuseAnswersUnlessPassed(r: AnswerKappaReport, skipped: number): Promise<void> {
  if (r.check === 'PASS') return;
  const { HarnessError } = await import('../errors.js');
  const { KAPPA_MIN_LABELS } = await import('../kappa/report.js');
  if (r.check === 'TOO-FEW')
    throw new HarnessError(
      `kappa check not made: ${r.n} labelled answers${skipped > 0 ? ` (${skipped} skipped)` : ''}, it needs at least ${r.minimum} (${KAPPA_MIN_LABELS}, or every graded answer when the report holds fewer; it holds ${r.graded})`,
      { hint: 'label more answers: start a new session of more questions (--session NEW_FILE --queries N), or add lines to the labels file' },
    );
  if (r.check === 'FAIL')
    throw new HarnessError('kappa check FAIL: the answer judge does not agree with the hand labels enough to score on its grades', {
      hint: 'read the disagreements (--disagreements FILE), fix answer.judge (model, profile or prompt files), ablate again and label a new sample',
    });
  throw new HarnessError('kappa check UNDEFINED: both raters called every answer the same, so kappa cannot say whether the judge tells right from wrong', {
    hint: 'label a sample holding right and wrong answers (more questions, or a weaker system beside)',
  });
}
