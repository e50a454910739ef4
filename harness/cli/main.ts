import yargs, { type Argv } from 'yargs';
import { HarnessError } from '../errors.js';
import { stderrLogger } from '../log.js';
import { commands } from './commands.js';
import type { CliIo } from './io.js';

/** Builds the parser without running it, so tests can inspect options and help text. */
export function buildParser(argv: readonly string[], io: CliIo, onDone: (p: Promise<void>) => void): Argv {
  let y = yargs([...argv])
    .scriptName('harness')
    .usage('$0 <command> [options]')
    .strict()
    .demandCommand(1, 'Name a command; see `harness --help`.')
    .recommendCommands()
    .help()
    .version(false)
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .exitProcess(false)
    .fail((msg, err) => {
      throw err ?? new UsageErrorFromYargs(msg);
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
  constructor(message: string) {
    super(message, { exitCode: 2, hint: 'See `harness --help` or `harness <command> --help`.' });
  }
}

export function defaultIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    log: stderrLogger({ quiet: process.env['HARNESS_QUIET'] === '1' }),
    env: process.env,
    cwd: process.cwd(),
  };
}

/** Runs the CLI and returns the exit code: 0 success, 1 runtime or verification failure, 2 usage/config/input error. */
export async function runCli(argv: readonly string[], io: CliIo = defaultIo()): Promise<number> {
  let pending: Promise<void> | undefined;
  try {
    await buildParser(argv, io, (p) => {
      pending = p;
    }).parseAsync();
    if (pending) await pending;
    return 0;
  } catch (err) {
    return reportError(err, io, argv.includes('--verbose'));
  }
}

function reportError(err: unknown, io: CliIo, verbose: boolean): number {
  if (err instanceof HarnessError) {
    process.stderr.write(`harness: ${err.message}\n`);
    if (err.hint) process.stderr.write(`  hint: ${err.hint}\n`);
    if (verbose && err.stack) process.stderr.write(`${err.stack}\n`);
    return err.exitCode;
  }
  const e = err instanceof Error ? err : new Error(String(err));
  process.stderr.write(`harness: unexpected failure: ${e.message}\n`);
  if (verbose && e.stack) process.stderr.write(`${e.stack}\n`);
  else process.stderr.write('  (run again with --verbose for the stack trace)\n');
  void io;
  return 1;
}
