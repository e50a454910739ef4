import { UsageError } from '../errors.js';
import { atol, type TrecEvalSettings } from '../metrics/trec-eval.js';
import { defineCommand } from './io.js';

/**
 * `harness eval [trec_eval flags] QRELS RUN`: trec_eval, byte for byte. The flags are trec_eval's and are
 * read with getopt_long's rules (attached values `-mP.5`, `-l2`, `-M100`; grouped flags `-qc`; options
 * after the file names), so every trec_eval command line works unchanged. yargs only sees `--format`.
 */

export type EvalFormat = 'trec' | 'table' | 'csv' | 'json';

/** What a trec_eval command line asks for. */
export interface EvalArgs {
  readonly settings: TrecEvalSettings;
  readonly qrelsPath: string;
  readonly runPath: string;
}

const SHORT_WITH_ARG = new Set(['m', 'l', 'D', 'N', 'M', 'R', 'T', 'Z']);
const SHORT_FLAGS = new Set(['h', 'v', 'q', 'c', 'n', 'J', 'o']);
const LONG: Readonly<Record<string, string>> = {
  help: 'h', version: 'v', query_eval_wanted: 'q', measure: 'm', complete_rel_info_wanted: 'c', level_for_rel: 'l',
  nosummary: 'n', Debug_level: 'D', Judged_docs_only: 'J', Number_docs_in_coll: 'N', Max_retrieved_per_topic: 'M',
  Rel_info_format: 'R', Results_format: 'T', Output_old_results_format: 'o', Zscore: 'Z',
};

/** Parses trec_eval's command line (getopt_long "hvqm:cl:nD:JN:M:R:T:oZ:", with argument permutation). */
export function parseTrecEvalArgs(argv: readonly string[]): EvalArgs {
  const opts: { name: string; value?: string }[] = [];
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const key = a.slice(2, eq < 0 ? undefined : eq);
      const matches = Object.keys(LONG).filter((k) => k === key || k.startsWith(key));
      const exact = matches.includes(key) ? key : matches.length === 1 ? matches[0] : undefined;
      if (exact === undefined) throw new UsageError(`${matches.length > 1 ? 'ambiguous' : 'unknown'} option '--${key}'`, { hint: 'see `harness eval --help`' });
      const short = LONG[exact]!;
      if (SHORT_WITH_ARG.has(short)) {
        const value = eq >= 0 ? a.slice(eq + 1) : argv[++i];
        if (value === undefined) throw new UsageError(`option '--${exact}' needs a value`);
        opts.push({ name: short, value });
      } else opts.push({ name: short });
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        if (SHORT_WITH_ARG.has(c)) {
          const rest = a.slice(j + 1);
          const value = rest !== '' ? rest : argv[++i];
          if (value === undefined) throw new UsageError(`option '-${c}' needs a value`);
          opts.push({ name: c, value });
          break;
        }
        if (!SHORT_FLAGS.has(c)) throw new UsageError(`unknown option '-${c}' in '${a}'`, { hint: 'trec_eval options: -q -m measure -c -l N -M N -J -n -N N; see `harness eval --help`' });
        opts.push({ name: c });
      }
      continue;
    }
    positional.push(a);
  }
  let perQuery = false;
  let summary = true;
  let averageComplete = false;
  let judgedOnly = false;
  let relevanceLevel = 1;
  let maxDocs: number | undefined;
  let numDocsInColl = 0;
  const measures: string[] = [];
  for (const o of opts) {
    switch (o.name) {
      case 'q': perQuery = true; break;
      case 'c': averageComplete = true; break;
      case 'n': summary = false; break;
      case 'J': judgedOnly = true; break;
      case 'o': break;
      case 'm': measures.push(o.value!); break;
      case 'l': relevanceLevel = atol(o.value!); break;
      case 'M': maxDocs = atol(o.value!); break;
      case 'N': numDocsInColl = atol(o.value!); break;
      case 'D': if (atol(o.value!) !== 0) throw new UsageError('-D (debug output) is not supported'); break;
      case 'R': if (o.value !== 'qrels') throw new UsageError(`-R ${o.value}: only the 'qrels' relevance format is supported (not prefs, qrels_prefs, qrels_jg)`); break;
      case 'T': if (o.value !== 'trec_results') throw new UsageError(`-T ${o.value}: only the 'trec_results' run format is supported`); break;
      case 'Z': throw new UsageError('-Z (z-scores against a reference file) is not supported');
      case 'h': throw new UsageError('for help run `harness eval --help`');
      case 'v': throw new UsageError('harness eval reproduces trec_eval 10.0; it has no separate version (see `harness --help`)');
    }
  }
  if (positional.length !== 2) {
    throw new UsageError(`expected QRELS and RUN files, got ${positional.length} file argument${positional.length === 1 ? '' : 's'}${positional.length ? `: ${positional.join(' ')}` : ''}`, {
      hint: 'usage: harness eval [-q] [-m measure[.params]]... [-c] [-l N] [-M N] [-J] QRELS RUN',
    });
  }
  return {
    settings: { perQuery, summary, averageComplete, judgedOnly, relevanceLevel, maxDocs, numDocsInColl, measures },
    qrelsPath: positional[0]!,
    runPath: positional[1]!,
  };
}

