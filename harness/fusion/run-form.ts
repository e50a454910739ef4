import type { Run } from '../../evalset/types.js';
import { compareIds } from '../metrics/ranking.js';
import { FusionInputError } from './errors.js';
import { sortRanked } from './rank-sort.js';

/**
 * The run model (issue 45): a Run has two named forms, and this module is the one conversion each way.
 *
 * - The **Map form**, {@link Run} (evalset/types.ts): `queryId -> docId -> score`, for the library API,
 *   readers and writers. Ranks are derived, never stored.
 * - The **typed form**, {@link PackedRun}: per query a range of (DocTable index, score) entries in rank order,
 *   in typed arrays over one {@link DocTable}. What the fusion kernels, their diagnostics and priors read and
 *   write, with no per-entry objects.
 *
 * {@link packRun} takes the Map form to the typed form, {@link unpackRun} back; {@link packArrays} packs raw
 * arrays a producer already holds (benchmarks, arms with their own index). Nothing else converts between them.
 *
 * Until a Scope run carries the typed form (issue 45), systems hold a run as {@link RunPairs};
 * {@link packPairs} and {@link unpackPairs} take that shape to the typed form and back directly, so a fusion
 * node does not build the Map form in between.
 */

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

/**
 * A Run in typed arrays. The entries of the query at position q are [offsets[q], offsets[q+1]), best first
 * in the trec order (score descending, then DocTable index descending). `queries` fixes the query order; a
 * query with no entries has an empty range. Every fusion kernel reads and writes this shape: no per-entry
 * objects, and a fused PackedRun can feed another fusion directly.
 */
export interface PackedRun {
  readonly queries: readonly string[];
  /** Length queries.length + 1, non-decreasing, offsets[0] = 0, last = docs.length. */
  readonly offsets: Int32Array;
  /** DocTable indices. */
  readonly docs: Int32Array;
  readonly scores: Float64Array;
}

// 1 + the largest doc index of a packed run's docs, computed once per docs array (a grid reuses its inputs).
const tableSizes = new WeakMap<Int32Array, number>();

/**
 * Checks the invariants of a PackedRun that its kernels rely on (cheap: offsets only, plus one memoized pass
 * over `docs` for the accumulator size) and returns 1 + the largest doc index it holds.
 */
export function checkPacked(p: PackedRun, what: string): number {
  const nq = p.queries.length;
  if (p.offsets.length !== nq + 1 || p.offsets[0] !== 0 || p.offsets[nq] !== p.docs.length || p.docs.length !== p.scores.length) {
    throw new FusionInputError(
      `${what}: malformed packed run (offsets must have queries.length + 1 entries from 0 to docs.length, docs and scores one length)`,
      {
        hint: 'build packed runs with packRun or packArrays',
      },
    );
  }
  let size = tableSizes.get(p.docs);
  if (size === undefined) {
    size = 0;
    for (let i = 0; i < p.docs.length; i++) {
      const d = p.docs[i]!;
      if (d < 0) throw new FusionInputError(`${what}: negative document index ${d} at entry ${i}`, { hint: 'build packed runs with packRun or packArrays' });
      if (d >= size) size = d + 1;
    }
    tableSizes.set(p.docs, size);
  }
  return size;
}

/**
 * Builds a PackedRun from raw arrays (copied, never modified): validates the offsets, finite scores and
 * distinct documents per query, and sorts each query's entries into the trec order. For producers that
 * already hold typed arrays (generated benchmarks, arms with their own index).
 */
