import { GateExitError, UsageError } from '../errors.js';
import { verdictSentence } from '../decision/verdict.js';
import type { CompareConfigInput, Correction, GateRule, TestKind } from '../compare/config.js';
import type { ReportData, ReportInput } from '../decision/types.js';
import { defineCommand } from './io.js';

/** Quotes a word for a POSIX shell when it needs it, so the recorded command can be pasted back. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./@=:,+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Splits `--measures` values at top-level commas (`nDCG@10,R@100`), leaving the commas inside a measure's
 * parameters (`P(rel=2)@5`, `nDCG(gains={1:1,2:3})`) alone.
 */
export function splitMeasureList(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    let depth = 0;
    let start = 0;
    for (let i = 0; i < v.length; i++) {
      const c = v[i];
      if (c === '(' || c === '{') depth++;
      else if (c === ')' || c === '}') depth--;
      else if (c === ',' && depth === 0) {
        out.push(v.slice(start, i));
        start = i + 1;
      }
    }
    out.push(v.slice(start));
  }
  return out.map((m) => m.trim()).filter((m) => m !== '');
}

/** The flags of `harness compare` as yargs gives them (camel case). */
interface CompareArgs {
  readonly runs: readonly string[];
  readonly qrels: string;
  readonly baseline?: string | undefined;
  readonly measures?: readonly string[] | undefined;
  readonly strata?: string | undefined;
  readonly out?: string | undefined;
  readonly name?: string | undefined;
  readonly test?: TestKind | undefined;
  readonly correction?: Correction | undefined;
  readonly allPairs?: boolean | undefined;
  readonly permutations?: number | undefined;
  readonly resamples?: number | undefined;
  readonly seed?: number | undefined;
  readonly alpha?: number | undefined;
  readonly gate?: string | undefined;
  readonly gateMeasure?: string | undefined;
  readonly gateRule?: GateRule | undefined;
  readonly gateMinDelta?: number | undefined;
  readonly gateMargin?: number | undefined;
  readonly gateExit: boolean;
}

/**
 * A run argument that is no file but reads as a measure: each `--measures` takes one value, so the measures
 * after the first were read as run files.
 */
async function refuseMeasureRuns(runs: readonly string[], cwd: string): Promise<void> {
  const { existsSync } = await import('node:fs');
  const { resolve } = await import('node:path');
  const { parseMeasure } = await import('../metrics/measure.js');
  for (const r of runs) {
    if (existsSync(resolve(cwd, r))) continue;
    let measureLike = false;
    try {
      parseMeasure(r);
      measureLike = true;
    } catch {
      // not a measure either: compareInput reports the missing file
    }
    if (measureLike) {
      throw new UsageError(`"${r}" is not a run file; it reads as a measure`, {
        hint: 'give several measures as --measures nDCG@10,R@100 (or repeat --measures); each --measures takes one value',
      });
    }
  }
}

/** The gate's flags mean nothing without `--gate CANDIDATE`. */
function checkGateFlags(args: CompareArgs): void {
  const gateFlags = (['gateMeasure', 'gateRule', 'gateMinDelta', 'gateMargin'] as const).filter((k) => args[k] !== undefined);
  if (args.gate === undefined && (gateFlags.length > 0 || args.gateExit)) {
    throw new UsageError(`--${args.gateExit ? 'gate-exit' : 'gate-measure, --gate-rule, --gate-min-delta and --gate-margin'} need --gate CANDIDATE`, {
      hint: 'name the run the gate decides on: --gate <run id>',
    });
  }
}

/** The command that regenerates the report: the flags given, in a fixed order, measures joined by commas. */
function commandWords(args: CompareArgs, measures: readonly string[] | undefined): string[] {
  const words = ['harness', 'compare', ...args.runs, '--qrels', args.qrels];
  if (args.baseline !== undefined) words.push('--baseline', args.baseline);
  if (measures !== undefined) words.push('--measures', measures.join(','));
  if (args.strata !== undefined) words.push('--strata', args.strata);
  if (args.name !== undefined) words.push('--name', args.name);
  if (args.test !== undefined) words.push('--test', args.test);
  if (args.correction !== undefined) words.push('--correction', args.correction);
  if (args.allPairs) words.push('--all-pairs');
  for (const k of ['permutations', 'resamples', 'seed', 'alpha'] as const) if (args[k] !== undefined) words.push(`--${k}`, String(args[k]));
  if (args.gate !== undefined) words.push('--gate', args.gate);
  if (args.gateMeasure !== undefined) words.push('--gate-measure', args.gateMeasure);
  if (args.gateRule !== undefined) words.push('--gate-rule', args.gateRule);
  if (args.gateMinDelta !== undefined) words.push('--gate-min-delta', String(args.gateMinDelta));
  if (args.gateMargin !== undefined) words.push('--gate-margin', String(args.gateMargin));
  if (args.out !== undefined) words.push('--out', args.out);
  return words;
}

