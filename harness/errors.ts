/**
 * Every failure a user can cause or meet is a HarnessError. The CLI's single top-level catch prints
 * `message` (and `hint`) and sets the exit code: 2 for usage, config and input-file errors (the user can
 * fix them by changing what they pass), 1 for runtime and verification failures.
 */
export class HarnessError extends Error {
  readonly exitCode: 1 | 2;
  readonly hint: string | undefined;
  constructor(message: string, opts: { exitCode?: 1 | 2; hint?: string; cause?: unknown } = {}) {
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
