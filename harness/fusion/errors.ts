import { HarnessError } from '../errors.js';

/**
 * Input a fusion cannot work with: runs over different query lists, a docId missing from the DocTable, a
 * non-finite score, a score below the theoretical minimum its input declared, a weight or depth out of range.
 * Exit code 2: the fix is in the runs or the fusion's parameters, never a number computed anyway.
 */
export class FusionInputError extends HarnessError {
  constructor(message: string, opts: { hint?: string } = {}) {
    super(message, { ...opts, exitCode: 2 });
  }
}

/**
 * Problems in a fusion's config `params`, each formatted `path: message` (path relative to `params`, e.g.
 * `weights.dense: ...`), so a caller can prefix them with the fusion's config path and fold them into one
 * ConfigError. Exit code 2.
 */
export class FusionParamsError extends HarnessError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`fusion params: ${problems.join('; ')}`, { exitCode: 2 });
    this.problems = problems;
  }
}
