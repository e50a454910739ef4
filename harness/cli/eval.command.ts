import { closest } from '../util/suggest.js';
import { UsageError } from '../errors.js';
import {
  ANSWER_MEASURE_NAMES,
  describeMeasures,
  formatMeasure,
  isAnswerMeasure,
  parseMeasure,
  TREC_NICKNAMES,
  trecEvalSpelling,
  type Measure,
} from '../metrics/measure.js';
import { TREC_MEASURE_NAMES, UNREAD_TREC_NAMES } from '../trec-eval/plan.js';
import type { TrecEvalSettings } from '../trec-eval/plan.js';
import type { EvalArgs, EvalFormat } from './eval-args.js';
import { defineCommand } from './io.js';

/**
 * `harness eval [trec_eval flags] QRELS RUN`: trec_eval, byte for byte. The flags are trec_eval's and are
 * read with getopt_long's rules (attached values `-mP.5`, `-l2`, `-M100`; grouped flags `-qc`; options
 * after the file names), so every trec_eval command line works unchanged. yargs only sees `--format`.
 */

const SHORT_WITH_ARG = new Set(['m', 'l', 'D', 'N', 'M', 'R', 'T', 'Z']);
const SHORT_FLAGS = new Set(['h', 'v', 'q', 'c', 'n', 'J', 'o']);
const LONG: Readonly<Record<string, string>> = {
  help: 'h',
  version: 'v',
  query_eval_wanted: 'q',
  measure: 'm',
  complete_rel_info_wanted: 'c',
  level_for_rel: 'l',
  nosummary: 'n',
  Debug_level: 'D',
  Judged_docs_only: 'J',
  Number_docs_in_coll: 'N',
  Max_retrieved_per_topic: 'M',
  Rel_info_format: 'R',
  Results_format: 'T',
  Output_old_results_format: 'o',
  Zscore: 'Z',
};

/** harness's own flags of `eval`, read by yargs before getopt sees the rest: suggested for a typo too. */
const HARNESS_FLAGS = ['format', 'threads', 'verbose'];

/** One option of a command line: its short name and its value. */
interface Option {
  readonly name: string;
  readonly value?: string;
}

/** Parses trec_eval's command line (getopt_long "hvqm:cl:nD:JN:M:R:T:oZ:", with argument permutation). */
export function parseTrecEvalArgs(argv: readonly string[]): EvalArgs {
  const { opts, positional } = getopt(argv);
  const { settings, version } = settingsOf(opts);
  if (version) return { settings, qrelsPath: '', runPath: '', version };
  if (positional.length !== 2) {
    throw new UsageError(
      `expected QRELS and RUN files, got ${positional.length} file argument${positional.length === 1 ? '' : 's'}${positional.length ? `: ${positional.join(' ')}` : ''}`,
      {
        hint: 'usage: harness eval [-q] [-m measure[.params]]... [-c] [-l N] [-M N] [-J] QRELS RUN',
      },
    );
  }
  return { settings, qrelsPath: positional[0]!, runPath: positional[1]! };
}

/** `; did you mean '--x'?` for an unknown long option, from trec_eval's long names and harness's own flags. */
function flagSuggestion(key: string): string {
  const near = closest(key, [...Object.keys(LONG), ...HARNESS_FLAGS]);
  return near === undefined ? '' : `; did you mean '--${near}'?`;
}

/** The options and the file arguments of a command line, as getopt_long reads them (long names may be abbreviated). */
function getopt(argv: readonly string[]): { opts: Option[]; positional: string[] } {
  const opts: Option[] = [];
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
      if (exact === undefined)
        throw new UsageError(
          matches.length > 1 ? `ambiguous option '--${key}' (${matches.map((k) => `--${k}`).join(', ')})` : `unknown option '--${key}'${flagSuggestion(key)}`,
          { hint: 'see `harness eval --help`' },
        );
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
        if (!SHORT_FLAGS.has(c))
          throw new UsageError(`unknown option '-${c}' in '${a}'`, {
            hint: 'trec_eval options: -q -m measure -c -l N -M N -J -n -N N; see `harness eval --help`',
          });
        opts.push({ name: c });
      }
      continue;
    }
    positional.push(a);
  }
  return { opts, positional };
}

