import { UsageError } from '../errors.js';
import { defineCommand } from './io.js';

/** Quotes a word for a POSIX shell when it needs it, so the recorded command can be pasted back. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./@=:,+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export const compareCommand = defineCommand({
  command: 'compare <runs..>',
  describe: 'Compare TREC runs against qrels: per-stratum means, paired tests, CIs, corrected p, W/T/L',
  builder: (y) =>
    y
      .positional('runs', { type: 'string', array: true, demandOption: true, describe: 'two or more TREC run files' })
      .option('qrels', { type: 'string', demandOption: true, describe: 'TREC qrels file' })
      .option('baseline', { type: 'string', describe: 'run id to compare against (default: the first run)' })
      .option('measures', { type: 'string', array: true, describe: 'measures (default nDCG@10 R@100 RR Judged@10)' })
      .option('strata', { type: 'string', describe: 'strata file: queryId<TAB>stratum per line (default: one stratum "all")' })
      .option('out', { type: 'string', describe: 'write report.json and every rendering here (default: print report.md)' })
      .option('name', { type: 'string', describe: 'report name (default "compare")' })
      .option('test', { choices: ['randomization', 't', 'wilcoxon'] as const, describe: 'paired test (default randomization)' })
      .option('correction', { choices: ['holm', 'bonferroni', 'bh', 'by', 'hommel', 'none'] as const, describe: 'multiple-comparison correction (default holm)' })
      .option('all-pairs', { type: 'boolean', describe: 'compare every pair of runs, not only against the baseline' })
      .example('$0 compare runs/bm25.trec runs/hybrid.trec --qrels qrels.test.tsv --strata strata.tsv --out reports/cmp', ''),
  async run(args, io) {
    const { join, relative, resolve } = await import('node:path');
    const { compareInput } = await import('../compare/run.js');
    const { renderMarkdown } = await import('../report/markdown.js');
    const { buildReportData } = await import('../report/build.js');
    const { writeReport } = await import('../report/write.js');
    if (args.runs.length < 2) throw new UsageError(`compare needs at least two run files, got ${args.runs.length}`);
    const words = ['harness', 'compare', ...args.runs, '--qrels', args.qrels];
    if (args.baseline !== undefined) words.push('--baseline', args.baseline);
    if (args.measures !== undefined) words.push('--measures', ...args.measures);
    if (args.strata !== undefined) words.push('--strata', args.strata);
    if (args.name !== undefined) words.push('--name', args.name);
    if (args.test !== undefined) words.push('--test', args.test);
    if (args.correction !== undefined) words.push('--correction', args.correction);
    if (args.allPairs) words.push('--all-pairs');
    if (args.out !== undefined) words.push('--out', args.out);
    const input = await compareInput({
      runs: args.runs,
      qrels: args.qrels,
      ...(args.strata === undefined ? {} : { strata: args.strata }),
      ...(args.measures === undefined ? {} : { measures: args.measures }),
      ...(args.name === undefined ? {} : { name: args.name }),
      compare: {
        ...(args.baseline === undefined ? {} : { baseline: args.baseline }),
        ...(args.test === undefined ? {} : { test: args.test }),
        ...(args.correction === undefined ? {} : { correction: args.correction }),
        ...(args.allPairs === undefined ? {} : { allPairs: args.allPairs }),
      },
      resolvePath: (p) => resolve(io.cwd, p),
      command: words.map(shellWord).join(' '),
    });
    if (args.out === undefined) {
      io.out(renderMarkdown(buildReportData(input)));
      return;
    }
    const dir = resolve(io.cwd, args.out);
    const { data } = await writeReport(dir, input);
    const verdict = data.gateResult ? `; gate ${data.gateResult.verdict}` : '';
    io.out(`report: ${relative(io.cwd, join(dir, 'report.md')) || 'report.md'} (${data.comparisons.length} comparisons, ${data.warnings.length} warning(s)${verdict})\n`);
  },
});