/** The `compare:` settings the flags give; the rest keep their defaults. */
function compareFlags(args: CompareArgs): CompareConfigInput {
  return {
    ...(args.baseline === undefined ? {} : { baseline: args.baseline }),
    ...(args.test === undefined ? {} : { test: args.test }),
    ...(args.correction === undefined ? {} : { correction: args.correction }),
    ...(args.allPairs === undefined ? {} : { allPairs: args.allPairs }),
    ...(args.permutations === undefined ? {} : { permutations: args.permutations }),
    ...(args.resamples === undefined ? {} : { resamples: args.resamples }),
    ...(args.seed === undefined ? {} : { seed: args.seed }),
    ...(args.alpha === undefined ? {} : { alpha: args.alpha }),
  };
}

/** The input with the gate the flags declare on `candidate`, its measure one of the input's (default: the first). */
async function withGate(input: ReportInput, args: CompareArgs, candidate: string): Promise<ReportInput> {
  const { formatMeasure, parseMeasure } = await import('../metrics/measure.js');
  const { gateSchema } = await import('../compare/config.js');
  const ids = input.runs.map((r) => r.id);
  if (!ids.includes(candidate))
    throw new UsageError(`--gate ${candidate}: not a run id (runs: ${ids.join(', ')})`, { hint: 'run ids are the run tags, else the file names' });
  const measure = args.gateMeasure === undefined ? input.measures[0]! : formatMeasure(parseMeasure(args.gateMeasure));
  if (!input.measures.includes(measure)) {
    throw new UsageError(`--gate-measure ${args.gateMeasure}: not among the measures (${input.measures.join(', ')})`, { hint: 'add it to --measures' });
  }
  if (args.gateMinDelta !== undefined && !(args.gateMinDelta >= 0)) throw new UsageError(`--gate-min-delta ${args.gateMinDelta}: give a number of 0 or more`);
  if (args.gateRule === 'equivalent' && !(args.gateMargin !== undefined && args.gateMargin > 0))
    throw new UsageError(`--gate-rule equivalent needs --gate-margin above 0${args.gateMargin === undefined ? '' : ` (got ${args.gateMargin})`}`, {
      hint: 'the margin is the difference that does not matter, e.g. --gate-margin 0.01',
    });
  if (args.gateMargin !== undefined && args.gateRule !== 'equivalent') throw new UsageError('--gate-margin is read only by --gate-rule equivalent');
  const gate = gateSchema.parse({
    candidate,
    measure,
    ...(args.gateRule === undefined ? {} : { rule: args.gateRule }),
    ...(args.gateMinDelta === undefined ? {} : { minDelta: args.gateMinDelta }),
    ...(args.gateMargin === undefined ? {} : { margin: args.gateMargin }),
  });
  return { ...input, gate };
}

