import type { ExitCode } from '../errors.js';
import { stderrLogger } from '../log.js';
import type { EvalFormat } from './eval-args.js';
import { attachNegativeValues, evalCommand } from './eval.command.js';
import type { EvalIo } from './eval-run.js';
import type { CliIo } from './io.js';

/**
 * `harness eval` without yargs. Loading yargs and every command module and rendering the help text yargs
 * caches before each command cost ~0.3 s of CPU (node --cpu-prof), a third of what trec_eval takes for a
 * whole 5,000 x 100 evaluation. eval's command line is trec_eval's with two options of ours (`--format`,
 * `--threads`) and the global `--verbose`; a command line holding anything else that yargs would read
 * (help, version, `--`, an option given twice, a value yargs would refuse) returns undefined, and the caller
 * runs the full parser, so every message and exit code stays yargs'.
 */

const FORMATS: readonly EvalFormat[] = ['trec', 'table', 'csv', 'json'];

/** What the fast path reads from a command line (the arguments after `eval`), or undefined to hand it to yargs. */
export function fastEvalArgs(argv: readonly string[]): { args: string[]; format: EvalFormat; threads: string; verbose: boolean } | undefined {
  const args: string[] = [];
  let format: string | undefined;
  let threads: string | undefined;
  let verbose = false;
  const pre = attachNegativeValues(argv);
  for (let i = 0; i < pre.length; i++) {
    const a = pre[i]!;
    if (a === '--' || a === '-h' || a === '--help' || a === '--version' || a.startsWith('--no-')) return undefined;
    if (a === '--verbose') {
      if (verbose) return undefined;
      verbose = true;
      continue;
    }
    const option = /^--(format|threads)(?:=(.*))?$/.exec(a);
    if (option) {
      const value = option[2] ?? pre[++i];
      if (value === undefined || value === '' || value.startsWith('-')) return undefined;
      if (option[1] === 'format') {
        if (format !== undefined || !FORMATS.includes(value as EvalFormat)) return undefined;
        format = value;
      } else {
        if (threads !== undefined) return undefined;
        threads = value;
      }
      continue;
    }
    args.push(a);
  }
  return { args, format: (format ?? 'trec') as EvalFormat, threads: threads ?? 'auto', verbose };
}

/**
 * The arguments of `harness eval` in a whole command line, or undefined when it is not one the fast path may
 * take. eval's options may stand before the command too (`harness --threads 1 eval QRELS RUN`, as yargs reads
 * it); they are moved after it, where fastEvalArgs reads them wherever they stand.
 */
export function evalArgsOf(argv: readonly string[]): string[] | undefined {
  let i = 0;
  while (i < argv.length) {
    const a = argv[i]!;
    if (a === '--verbose' || /^--(format|threads)=./.test(a)) i += 1;
    else if (a === '--format' || a === '--threads') i += 2;
    else break;
  }
  return argv[i] === 'eval' ? [...argv.slice(i + 1), ...argv.slice(0, i)] : undefined;
}

/**
 * Runs `harness eval ARGV` as runCli(['eval', ...ARGV]) would, with the same output and exit code, or returns
 * undefined without doing anything when the command line needs yargs (see fastEvalArgs).
 */
export async function runEvalFast(argv: readonly string[], io: CliIo = stdIo()): Promise<ExitCode | undefined> {
  const fast = fastEvalArgs(argv);
  if (fast === undefined) return undefined;
  try {
    await evalCommand.run({ args: fast.args, format: fast.format, threads: fast.threads, _: ['eval'], $0: 'harness' } as never, io);
    return 0;
  } catch (err) {
    // Only a failure loads the CLI's error report (and yargs with it).
    const { reportError } = await import('./main.js');
    return reportError(err, fast.verbose);
  }
}

/** runEvalFast on a whole command line (bin.ts): undefined when it is not an eval command the fast path takes. */
export async function runEvalFastCommandLine(argv: readonly string[]): Promise<ExitCode | undefined> {
  const args = evalArgsOf(argv);
  return args === undefined ? undefined : runEvalFast(args);
}

/** The process's streams, as main.ts's defaultIo (which would load yargs); stdout takes bytes too. */
function stdIo(): EvalIo {
  return {
    out: (text) => void process.stdout.write(text),
    outBytes: (bytes) => void process.stdout.write(bytes),
    log: stderrLogger({ quiet: process.env['HARNESS_QUIET'] === '1' }),
    env: process.env,
    cwd: process.cwd(),
  };
}