export function packArrays(queries: readonly string[], offsets: Int32Array, docs: Int32Array, scores: Float64Array): PackedRun {
  const nq = queries.length;
  if (new Set(queries).size !== nq) throw new FusionInputError('packArrays: the query list holds a query id twice');
  if (offsets.length !== nq + 1 || offsets[0] !== 0 || offsets[nq] !== docs.length || docs.length !== scores.length) {
    throw new FusionInputError('packArrays: offsets must have queries.length + 1 entries from 0 to docs.length, and docs and scores one length');
  }
  let size = 0;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    if (!Number.isInteger(d) || d < 0) throw new FusionInputError(`packArrays: document index ${d} at entry ${i} is not a DocTable index`);
    if (d >= size) size = d + 1;
    if (!Number.isFinite(scores[i]!)) throw new FusionInputError(`packArrays: score ${scores[i]} at entry ${i} is not finite`);
  }
  const seen = new Int32Array(size).fill(-1);
  for (let q = 0; q < nq; q++) {
    if (offsets[q + 1]! < offsets[q]!) throw new FusionInputError(`packArrays: offsets decrease at query ${queries[q]}`);
    for (let i = offsets[q]!; i < offsets[q + 1]!; i++) {
      if (seen[docs[i]!] === q) throw new FusionInputError(`packArrays: query ${queries[q]} lists document index ${docs[i]} twice`);
      seen[docs[i]!] = q;
    }
  }
  const outDocs = docs.slice();
  const outScores = scores.slice();
  for (let q = 0; q < nq; q++) sortRanked(outDocs, outScores, offsets[q]!, offsets[q + 1]!);
  return { queries: [...queries], offsets: offsets.slice(), docs: outDocs, scores: outScores };
}

/**
 * Packs a Run over `table`, in the query order `queries` (a query of `queries` the run lacks gets an empty
 * range). Throws FusionInputError for a run query not in `queries`, a docId not in `table`, or a score that
 * is not finite: a fusion never silently drops or invents entries.
 */
export function packRun(run: Run, queries: readonly string[], table: DocTable): PackedRun {
  const position = new Map<string, number>();
  queries.forEach((q, i) => position.set(q, i));
  if (position.size !== queries.length) throw new FusionInputError('packRun: the query list holds a query id twice');
  for (const q of run.keys()) {
    if (!position.has(q)) {
      throw new FusionInputError(`packRun: run query "${q}" is not in the fusion's query list`, { hint: 'pass every query the runs answer in `queries`' });
    }
  }
  const offsets = new Int32Array(queries.length + 1);
  for (let q = 0; q < queries.length; q++) offsets[q + 1] = offsets[q]! + (run.get(queries[q]!)?.size ?? 0);
  const total = offsets[queries.length]!;
  const docs = new Int32Array(total);
  const scores = new Float64Array(total);
  for (let q = 0; q < queries.length; q++) {
    const entries = run.get(queries[q]!);
    if (entries === undefined) continue;
    let i = offsets[q]!;
    for (const [docId, score] of entries) {
      const d = table.indexOf(docId);
      if (d < 0)
        throw new FusionInputError(`packRun: query "${queries[q]}": document "${docId}" is not in the DocTable`, {
          hint: 'build the DocTable from the ids of every run fused together',
        });
      if (!Number.isFinite(score)) throw new FusionInputError(`packRun: query "${queries[q]}": document "${docId}" has score ${score}, not a finite number`);
      docs[i] = d;
      scores[i] = score;
      i++;
    }
    sortRanked(docs, scores, offsets[q]!, offsets[q + 1]!);
  }
  return { queries: [...queries], offsets, docs, scores };
}

/**
 * The Run a PackedRun holds. Each query's Map iterates best first; queries with no entries are left out
 * (for every measure an absent query and an empty one are the same: both score 0).
 */
export function unpackRun(p: PackedRun, table: DocTable): Run {
  checkPacked(p, 'unpackRun');
  const run = new Map<string, Map<string, number>>();
  for (let q = 0; q < p.queries.length; q++) {
    const from = p.offsets[q]!;
    const to = p.offsets[q + 1]!;
    if (from === to) continue;
    const m = new Map<string, number>();
    for (let i = from; i < to; i++) {
      const id = table.ids[p.docs[i]!];
      if (id === undefined) throw new FusionInputError(`unpackRun: document index ${p.docs[i]} is outside the DocTable (${table.ids.length} ids)`);
      m.set(id, p.scores[i]!);
    }
    run.set(p.queries[q]!, m);
  }
  return run;
}

