import type { KappaReport } from '../kappa/report.js';
import type { KappaRelevance } from '../kappa/relevance.js';
import { defineCommand } from './io.js';

export const kappaCommand = defineCommand({
  command: 'kappa',
  describe: "Hand-verify a stratified sample of an LLM judge's grades (blind, resumable) and report Cohen's kappa against a threshold",
  builder: (y) =>
    y
      .option('judgments', { type: 'string', demandOption: true, describe: 'judgments folder written by harness judge' })
      .option('session', { type: 'string', describe: 'session file (default <judgments>/kappa-session.json)' })
      .option('labels', { type: 'string', describe: 'human labels from a file (TREC qrels: queryId 0 docId grade) instead of a session' })
      .option('report', { type: 'boolean', default: false, describe: 'print the report of the labels so far; label nothing' })
      .option('sample', { type: 'number', describe: 'pairs to label (default 20% of the judged pairs, at least 50)' })
      .option('by', {
        choices: ['pair', 'query'] as const,
        default: 'pair' as const,
        describe: 'a new session samples pairs, or queries with every judged pair of each (labels by query: also per-query human labels)',
      })
      .option('queries', { type: 'number', describe: 'with --by query: queries to sample (default 20% of the judged queries, at least 25)' })
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
        describe: "the study config: the binary kappa splits at the lowest grade its gate's measure gains from (relevanceLevel for P, R, AP...)",
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
      .example('$0 kappa --judgments data/judgments --report --disagreements disagree.csv', 'report the labels so far'),
  async run(args, io) {
    const { resolve } = await import('node:path');
    const { UsageError } = await import('../errors.js');
    const { runKappa } = await import('../kappa/run.js');
    const { formatKappaReport } = await import('../kappa/report.js');
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
    if (args.by !== 'query' && (args.queries !== undefined || perStratum !== undefined))
      throw new UsageError('--queries and --stratum-queries sample queries: add --by query');
    if (args.by === 'query' && args.sample !== undefined) throw new UsageError('--sample counts pairs; with --by query give --queries');
    const positive = (flag: string, v: number | undefined) => {
      if (v !== undefined && !(Number.isInteger(v) && v > 0)) throw new UsageError(`--${flag} ${v}: give a whole number above 0`);
    };
    positive('sample', args.sample);
    positive('queries', args.queries);
    positive('resamples', args.resamples);
    if (!(args.level > 0 && args.level < 1)) throw new UsageError(`--level ${args.level}: give a level between 0 and 1, e.g. 0.95`);
    if (!(args.threshold >= -1 && args.threshold <= 1)) throw new UsageError(`--threshold ${args.threshold}: kappa lies in [-1, 1]`);
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
