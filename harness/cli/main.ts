import yargs, { type Argv } from 'yargs';
import { HarnessError, type ExitCode } from '../errors.js';
import { stderrLogger } from '../log.js';
import { redactUrlsIn } from '../util/redact.js';
import { commands } from './commands.js';
import { withFlagSuggestions } from './flag-suggest.js';
import type { CliIo, CommandSpec } from './io.js';
import { harnessVersion } from './version.js';

/** Builds the parser without running it, so tests can inspect options and help text. */
export function buildParser(argv: readonly string[], io: CliIo, onDone: (p: Promise<void>) => void): Argv {
  let y = yargs([...argv])
    .scriptName('harness')
    .usage('$0 <command> [options]')
    .strict()
    .demandCommand(1, 'Name a command; see `harness --help`.')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(harnessVersion())
    .option('verbose', { type: 'boolean', global: true, describe: 'On failure, also print the stack trace; ablate also says how it ran each system' })
    .epilogue(
      'Exit codes: 0 success; 1 runtime or verification failure; 2 bad input, usage or config (the message names ' +
        'the file, line or flag); 3 gate REJECT with --gate-exit; 4 with --gate-exit, a verdict on judge labels whose judge ' +
        "is not validated (gate.judgeValidation: optional lets the verdict's own code stand).",
    )
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .exitProcess(false)
    .fail((msg, err) => {
      throw err ?? new UsageErrorFromYargs(withFlagSuggestions(msg, argv, knownFlags(argv)), commandOf(argv));
    });
  for (const spec of commands) {
    y = y.command({
      command: spec.command,
      describe: spec.describe,
      builder: (b: Argv) => spec.builder(b),
      handler: (args) => {
        onDone(spec.run(args as never, io));
      },
    });
  }
  return y;
}

class UsageErrorFromYargs extends HarnessError {
  constructor(message: string, command: CommandSpec<unknown> | undefined) {
    const verb = command?.command.split(' ')[0];
    super(message, { exitCode: 2, hint: verb ? `See \`harness ${verb} --help\`.` : 'See `harness --help` or `harness <command> --help`.' });
  }
}

/** The command a command line names: its first word that is not a flag. */
function commandOf(argv: readonly string[]): CommandSpec<unknown> | undefined {
  const at = argv.findIndex((a) => !a.startsWith('-'));
  return at < 0 ? undefined : commands.find((c) => c.command.split(' ')[0] === argv[at]);
}

/** Every flag (and alias) of the command a command line names, the global ones included, read from its builder. */
function knownFlags(argv: readonly string[]): string[] {
  const global = yargs([]).option('verbose', { type: 'boolean' }).help().alias('h', 'help').version(false);
  const spec = commandOf(argv);
  const y = spec ? spec.builder(global) : global;
  const opts = (y as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> } }).getOptions();
  return [...Object.keys(opts.key), ...Object.values(opts.alias).flat()];
}

export function defaultIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    log: stderrLogger({ quiet: process.env['HARNESS_QUIET'] === '1' }),
    env: process.env,
    cwd: process.cwd(),
  };
}

/** Runs the CLI and returns its exit code (the table is in harness/errors.ts). Never calls process.exit(). */
export async function runCli(rawArgv: readonly string[], io: CliIo = defaultIo()): Promise<ExitCode> {
  let pending: Promise<void> | undefined;
  const argv = preprocess(rawArgv);
  try {
    // The callback receives what --help and --version print, so it goes through io.out like any result
    // (and tests can read it) instead of yargs writing to the console itself.
    await buildParser(argv, io, (p) => {
      pending = p;
    }).parseAsync([...argv], {}, (_err, _args, output) => {
      if (output) io.out(`${output}\n`);
    });
    if (pending) await pending;
    return 0;
  } catch (err) {
    return reportError(err, argv.includes('--verbose'));
  }
}

/** Applies the named command's preprocess() to the arguments after its verb. */
function preprocess(argv: readonly string[]): readonly string[] {
  const at = argv.findIndex((a) => !a.startsWith('-'));
  const spec = commandOf(argv);
  return spec?.preprocess ? [...argv.slice(0, at + 1), ...spec.preprocess(argv.slice(at + 1))] : argv;
}

/** Errors go to stderr: the message, the hint, and under --verbose the stack. */
export function reportError(err: unknown, verbose: boolean): Exclude<ExitCode, 0> {
  // Messages of lower layers (an SDK, fetch) may quote a URL: its credentials are blanked here, once for all.
  const write = (text: string) => void process.stderr.write(`${redactUrlsIn(text)}\n`);
  if (err instanceof HarnessError) {
    write(`harness: ${err.message}`);
    if (err.hint) write(`  hint: ${err.hint}`);
    if (verbose && err.stack) write(err.stack);
    return err.exitCode;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  write(`harness: unexpected failure: ${e.message}`);
  if (verbose && e.stack) write(e.stack);
  else write('  (run again with --verbose for the stack trace)');
  return 1;
}