/** trec_eval's settings from the options, each checked; `-v` asks for the version alone. */
function settingsOf(opts: readonly Option[]): { settings: TrecEvalSettings; version: boolean } {
  let perQuery = false;
  let summary = true;
  let averageComplete = false;
  let judgedOnly = false;
  let relevanceLevel = 1;
  let maxDocs: number | undefined;
  let numDocsInColl = 0;
  let version = false;
  const measures: string[] = [];
  for (const o of opts) {
    switch (o.name) {
      case 'q':
        perQuery = true;
        break;
      case 'c':
        averageComplete = true;
        break;
      case 'n':
        summary = false;
        break;
      case 'J':
        judgedOnly = true;
        break;
      case 'o':
        break;
      case 'm':
        measures.push(o.value!);
        break;
      case 'l':
        relevanceLevel = integerFlag('l', o.value!, {
          min: 0,
          example: 2,
          below: 'the relevance level must be 0 or more: negative grades mark documents in the pool but unjudged, never relevant',
        });
        break;
      case 'M':
        maxDocs = integerFlag('M', o.value!, { min: 1, example: 100, below: 'give how many documents of each query to evaluate, 1 or more' });
        break;
      case 'N':
        numDocsInColl = integerFlag('N', o.value!, { min: 0, example: 1000000, below: 'the collection size must be 0 or more' });
        break;
      case 'D':
        if (integerFlag('D', o.value!, { min: 0, example: 0, below: 'the debug level must be 0' }) !== 0)
          throw new UsageError('-D (debug output) is not supported');
        break;
      case 'R':
        if (o.value !== 'qrels') throw new UsageError(`-R ${o.value}: only the 'qrels' relevance format is supported (not prefs, qrels_prefs, qrels_jg)`);
        break;
      case 'T':
        if (o.value !== 'trec_results') throw new UsageError(`-T ${o.value}: only the 'trec_results' run format is supported`);
        break;
      case 'Z':
        throw new UsageError('-Z (z-scores against a reference file) is not supported');
      case 'h':
        throw new UsageError('for help run `harness eval --help`');
      case 'v':
        version = true;
        break;
    }
  }
  return { settings: { perQuery, summary, averageComplete, judgedOnly, relevanceLevel, maxDocs, numDocsInColl, measures }, version };
}

/**
 * The value of a numeric trec_eval flag, read strictly: trec_eval's atol() reads `-M 1e3` as 1 and
 * `-l abc` as 0 and carries on, a plausible-looking number from a typo. Here anything but a whole number
 * of at least `min` is a usage error naming the flag.
 */
function integerFlag(flag: string, text: string, rule: { readonly min: number; readonly example: number; readonly below: string }): number {
  const t = text.trim();
  if (!/^[+-]?\d+$/.test(t)) {
    const n = t === '' ? NaN : Number(t);
    const instead = Number.isSafeInteger(n) ? `; write -${flag} ${n}` : '';
    throw new UsageError(`-${flag} ${JSON.stringify(text)}: not a whole number${instead}`, {
      hint: `-${flag} takes a whole number, e.g. -${flag} ${rule.example}`,
    });
  }
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new UsageError(`-${flag} ${text}: too large`);
  if (n < rule.min) throw new UsageError(`-${flag} ${text}: ${rule.below}`);
  return n;
}

/**
 * trec_eval's own measure names are what `-m` takes. Another spelling (canonical `nDCG@10`, ir_measures or
 * BEIR `NDCG@10`, a mistyped name) is refused here with the trec_eval spelling that gives the same number,
 * rather than left to trec_eval's nearest-name guess (which offered `num_q` for `nDCG@10`).
 */
