import type { Qrels, Run } from '../../evalset/types.js';
import { evaluate, type Measure } from '../metrics/index.js';
import { formatMeasure } from '../metrics/index.js';

/** Per-query values of every run, aligned with `queries`, and the counted notes of what was filled or dropped. */
export interface Scores {
  /** run -> canonical measure -> value of queries[i]. */
  readonly perQuery: Record<string, Record<string, number[]>>;
  /** One line per run that missed judged queries (scored 0) or had queries outside the scored set (dropped). */
  readonly notes: string[];
}

/**
 * The one scoring path of `harness ablate` and `harness compare`: every run scored on the same query list,
 * a query a run misses scored 0 and counted, run queries outside the list dropped and counted
 * (docs/adr/0002-averaged-queries.md).
 */
export function scoreRuns(
  qrels: Qrels,
  runs: ReadonlyMap<string, Run>,
  measures: readonly Measure[],
  queries: readonly string[],
  opts: { readonly relevanceLevel?: number; readonly units?: ReadonlyMap<string, string> } = {},
): Scores {
  const names = measures.map(formatMeasure);
  const perQuery: Record<string, Record<string, number[]>> = {};
  const notes: string[] = [];
  for (const [id, run] of runs) {
    const ev = evaluate(qrels, run, measures, {
      queries,
      ...(opts.relevanceLevel === undefined ? {} : { relevanceLevel: opts.relevanceLevel }),
      ...(opts.units ? { units: opts.units } : {}),
    });
    perQuery[id] = Object.fromEntries(
      names.map((m) => {
        const values = ev.perQuery.get(m) as ReadonlyMap<string, number>;
        return [m, queries.map((q) => values.get(q) ?? 0)];
      }),
    );
    if (ev.zeroFilledQueries.length > 0) notes.push(`run ${id}: ${ev.zeroFilledQueries.length} judged queries have no results and score 0`);
    if (ev.droppedRunQueries.length > 0) notes.push(`run ${id}: ${ev.droppedRunQueries.length} queries absent from the qrels were dropped`);
  }
  return { perQuery, notes };
}
