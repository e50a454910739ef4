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
        describe: 'the kappa the check reads (binary: relevant at grade >= 2)',
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
    const { formatKappaReport, KAPPA_MIN_LABELS } = await import('../kappa/report.js');
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
          threshold: args.threshold,
          resamples: args.resamples,
          level: args.level,
          ...(args.disagreements === undefined ? {} : { disagreements: resolve(io.cwd, args.disagreements) }),
        },
        { input: stdin.iterator({ destroyOnReturn: false }), write: (t) => void process.stderr.write(t), log: io.log },
      );
      if (result.report) io.out(formatKappaReport(result.report));
      const r = result.report;
      // The numbers are printed (they show how far the labels go); the check itself is refused, exit 1.
      if (r?.check === 'TOO-FEW') {
        const { HarnessError } = await import('../errors.js');
        const skipped = result.session?.labels.filter((l) => l === 'skip').length ?? 0;
        throw new HarnessError(
          `kappa check not made: ${r.n} labelled pairs${skipped > 0 ? ` (${skipped} skipped)` : ''}, it needs at least ${r.minimum} (${KAPPA_MIN_LABELS}, or every judged pair when the judgments hold fewer; they hold ${r.judged})`,
          {
            hint: `label more pairs: start a session of ${r.minimum} or more (--session NEW_FILE --sample ${Math.max(r.minimum, args.sample ?? 0)}), or add lines to the labels file`,
          },
        );
      }
    } finally {
      // stdin stays open (not destroyed on quit), so the terminal is put back in cooked mode here.
      if (raw) stdin.setRawMode(false);
      stdin.pause();
    }
  },
});

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
