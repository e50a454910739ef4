import { z } from 'zod';

/**
 * The `compare:` config block: how runs are compared. Every default of the comparison machinery is declared
 * here and nowhere else (ranx declares "student" in one place and "fisher" in another; we do not).
 *
 * Embed it as `compare: compareSchema.prefault({})` so an absent block still gets every default (zod 4's
 * `.default({})` would skip parsing and leave the inner defaults unset).
 */
export const compareSchema = z.strictObject({
  /** Run every other run is compared against. Default: the first run (first arm in the config). */
  baseline: z.string().min(1).optional(),
  /**
   * Paired significance test. `randomization`: sign-flip test of the mean difference (Smucker, Allan &
   * Carterette 2007 find it, the t-test and the bootstrap agree); `t`: paired Student t; `wilcoxon`: signed-rank.
   */
  test: z.enum(['randomization', 't', 'wilcoxon']).default('randomization'),
  /** Sign-flip draws of the randomization test; exact enumeration is used when 2^n is not larger. */
  permutations: z.number().int().min(100).default(10_000),
  /** Bootstrap resamples for the intervals of the Wilcoxon test (the t and randomization tests invert themselves). */
  resamples: z.number().int().min(100).default(10_000),
  /** Bootstrap interval method for the Wilcoxon test: BCa (scipy's default; see docs/adr/0004-statistics.md) or percentile. */
  ciMethod: z.enum(['percentile', 'bca']).default('bca'),
  /** Seed of every random draw (randomization and bootstrap); same seed, same report on every machine. */
  seed: z.number().int().min(0).default(42),
  /** Significance level applied to the corrected p-values. */
  alpha: z.number().gt(0).lt(1).default(0.05),
  /**
   * Multiple-comparison correction within each exploratory family (see `family`). The gate's confirmatory
   * family uses it when it is family-wise (holm, bonferroni, hommel) and Holm otherwise (docs/adr/0013).
   */
  correction: z.enum(['holm', 'bonferroni', 'bh', 'by', 'hommel', 'none']).default('holm'),
  /**
   * What one exploratory family of tests is (the gate's comparisons are always their own family).
   * `per-test` (default): every other comparison the report runs with the configured test: compared pairs x
   * strata (the overall row counts as one more stratum) x tested measures. `per-measure`: one family per
   * measure. `per-stratum`: one family per stratum (overall row included as its own family). `Judged@k`
   * measures are coverage diagnostics, never tested, never in a family.
   */
  family: z.enum(['per-test', 'per-measure', 'per-stratum']).default('per-test'),
  /** Compare every pair of runs, not only each run against the baseline. */
  allPairs: z.boolean().default(false),
  /**
   * Head-to-head comparisons the study's question needs beyond its baseline (e.g. tuned RRF against tuned CC):
   * each is `system` against `baseline` on `measure` (default: the gate's, else the first tested measure) in
   * every stratum, a family of its own (`question <id>`), corrected within itself: family-wise (as the gate) when
   * `role: confirmatory`, by `correction` when exploratory. The report states each one's answer; none moves
   * the gate's verdict.
   */
  questions: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        baseline: z.string().min(1),
        system: z.string().min(1),
        measure: z.string().min(1).optional(),
        role: z.enum(['confirmatory', 'exploratory']).default('exploratory'),
      }),
    )
    .default([]),
  /** A stratum with fewer queries than this is flagged underpowered. */
  underpoweredBelow: z.number().int().min(2).default(50),
  /** Statistical power for the minimum detectable effect (MDE) shown beside each comparison, at its family's alpha/m. */
  power: z.number().gt(0).lt(1).default(0.8),
  /** With a pooled qrels, a run whose mean `Judged@10` in a stratum falls below this is flagged for judgment holes. */
  judgedThreshold: z.number().min(0).max(1).default(0.9),
});

