import { firstThreshold, labelsNeeded, queriesNeeded, type PlanCorrection } from '../stats/index.js';

/** One stratum of a Power plan's input: its spread of per-query differences, and its size when a pilot gave one. */
export interface PlanStratum {
  readonly id: string;
  /** Standard deviation of the per-query differences of the measure (system − baseline). */
  readonly sd: number;
  /** Queries the pilot had in this stratum; absent for given numbers. */
  readonly n?: number;
}

/** Everything a Power plan is computed from. */
export interface PlanInput {
  readonly strata: readonly PlanStratum[];
  readonly delta: number;
  readonly power: number;
  readonly alpha: number;
  /** Tests in the family the comparisons belong to (the correction's m). */
  readonly familySize: number;
  readonly correction: PlanCorrection;
  /** Half-width wanted of the PPI interval, and the judge-human correlation of per-query deltas. */
  readonly ppi?: { readonly halfWidth: number; readonly rho: number };
}

export interface PlanRow {
  readonly stratum: string;
  readonly sd: number;
  readonly pilotN: number | null;
  /** Queries needed to detect `delta` at the corrected threshold with the power asked. */
  readonly queries: number;
  /** Human-labelled queries for the PPI interval; null without `ppi`. */
  readonly labels: number | null;
  /** The labels needed exceed the stratum's queries: the judge's queries cannot carry the interval. */
  readonly labelsExceedQueries: boolean;
}

export interface Plan {
  /** The two-sided level every row is held to: the family's first corrected threshold. */
  readonly threshold: number;
  readonly rows: readonly PlanRow[];
}

/**
 * A Power plan: per stratum, the queries a paired test needs to detect `delta` with `power` at the family's
 * first corrected threshold (queriesNeeded: the report's MDE formula inverted), and, with `ppi`, the human
 * labels a PPI++ interval of that half-width needs at the same level over that stratum's queries (the
 * pilot's when more). Pure arithmetic: no judge, no network.
 */
export function powerPlan(input: PlanInput): Plan {
  const threshold = firstThreshold(input.alpha, input.familySize, input.correction);
  const rows = input.strata.map((s): PlanRow => {
    const queries = queriesNeeded(s.sd, input.delta, { alpha: threshold, power: input.power });
    const judged = Math.max(queries, s.n ?? 0);
    const l = input.ppi ? labelsNeeded({ sdJudge: s.sd, rho: input.ppi.rho, halfWidth: input.ppi.halfWidth, alpha: threshold, judged }) : undefined;
    return { stratum: s.id, sd: s.sd, pilotN: s.n ?? null, queries, labels: l?.labels ?? null, labelsExceedQueries: l?.exceedsJudged ?? false };
  });
  return { threshold, rows };
}
