import type { Argv, ArgumentsCamelCase } from 'yargs';
import type { Logger } from '../log.js';

/** Where a command writes: results to `out` (stdout), diagnostics and progress through `log` (stderr). */
export interface CliIo {
  out(text: string): void;
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/**
 * One CLI verb. `builder` declares options; `run` does the work and may throw HarnessError. Handlers stay
 * thin and lazy-import their implementation so `harness --help` does not load every dependency.
 */
export interface CommandSpec<A = object> {
  readonly command: string;
  readonly describe: string;
  builder(y: Argv): Argv<A>;
  /**
   * Rewrites the arguments after the verb before yargs reads them, for a command whose own syntax yargs
   * would misread (eval's trec_eval flags, `-l -1`).
   */
  preprocess?(argv: readonly string[]): string[];
  run(args: ArgumentsCamelCase<A>, io: CliIo): Promise<void>;
}

/** Identity helper that carries the builder's argument type into `run`. */
export function defineCommand<A>(spec: CommandSpec<A>): CommandSpec<A> {
  return spec;
}