/**
 * The `gate:` config block: the decision rule that turns a report into ADOPT / REJECT / INCONCLUSIVE. It declares
 * the report's confirmatory test: (baseline, candidate) on `measure`, overall and, under the no-loss rules, per
 * stratum, corrected within that family only. Significance means "corrected p below `compare.alpha`".
 */
export const gateSchema = z
  .strictObject({
    /** Default: `compare.baseline`, else the first run. */
    baseline: z.string().min(1).optional(),
    candidate: z.string().min(1),
    /** The primary measure, canonical spelling (e.g. `nDCG@10`); must be one of the report's measures. */
    measure: z.string().min(1),
    /**
     * `gain-overall-no-loss` (default): ADOPT on a significant gain overall with no significant loss in any
     * stratum. `gain-overall`: ADOPT on a significant gain overall. `no-loss`: ADOPT when no stratum shows a
     * significant loss and the overall interval lies above `-minDelta` (non-inferiority with margin `minDelta`).
     * `equivalent`: ADOPT when every stratum (the overall row included) is shown equivalent within its margin by
     * two one-sided tests; REJECT on a significant loss beyond a margin (docs/adr/0039).
     */
    rule: z.enum(['gain-overall-no-loss', 'gain-overall', 'no-loss', 'equivalent']).default('gain-overall-no-loss'),
    /** Equivalence margin of every stratum under `rule: equivalent`: a difference smaller than it does not matter. */
    margin: z.number().gt(0).optional(),
    /** Per-stratum equivalence margins under `rule: equivalent` (`overall` names the overall row); others fall back to `margin`. */
    margins: z.record(z.string().min(1), z.number().gt(0)).optional(),
    /**
     * Smallest difference that matters. For the gain rules the observed overall delta must reach it; for
     * `no-loss` it is the non-inferiority margin. Default 0.
     */
    minDelta: z.number().min(0).optional(),
    /**
     * On judged qrels, what the gate decides on: `plain` (default) the judge-based comparisons; `ppi` the
     * prediction-powered interval of the paired difference, corrected for the judge's bias with the human-labelled
     * queries (`humanLabels:`); significant = the interval excludes 0 (docs/adr/0038). Refused without human labels
     * or on gold qrels.
     */
    judged: z.enum(['plain', 'ppi']).optional(),
    /**
     * On judged qrels, whether `--gate-exit` treats a verdict whose judge is not validated (no human labels, labels
     * of another qrels version, a failed validation, no PPI interval) as a failure of its own (exit 4): `required`
     * (default) does; `optional` lets the verdict's own code stand. The verdict sentence names the gap either way.
     */
    judgeValidation: z.enum(['required', 'optional']).optional(),
  })
  .superRefine((g, ctx) => {
    if (g.rule === 'equivalent' && g.margin === undefined && g.margins === undefined)
      ctx.addIssue({ code: 'custom', path: ['margin'], message: 'rule equivalent needs a margin (or margins per stratum), e.g. margin: 0.01' });
    if (g.rule !== 'equivalent' && (g.margin !== undefined || g.margins !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: [g.margin !== undefined ? 'margin' : 'margins'],
        message: 'margins are read only by rule: equivalent; set the rule or remove them',
      });
  });

/** The key of `gate.margins` that names the overall row, whatever the row's id. */
export const OVERALL_MARGIN_KEY = 'overall';

/** The equivalence margin of a gate stratum: its own, `overall` for the pooled row, else `margin`. */
export function marginOf(g: Pick<GateConfig, 'margin' | 'margins'>, stratum: string, overall: boolean): number | undefined {
  return g.margins?.[overall ? OVERALL_MARGIN_KEY : stratum] ?? (overall ? g.margins?.[stratum] : undefined) ?? g.margin;
}

export type CompareConfig = z.output<typeof compareSchema>;
export type CompareConfigInput = z.input<typeof compareSchema>;
export type GateConfig = z.output<typeof gateSchema>;
export type GateConfigInput = z.input<typeof gateSchema>;

export type TestKind = CompareConfig['test'];
export type Correction = CompareConfig['correction'];
export type GateRule = GateConfig['rule'];