export const compareCommand = defineCommand({
  command: 'compare <runs..>',
  describe: 'Compare TREC runs against qrels: per-stratum means, paired tests, CIs, corrected p, W/T/L, and a gate',
  builder: (y) =>
    y
      // One value per --measures: a greedy list would swallow the run files written after it.
      .parserConfiguration({ 'greedy-arrays': false })
      .positional('runs', { type: 'string', array: true, demandOption: true, describe: 'two or more TREC run files (gzip read too)' })
      .option('qrels', { type: 'string', demandOption: true, describe: 'qrels: TREC, or BEIR qrels/<split>.tsv (gzip read too)' })
      .option('baseline', { type: 'string', describe: 'run id to compare against (default: the first run)' })
      .option('measures', {
        type: 'string',
        array: true,
        describe: 'measures, comma-separated or --measures repeated (default nDCG@10,R@100,RR,Judged@10); see `harness measures`',
      })
      .option('strata', { type: 'string', describe: 'strata file: queryId<TAB>stratum per line (default: one stratum "all")' })
      .option('out', { type: 'string', describe: 'write report.json and every rendering here (default: print report.md)' })
      .option('name', { type: 'string', describe: 'report name (default "compare")' })
      .option('test', { choices: ['randomization', 't', 'wilcoxon'] as const, describe: 'paired test (default randomization)' })
      .option('correction', {
        choices: ['holm', 'bonferroni', 'bh', 'by', 'hommel', 'none'] as const,
        describe: 'multiple-comparison correction (default holm)',
      })
      .option('all-pairs', { type: 'boolean', describe: 'compare every pair of runs, not only against the baseline' })
      .option('permutations', { type: 'number', describe: 'sign flips of the randomization test (default 10000)' })
      .option('resamples', { type: 'number', describe: 'bootstrap resamples of each CI (default 10000)' })
      .option('seed', { type: 'number', describe: 'seed of every random draw (default 42); an ablation report states its own' })
      .option('alpha', { type: 'number', describe: 'significance level applied to corrected p (default 0.05)' })
      .option('gate', {
        type: 'string',
        group: 'Gate:',
        describe: 'run id of the candidate a gate decides on (ADOPT / REJECT / INCONCLUSIVE) against --baseline',
      })
      .option('gate-measure', { type: 'string', group: 'Gate:', describe: 'primary measure of the gate, one of --measures (default: the first measure)' })
      .option('gate-rule', {
        choices: ['gain-overall-no-loss', 'gain-overall', 'no-loss', 'equivalent'] as const,
        group: 'Gate:',
        describe: 'decision rule (default gain-overall-no-loss; see the README)',
      })
      .option('gate-min-delta', { type: 'number', group: 'Gate:', describe: 'smallest gain that counts, or the non-inferiority margin of no-loss' })
      .option('gate-margin', { type: 'number', group: 'Gate:', describe: 'equivalence margin of every stratum (--gate-rule equivalent)' })
      .option('gate-exit', {
        type: 'boolean',
        default: false,
        group: 'Gate:',
        describe: 'exit 3 when the gate says REJECT (for CI); the report is written first',
      })
      .example('$0 compare runs/bm25.trec runs/hybrid.trec --qrels qrels.test.tsv --strata strata.tsv --out reports/cmp', '')
      .example('$0 compare bm25.trec hybrid.trec --qrels qrels.txt --measures nDCG@10,R@100 --gate hybrid --gate-exit', 'fail CI on a REJECT'),
  async run(args, io) {
    const { join, relative, resolve } = await import('node:path');
    const { compareInput } = await import('../report/from-trec.js');
    const { renderMarkdown } = await import('../report/markdown.js');
    const { buildReportData } = await import('../decision/build.js');
    const { writeReport } = await import('../report/write.js');
    await refuseMeasureRuns(args.runs, io.cwd);
    if (args.runs.length < 2) throw new UsageError(`compare needs at least two run files, got ${args.runs.length}`);
    checkGateFlags(args);
    const measures = args.measures === undefined ? undefined : splitMeasureList(args.measures);
    const input = await compareInput({
      runs: args.runs,
      qrels: args.qrels,
      ...(args.strata === undefined ? {} : { strata: args.strata }),
      ...(measures === undefined ? {} : { measures }),
      ...(args.name === undefined ? {} : { name: args.name }),
      compare: compareFlags(args),
      resolvePath: (p) => resolve(io.cwd, p),
      command: commandWords(args, measures).map(shellWord).join(' '),
    });
    const gated = args.gate === undefined ? input : await withGate(input, args, args.gate);
    let data: ReportData;
    let reportFile: string | undefined;
    if (args.out === undefined) {
      data = buildReportData(gated);
      io.out(renderMarkdown(data));
    } else {
      const dir = resolve(io.cwd, args.out);
      data = (await writeReport(dir, gated)).data;
      reportFile = relative(io.cwd, join(dir, 'report.md')) || 'report.md';
      const verdict = data.decision ? `; gate ${data.decision.headline}` : '';
      io.out(`report: ${reportFile} (${data.comparisons.length} comparisons, ${data.warnings.length} warning(s)${verdict})\n`);
    }
    const d = data.decision;
    if (args.gateExit && d !== undefined && d.exitCode !== 0) throw new GateExitError(verdictSentence(d), d.exitCode, reportFile);
  },
});
