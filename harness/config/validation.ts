import { z } from 'zod';

/**
 * The `validation:` block: when a judge counts as validated on the human-labelled queries (docs/adr/0038). The
 * judge passes when, on those queries, the gate's verdict and the sign of each gate comparison are the same under
 * human and judge labels, Kendall's tau between the system rankings reaches `minTau`, and at least `minQueries`
 * queries are labelled.
 */
export const validationSchema = z.strictObject({
  /**
   * Kendall's tau between the rankings of the systems (by mean of the primary measure) under human and judge
   * labels. 0.9: Voorhees (2000, "Variations in relevance judgments and the measurement of retrieval
   * effectiveness") treats rankings at tau 0.9 or above as equivalent, the bar the judging literature reuses.
   */
  minTau: z.number().min(-1).max(1).default(0.9),
  /**
   * Human-labelled queries below which no validation passes. 25: Voorhees & Buckley (2002, "The effect of topic
   * set size on retrieval experiment error") find comparisons on fewer topics swap too often to be trusted.
   */
  minQueries: z.number().int().min(2).default(25),
  /** Bootstrap resamples of the tau and tau_AP intervals (over the labelled queries). */
  resamples: z.number().int().min(100).default(2000),
});

export type ValidationConfig = z.output<typeof validationSchema>;
