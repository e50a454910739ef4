/**
 * The exit codes of every `harness` command, applied by the CLI's single top-level catch (cli/main.ts):
 *
 * | code | meaning |
 * | ---: | --- |
 * | 0 | success (also `--help` and `--version`) |
 * | 1 | runtime or verification failure (`--verify` FAIL, an arm crashing, an unexpected error) |
 * | 2 | bad input, usage or config: a malformed or missing file, a directory where a file belongs, an unknown or ill-formed option value |
 * | 3 | a gate said REJECT and `--gate-exit` asked for it to fail the command (`ablate`, `compare`) |
 * | 4 | with `--gate-exit`, a verdict on judge labels whose judge is not validated (unless `gate.judgeValidation: optional`) |
 */
export type ExitCode = 0 | 1 | 2 | 3 | 4;

/**
 * Every failure a user can cause or meet is a HarnessError. The CLI's single top-level catch prints
 * `message` (and `hint`, and the stack under `--verbose`) and exits with `exitCode` (see ExitCode): 2 for
 * usage, config and input-file errors (the user can fix them by changing what they pass), 1 for runtime and
 * verification failures, 3 for a gate REJECT under `--gate-exit`.
 */
export class HarnessError extends Error {
  readonly exitCode: Exclude<ExitCode, 0>;
  readonly hint: string | undefined;
  constructor(message: string, opts: { exitCode?: Exclude<ExitCode, 0>; hint?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.exitCode = opts.exitCode ?? 1;
    this.hint = opts.hint;
  }
}

/** Wrong command-line usage. Exit code 2. */
export class UsageError extends HarnessError {
  constructor(message: string, opts: { hint?: string; cause?: unknown } = {}) {
    super(message, { ...opts, exitCode: 2 });
  }
}

/** One or more problems in a config file, each already formatted as `file: dotted.path: message`. */
export class ConfigError extends HarnessError {
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[], opts: { hint?: string } = {}) {
    const head = `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`;
    super([head, ...problems.map((p) => `  ${p}`)].join('\n'), { ...opts, exitCode: 2 });
    this.problems = problems;
  }
}

/**
 * A malformed input file (qrels, run, corpus, eval set). Names the file and, when known, the 1-based line,
 * so the user can go straight to it. Exit code 2: the fix is in the input.
 */
export class InputError extends HarnessError {
  readonly file: string;
  readonly line: number | undefined;
  constructor(file: string, line: number | undefined, message: string, opts: { hint?: string; cause?: unknown } = {}) {
    super(`${file}${line === undefined ? '' : `:${line}`}: ${message}`, { ...opts, exitCode: 2 });
    this.file = file;
    this.line = line;
  }
}

/** An `expect:` block that did not hold under `--verify`. Exit code 1. */
export class VerificationError extends HarnessError {
  constructor(message: string) {
    super(message, { exitCode: 1 });
  }
}

/**
 * Several problems in input files, reported together so one run shows every mistake: each is an InputError
 * (`file:line: message`). Loaders collect up to a cap and then stop; `truncated` says there may be more.
 * Exit code 2.
 */
export class InputProblems extends HarnessError {
  readonly problems: readonly InputError[];
  readonly truncated: boolean;
  constructor(problems: readonly InputError[], opts: { truncated?: boolean } = {}) {
    const truncated = opts.truncated ?? false;
    const head = `${problems.length}${truncated ? '+' : ''} problems in the input${truncated ? ` (stopped after the first ${problems.length})` : ''}:`;
    const hints = [...new Set(problems.map((p) => p.hint).filter((h): h is string => h !== undefined))];
    super([head, ...problems.map((p) => `  ${p.message}`)].join('\n'), { exitCode: 2, ...(hints.length === 0 ? {} : { hint: hints.join('; ') }) });
    this.problems = problems;
    this.truncated = truncated;
  }
}

/**
 * A gate said REJECT and the command was run with `--gate-exit`, so that CI fails the job. Exit code 3:
 * the command itself worked (the report is written); the verdict is the failure.
 */
/**
 * `--gate-exit` on a verdict that does not stand: REJECT (exit 3), or a verdict on a judge nobody validated
 * (exit 4); `exitCode` and `sentence` come from the report's Decision.
 */
export class GateExitError extends HarnessError {
  constructor(sentence: string, exitCode: 3 | 4, reportFile: string | undefined) {
    super(`gate ${sentence}`, { exitCode, ...(reportFile === undefined ? {} : { hint: `the evidence is in ${reportFile}` }) });
  }
}