/** A Run as a Scope run holds it (systems/types.ts `ScopeResults`): queryId -> [docId, score] pairs, best first. */
export type RunPairs = Readonly<Record<string, readonly (readonly [string, number])[]>>;

/** Refuses a query list with a repeat, or pairs of a query the list lacks (packRun's checks). */
function checkPairQueries(pairs: RunPairs, queries: readonly string[]): void {
  if (new Set(queries).size !== queries.length) throw new FusionInputError('packPairs: the query list holds a query id twice');
  const listed = new Set(queries);
  for (const q of Object.keys(pairs)) {
    if (!listed.has(q)) {
      throw new FusionInputError(`packPairs: run query "${q}" is not in the fusion's query list`, { hint: 'pass every query the runs answer in `queries`' });
    }
  }
}

/**
 * Packs a Scope run's pairs over `table`, in the query order `queries`, as packRun packs the Map the pairs
 * make: a document listed twice for one query keeps its first place and its last score, and the same inputs
 * are refused (a run query not in `queries`, a docId not in `table`, a score that is not finite).
 */
export function packPairs(pairs: RunPairs, queries: readonly string[], table: DocTable): PackedRun {
  checkPairQueries(pairs, queries);
  let bound = 0;
  for (const q of queries) bound += pairs[q]?.length ?? 0;
  const offsets = new Int32Array(queries.length + 1);
  const docs = new Int32Array(bound);
  const scores = new Float64Array(bound);
  // at[d] is where document d sits when seenIn[d] is the query being packed: a repeat overwrites its score.
  const seenIn = new Int32Array(table.ids.length).fill(-1);
  const at = new Int32Array(table.ids.length);
  let n = 0;
  for (let q = 0; q < queries.length; q++) {
    for (const [docId, score] of pairs[queries[q]!] ?? []) {
      const d = table.indexOf(docId);
      if (d < 0)
        throw new FusionInputError(`packPairs: query "${queries[q]}": document "${docId}" is not in the DocTable`, {
          hint: 'build the DocTable from the ids of every run fused together',
        });
      if (seenIn[d] === q) scores[at[d]!] = score;
      else {
        seenIn[d] = q;
        at[d] = n;
        docs[n] = d;
        scores[n++] = score;
      }
    }
    offsets[q + 1] = n;
    for (let i = offsets[q]!; i < n; i++) {
      if (!Number.isFinite(scores[i]!))
        throw new FusionInputError(`packPairs: query "${queries[q]}": document "${table.ids[docs[i]!]}" has score ${scores[i]}, not a finite number`);
    }
    sortRanked(docs, scores, offsets[q]!, n);
  }
  return n === bound
    ? { queries: [...queries], offsets, docs, scores }
    : { queries: [...queries], offsets, docs: docs.slice(0, n), scores: scores.slice(0, n) };
}

/** The pairs a PackedRun holds, every query of it in its order (an empty one as an empty list), each best first. */
export function unpackPairs(p: PackedRun, table: DocTable): Record<string, [string, number][]> {
  checkPacked(p, 'unpackPairs');
  const out: Record<string, [string, number][]> = {};
  for (let q = 0; q < p.queries.length; q++) {
    const list: [string, number][] = [];
    for (let i = p.offsets[q]!; i < p.offsets[q + 1]!; i++) {
      const id = table.ids[p.docs[i]!];
      if (id === undefined) throw new FusionInputError(`unpackPairs: document index ${p.docs[i]} is outside the DocTable (${table.ids.length} ids)`);
      list.push([id, p.scores[i]!]);
    }
    out[p.queries[q]!] = list;
  }
  return out;
}