export function checkTrecMeasureArgs(measures: readonly string[]): void {
  const known = [...TREC_MEASURE_NAMES, ...TREC_NICKNAMES];
  for (const arg of measures) {
    const name = arg.includes('.') ? arg.slice(0, arg.indexOf('.')) : arg;
    if (known.includes(name) || UNREAD_TREC_NAMES.has(name)) continue;
    let measure: Measure;
    try {
      measure = parseMeasure(arg);
    } catch {
      const lower = name.toLowerCase();
      const guess =
        known.find((k) => k.toLowerCase() === lower) ??
        closest(
          lower,
          known.map((k) => k.toLowerCase()),
          { always: true },
        );
      const spelled = known.find((k) => k.toLowerCase() === guess) ?? guess;
      throw new UsageError(`-m ${arg}: not a trec_eval measure; did you mean '${spelled}'?`, {
        hint: `trec_eval measures: ${known.join(', ')}; \`harness measures\` lists both spellings`,
      });
    }
    const canonical = formatMeasure(measure);
    if (isAnswerMeasure(measure)) {
      throw new UsageError(`-m ${arg}: ${canonical} is an answer measure; harness eval scores rankings as trec_eval does`, {
        hint: 'answer measures come from the answer stage: add an `answer:` block to an ablate config and run `harness ablate`',
      });
    }
    const trec = trecEvalSpelling(measure);
    if (trec === undefined) {
      throw new UsageError(`-m ${arg}: ${canonical} has no trec_eval equivalent, and harness eval -m takes trec_eval's names`, {
        hint: `evaluate it with \`harness compare RUN... --qrels QRELS --measures ${canonical}\``,
      });
    }
    const flags = `${trec.level === undefined ? '' : `-l ${trec.level} `}-m ${trec.measure}`;
    throw new UsageError(`-m ${arg}: harness eval -m takes trec_eval's measure names; ${canonical} is \`${flags}\``, {
      hint: "add --format table, csv or json to print canonical names (nDCG@10) instead of trec_eval's (ndcg_cut_10)",
    });
  }
}

/**
 * trec_eval flags take negative values attached or separate (`-l -1`); yargs would read a separate `-1` as an
 * option of its own and stop with "Unknown argument: 1". Attaching the value (`-l-1`) keeps it whole for
 * our getopt, which then refuses it with a message about the value.
 */
export function attachNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (next !== undefined && /^-\d/.test(next) && /^-[A-Za-z]*[mlDNMRTZ]$/.test(a)) {
      out.push(`${a}${next}`);
      i++;
    } else if (next !== undefined && /^-\d/.test(next) && /^--[A-Za-z_]+$/.test(a)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** The `harness eval --help` epilogue: both spellings of every measure. */
function measuresEpilogue(): string {
  const canonical = describeMeasures()
    .filter((d) => !(ANSWER_MEASURE_NAMES as readonly string[]).includes(d.name))
    .map((d) => `  ${d.name.padEnd(19)} ${d.describe}`)
    .join('\n');
  return [
    `trec_eval measures (-m): ${[...TREC_MEASURE_NAMES.filter((n) => n !== 'runid'), ...TREC_NICKNAMES].join(', ')}.`,
    '',
    'Canonical names (printed by --format table|csv|json; `harness measures` gives the trec_eval spelling and the',
    'other names accepted for each):',
    canonical,
  ].join('\n');
}

export const evalCommand = defineCommand({
  command: 'eval [args..]',
  describe: 'Evaluate a TREC run against TREC qrels, exactly as trec_eval (same flags, same output)',
  preprocess: attachNegativeValues,
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
        describe: 'threads for runs of 32 MB or more: a number, or auto (one per 64 MB of run, up to 8 and the cores no other thread is running on)',
      })
      .example('harness eval qrels.txt run.txt', "trec_eval's official measures")
      .example('harness eval -q -m all_trec qrels.txt run.txt', 'every measure, every query')
      .example('harness eval -m ndcg_cut.10 -m P.5 --format csv qrels.txt run.txt', 'canonical names in CSV')
      .epilogue(measuresEpilogue()),
  async run(args, io) {
    const raw = ((args as unknown as { args?: unknown[] }).args ?? []).map(String);
    const parsed = parseTrecEvalArgs(raw);
    if (parsed.version) {
      const { harnessVersion } = await import('./version.js');
      io.out(`harness ${harnessVersion()}: trec_eval version 10.0 measures and output\n`);
      return;
    }
    checkTrecMeasureArgs(parsed.settings.measures);
    const { runEval } = await import('./eval-run.js');
    const t = String(args.threads);
    const threads = t === 'auto' ? 'auto' : Number(t);
    if (threads !== 'auto' && (!Number.isInteger(threads) || threads < 1)) throw new UsageError(`--threads ${t}: give a positive integer or auto`);
    await runEval(parsed, args.format as EvalFormat, io, threads);
  },
});
