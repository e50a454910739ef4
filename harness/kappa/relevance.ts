import { type MeasureTable, measureNamed } from '../compare/measures.js';
import { ConfigError, UsageError } from '../errors.js';
import { decidingMeasure, relevantGrade } from '../metrics/relevant-grade.js';

/**
 * The split of the binary kappa without a config: grade 1, trec_eval's default relevance level (-l 1) and the
 * lowest grade nDCG's linear gains count, so the check sees the grade-1 inflation that moves nDCG.
 */
export const DEFAULT_RELEVANT_AT = 1;

/** What sets the binary split: `--relevant-at`, or the study config the decision is made with. */
export interface RelevanceSource {
  readonly relevantAt?: number;
  readonly config?: {
    readonly file: string;
    readonly measures: readonly string[];
    /** `measures` (and the gate's) as the config loader read them: the split reads these values, never a spelling. */
    readonly parsedMeasures: MeasureTable;
    readonly gate?: { readonly measure: string };
    readonly relevanceLevel: number;
  };
}

/** The grade the binary kappa splits at, and where it comes from (printed in the report). */
export interface KappaRelevance {
  readonly relevantAt: number;
  readonly relevantFrom: string;
}

/**
 * The binary kappa's split: `--relevant-at`, else the grade the config's deciding measure (the gate's, else its
 * first tested one) first gains from, else {@link DEFAULT_RELEVANT_AT}. A split outside 1-3 puts every pair on
 * one side, so no binary kappa could check it: refused, naming where it came from.
 */
export function kappaRelevance(src: RelevanceSource): KappaRelevance {
  if (src.relevantAt !== undefined && src.config !== undefined)
    throw new UsageError('--relevant-at and --config both set where the binary kappa splits: give one', {
      hint: "--config reads the gate's measure and relevanceLevel; --relevant-at overrides them by hand",
    });
  if (src.relevantAt !== undefined) {
    if (![1, 2, 3].includes(src.relevantAt)) throw new UsageError(`--relevant-at ${src.relevantAt}: give a grade 1, 2 or 3 (relevant at that grade or above)`);
    return { relevantAt: src.relevantAt, relevantFrom: `set by --relevant-at ${src.relevantAt}` };
  }
  const cfg = src.config;
  if (cfg === undefined)
    return {
      relevantAt: DEFAULT_RELEVANT_AT,
      relevantFrom: "the default: trec_eval's relevance level 1, where nDCG's gains start; --config reads the gate's measure",
    };
  const named = (spelling: string) => measureNamed(cfg.parsedMeasures, spelling);
  const deciding = decidingMeasure(cfg.measures.map(named), cfg.gate && named(cfg.gate.measure));
  const measure = deciding?.spelling;
  const grade = deciding === undefined ? cfg.relevanceLevel : relevantGrade(deciding.measure, cfg.relevanceLevel);
  const from =
    measure === undefined
      ? `relevanceLevel ${cfg.relevanceLevel}`
      : cfg.gate
        ? `the gate's ${measure}`
        : `${measure}, the config's first tested measure (no gate)`;
  if (grade === undefined || grade < 1 || grade > 3)
    throw new ConfigError(
      cfg.file,
      [`${from} counts ${grade === undefined ? 'no grade 1-3' : `grade ${grade} and above`} as relevant: a binary kappa on the 0-3 scale cannot check that`],
      {
        hint: 'check the measure and relevanceLevel in the config, or leave out --config and give --relevant-at 1-3',
      },
    );
  return { relevantAt: grade, relevantFrom: from };
}
