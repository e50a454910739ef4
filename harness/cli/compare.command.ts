import { GateRejectError, UsageError } from '../errors.js';
import type { ReportData } from '../report/types.js';
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
        choices: ['gain-overall-no-loss', 'gain-overall', 'no-loss'] as const,
        group: 'Gate:',
        describe: 'decision rule (default gain-overall-no-loss; see the README)',
      })
      .option('gate-min-delta', { type: 'number', group: 'Gate:', describe: 'smallest gain that counts, or the non-inferiority margin of no-loss' })
      .option('gate-exit', {
        type: 'boolean',
        default: false,
        group: 'Gate:',
        describe: 'exit 3 when the gate says REJECT (for CI); the report is written first',
      })
      .example('$0 compare runs/bm25.trec runs/hybrid.trec --qrels qrels.test.tsv --strata strata.tsv --out reports/cmp', '')
      .example('$0 compare bm25.trec hybrid.trec --qrels qrels.txt --measures nDCG@10,R@100 --gate hybrid --gate-exit', 'fail CI on a REJECT'),
  async run(args, io) {
    const { existsSync } = await import('node:fs');
    const { join, relative, resolve } = await import('node:path');
    const { compareInput } = await import('../report/from-trec.js');
    const { renderMarkdown } = await import('../report/markdown.js');
    const { buildReportData } = await import('../report/build.js');
    const { writeReport } = await import('../report/write.js');
    const { formatMeasure, parseMeasure } = await import('../metrics/measure.js');
    const { gateSchema } = await import('../compare/config.js');
    for (const r of args.runs) {
      if (existsSync(resolve(io.cwd, r))) continue;
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
    if (args.runs.length < 2) throw new UsageError(`compare needs at least two run files, got ${args.runs.length}`);
    const gateFlags = (['gateMeasure', 'gateRule', 'gateMinDelta'] as const).filter((k) => args[k] !== undefined);
    if (args.gate === undefined && (gateFlags.length > 0 || args.gateExit)) {
      throw new UsageError(`--${args.gateExit ? 'gate-exit' : 'gate-measure, --gate-rule and --gate-min-delta'} need --gate CANDIDATE`, {
        hint: 'name the run the gate decides on: --gate <run id>',
      });
    }
    const measures = args.measures === undefined ? undefined : splitMeasureList(args.measures);
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
    if (args.out !== undefined) words.push('--out', args.out);
    const input = await compareInput({
      runs: args.runs,
      qrels: args.qrels,
      ...(args.strata === undefined ? {} : { strata: args.strata }),
      ...(measures === undefined ? {} : { measures }),
      ...(args.name === undefined ? {} : { name: args.name }),
      compare: {
        ...(args.baseline === undefined ? {} : { baseline: args.baseline }),
        ...(args.test === undefined ? {} : { test: args.test }),
        ...(args.correction === undefined ? {} : { correction: args.correction }),
        ...(args.allPairs === undefined ? {} : { allPairs: args.allPairs }),
        ...(args.permutations === undefined ? {} : { permutations: args.permutations }),
        ...(args.resamples === undefined ? {} : { resamples: args.resamples }),
        ...(args.seed === undefined ? {} : { seed: args.seed }),
        ...(args.alpha === undefined ? {} : { alpha: args.alpha }),
      },
      resolvePath: (p) => resolve(io.cwd, p),
      command: words.map(shellWord).join(' '),
    });
    let gated = input;
    if (args.gate !== undefined) {
      const ids = input.runs.map((r) => r.id);
      if (!ids.includes(args.gate))
        throw new UsageError(`--gate ${args.gate}: not a run id (runs: ${ids.join(', ')})`, { hint: 'run ids are the run tags, else the file names' });
      const measure = args.gateMeasure === undefined ? input.measures[0]! : formatMeasure(parseMeasure(args.gateMeasure));
      if (!input.measures.includes(measure)) {
        throw new UsageError(`--gate-measure ${args.gateMeasure}: not among the measures (${input.measures.join(', ')})`, { hint: 'add it to --measures' });
      }
      if (args.gateMinDelta !== undefined && !(args.gateMinDelta >= 0))
        throw new UsageError(`--gate-min-delta ${args.gateMinDelta}: give a number of 0 or more`);
      const gate = gateSchema.parse({
        candidate: args.gate,
        measure,
        ...(args.gateRule === undefined ? {} : { rule: args.gateRule }),
        ...(args.gateMinDelta === undefined ? {} : { minDelta: args.gateMinDelta }),
      });
      gated = { ...input, gate };
    }
    let data: ReportData;
    let reportFile: string | undefined;
    if (args.out === undefined) {
      data = buildReportData(gated);
      io.out(renderMarkdown(data));
    } else {
      const dir = resolve(io.cwd, args.out);
      data = (await writeReport(dir, gated)).data;
      reportFile = relative(io.cwd, join(dir, 'report.md')) || 'report.md';
      const verdict = data.gateResult ? `; gate ${data.gateResult.verdict}` : '';
      io.out(`report: ${reportFile} (${data.comparisons.length} comparisons, ${data.warnings.length} warning(s)${verdict})\n`);
    }
    if (args.gateExit && data.gateResult?.verdict === 'REJECT') throw new GateRejectError(data.gateResult.reason, reportFile);
  },
});
