/**
 * Recall of an approximate index on the study's own queries (docs/adr/0041-engine-fusion-and-ann-recall.md,
 * addendum): each measured query's answer, as the run returned it at its depth topK, against exact search over
 * the same vectors at that depth. Document vectors as queries (the old measure) find themselves first and
 * overstate recall (0.945 where the eval queries gave 0.880), so only eval queries are used.
 *
 * Stats, summable across scopes: `annQueryFound@k` (rows of the answer's top k scoring at least the exact k-th
 * score, within float32 rounding: rows tied at the cut are interchangeable), `annQueryExact@k` (size of the exact top k), `annQueries`
 * (queries measured). recall@k = found / exact.
 */

/** The usual reported depths (the report's recall curve); the run's topK is always added. */
const DEPTHS = [5, 10, 20, 30, 50, 100, 200, 500, 1000];

/**
 * Scores this close to the exact k-th count as tied with it: an engine computing in float32 (LanceDB) can order
 * two rows within rounding of each other either way, which loses nothing.
 */
const TIE = 1e-6;

/** The depths recorded for a run searched to `topK`: the usual ones below it, and topK itself. */
export function recallDepths(topK: number): number[] {
  return [...DEPTHS.filter((k) => k < topK), topK];
}

export const ANN_FOUND = 'annQueryFound';
export const ANN_EXACT = 'annQueryExact';
export const ANN_QUERIES = 'annQueries';

/** Counts per depth over one scope's measured queries; which queries are measured is chosen per scope. */
export class QueryRecall {
  #wanted: ReadonlySet<string> | undefined;
  #taken = 0;
  #queries = 0;
  readonly #counts = new Map<number, { found: number; exact: number }>();

  /** @param limit at most this many queries per scope are searched exactly as well */
  constructor(private readonly limit: number) {}

  /**
   * A new scope: measure `queries`, evenly spaced when there are more than the limit (so every stratum of an
   * ordered query file is seen); without them, the first `limit` searches.
   */
  reset(queries?: readonly { readonly id: string }[]): void {
    this.#counts.clear();
    this.#queries = 0;
    this.#taken = 0;
    if (queries === undefined) {
      this.#wanted = undefined;
      return;
    }
    const n = Math.min(this.limit, queries.length);
    this.#wanted = new Set(Array.from({ length: n }, (_, i) => queries[Math.floor((i * queries.length) / n)]?.id as string));
  }

  /** Whether this search is measured (each query once). */
  wants(queryId: string): boolean {
    if (this.#wanted !== undefined) return this.#wanted.has(queryId);
    return this.#taken++ < this.limit;
  }

  /**
   * One measured query searched to `topK`: `exact` the exact top scores best first (min(topK, corpus) of
   * them), `returned` the scores of what the index returned, in its order, computed as the exact search does.
   */
  add(topK: number, exact: ArrayLike<number>, returned: ArrayLike<number>): void {
    this.#queries++;
    for (const k of recallDepths(topK)) {
      const kk = Math.min(k, exact.length);
      const c = this.#counts.get(k) ?? { found: 0, exact: 0 };
      this.#counts.set(k, c);
      if (kk === 0) continue;
      const kth = (exact[kk - 1] as number) - TIE;
      let hit = 0;
      for (let i = 0; i < Math.min(k, returned.length); i++) if ((returned[i] as number) >= kth) hit++;
      c.found += Math.min(kk, hit);
      c.exact += kk;
    }
  }

  /** The counts as index stats; empty when no query was measured. */
  stats(): Record<string, number> {
    if (this.#queries === 0) return {};
    const out: Record<string, number> = { [ANN_QUERIES]: this.#queries };
    for (const [k, c] of [...this.#counts].sort((a, b) => a[0] - b[0])) {
      out[`${ANN_FOUND}@${k}`] = c.found;
      out[`${ANN_EXACT}@${k}`] = c.exact;
    }
    return out;
  }

  /** `recall@10 0.880, recall@100 0.450` for the log. */
  summary(): string {
    return [...this.#counts]
      .sort((a, b) => a[0] - b[0])
      .map(([k, c]) => `recall@${k} ${(c.found / Math.max(1, c.exact)).toFixed(3)}`)
      .join(', ');
  }
}
