import type { TrecEvalSettings } from '../trec-eval/plan.js';

/** How `harness eval` prints: trec_eval's text, or canonical measure names as a table, CSV or JSON. */
export type EvalFormat = 'trec' | 'table' | 'csv' | 'json';

/** What a trec_eval command line asks for. */
export interface EvalArgs {
  readonly settings: TrecEvalSettings;
  readonly qrelsPath: string;
  readonly runPath: string;
  /** `-v`: print the version and evaluate nothing (trec_eval's flag). */
  readonly version?: boolean;
}
