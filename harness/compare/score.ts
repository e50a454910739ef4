import type { Qrels, Run } from '../../evalset/types.js';
// The Map-based evaluate(), not the Library's (metrics/public.ts): the runner's Runs are checked where they are made.
import { evaluate } from '../metrics/evaluate.js';
import type { Measure } from '../metrics/index.js';
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
  opts: { readonly relevanceLevel?: number; readonly units?: ReadonlyMap<string, string>; readonly sessions?: ReadonlyMap<string, string> } = {},
): Scores {
  const names = measures.map(formatMeasure);
  const perQuery: Record<string, Record<string, number[]>> = {};
  const zeroFilled = new Map<string, number>();
  const dropped = new Map<string, number>();
  for (const [id, run] of runs) {
    const ev = evaluate(qrels, run, measures, {
      queries,
      ...(opts.relevanceLevel === undefined ? {} : { relevanceLevel: opts.relevanceLevel }),
      ...(opts.units ? { units: opts.units } : {}),
      ...(opts.sessions ? { sessions: opts.sessions } : {}),
    });
    perQuery[id] = Object.fromEntries(
      names.map((m) => {
        const values = ev.perQuery.get(m) as ReadonlyMap<string, number>;
        return [m, queries.map((q) => values.get(q) ?? 0)];
      }),
    );
    if (ev.zeroFilledQueries.length > 0) zeroFilled.set(id, ev.zeroFilledQueries.length);
    if (ev.droppedRunQueries.length > 0) dropped.set(id, ev.droppedRunQueries.length);
  }
  return {
    perQuery,
    notes: [
      ...countNotes(zeroFilled, 'judged quer{y has|ies have} no results and score{s|} 0'),
      ...countNotes(dropped, 'quer{y|ies} absent from the qrels {was|were} dropped'),
    ],
  };
}

/** Most runs listed in one note before "and N more". */
const LISTED_RUNS = 6;

/**
 * One note per distinct count, naming the runs that share it, so fifty fused systems that all miss the same
 * query make one line, not fifty. `{a|b}` in `what` picks the singular or plural form.
 */
function countNotes(counts: ReadonlyMap<string, number>, what: string): string[] {
  const byCount = new Map<number, string[]>();
  for (const [id, n] of counts) byCount.set(n, [...(byCount.get(n) ?? []), id]);
  return [...byCount].map(([n, ids]) => {
    const text = what.replace(/\{([^|}]*)\|([^}]*)\}/g, (_, one: string, many: string) => (n === 1 ? one : many));
    const listed = ids.slice(0, LISTED_RUNS).join(', ') + (ids.length > LISTED_RUNS ? ` and ${ids.length - LISTED_RUNS} more` : '');
    return `${ids.length === 1 ? 'run' : `${ids.length} runs`} ${listed}: ${n} ${text}`;
  });
}