export const evalCommand = defineCommand({
  command: 'eval [args..]',
  describe: 'Evaluate a TREC run against TREC qrels, exactly as trec_eval (same flags, same output)',
  builder: (y) =>
    y
      .usage(
        [
          'harness eval [trec_eval options] QRELS RUN',
          '',
          'trec_eval options (trec_eval 10.0 syntax and output):',
          '  -q                  also print every query',
          '  -m measure[.params] measures to print; repeatable; nicknames official (default), all_trec, set',
          '                      e.g. -m P.5,10  -m ndcg_cut.10  -m ndcg.1=3,2=9  -m all_trec',
          '  -c                  average over all qrels queries (missing run queries score 0)',
          '  -l N                grades >= N are relevant (default 1)',
          '  -M N                evaluate only the top N documents of each query',
          '  -J                  drop unjudged documents before measuring (misleading; trec_eval warns too)',
          '  -n                  no summary',
          '  -N N                collection size (utility)',
        ].join('\n'),
      )
      .parserConfiguration({
        // trec_eval flags must reach our getopt untouched: `-mrelstring.20`, `-l2`, options after files.
        'unknown-options-as-args': true,
        'short-option-groups': false,
        'dot-notation': false,
        'camel-case-expansion': false,
        'parse-numbers': false,
        'parse-positional-numbers': false,
      })
      .positional('args', { type: 'string', array: true, describe: 'trec_eval options, then QRELS and RUN' })
      .option('format', {
        choices: ['trec', 'table', 'csv', 'json'] as const,
        default: 'trec' as const,
        describe: 'trec: trec_eval text; table/csv/json: canonical measure names (nDCG@10, P(rel=2)@5)',
      })
      .option('threads', {
        type: 'string',
        default: 'auto',
        describe:
          'threads for runs of 32 MB or more: a number, or auto (all cores when the qrels are small next to the run, since each thread indexes them)',
      })
      .example('harness eval qrels.txt run.txt', "trec_eval's official measures")
      .example('harness eval -q -m all_trec qrels.txt run.txt', 'every measure, every query')
      .example('harness eval -m ndcg_cut.10 -m P.5 --format csv qrels.txt run.txt', 'canonical names in CSV'),
  async run(args, io) {
    const raw = ((args as unknown as { args?: unknown[] }).args ?? []).map(String);
    const parsed = parseTrecEvalArgs(raw);
    const { runEval } = await import('../metrics/eval-cli.js');
    const t = String(args.threads);
    const threads = t === 'auto' ? 'auto' : Number(t);
    if (threads !== 'auto' && (!Number.isInteger(threads) || threads < 1)) throw new UsageError(`--threads ${t}: give a positive integer or auto`);
    await runEval(parsed, args.format as EvalFormat, io, threads);
  },
});
