import { compareIds } from '../metrics/ranking.js';

/**
 * Interned document ids, sorted ascending by `compareIds` (harness/metrics/ranking.ts), so that index order
 * equals id order and the trec tie-break "docId descending" becomes "higher index first" on integers.
 */
export interface DocTable {
  readonly ids: readonly string[];
  /** The index of `id`, or -1 when the table does not hold it. */
  indexOf(id: string): number;
}

/** Builds a DocTable from any ids (duplicates collapse). O(n log n) once; lookups are one Map probe. */
export function docTable(ids: Iterable<string>): DocTable {
  const sorted = [...new Set(ids)].sort(compareIds);
  const index = new Map<string, number>();
  for (let i = 0; i < sorted.length; i++) index.set(sorted[i]!, i);
  return { ids: sorted, indexOf: (id) => index.get(id) ?? -1 };
}
