/** Helpers for the fusion tests: literal runs packed over one DocTable. Not part of the fusion API. */
import type { Run } from '../../evalset/types.js';
import type { FusionInput } from './spec.js';
import { docTable, packRun, unpackRun, type DocTable, type PackedRun } from './run-form.js';

/** A Run from a literal `{ queryId: { docId: score } }`. */
export function runOf(literal: Readonly<Record<string, Readonly<Record<string, number>>>>): Run {
  return new Map(Object.entries(literal).map(([q, docs]) => [q, new Map(Object.entries(docs))]));
}

/** Packs literal runs over one DocTable of all their ids and one query list (q1, q2, ... as given). */
export function packAll(queries: readonly string[], ...runs: Run[]): { table: DocTable; packed: PackedRun[] } {
  const table = docTable(runs.flatMap((r) => [...r.values()].flatMap((m) => [...m.keys()])));
  return { table, packed: runs.map((r) => packRun(r, queries, table)) };
}

/** Inputs of weight 1 reading everything, unless told otherwise. */
export function inputsOf(packed: readonly PackedRun[], over: readonly Partial<Omit<FusionInput, 'run'>>[] = []): FusionInput[] {
  return packed.map((run, i) => ({ run, weight: 1, depth: Infinity, ...over[i] }));
}

/** One query's fused list as [docId, score] pairs, best first. */
export function listOf(p: PackedRun, table: DocTable, query: string): [string, number][] {
  return [...(unpackRun(p, table).get(query) ?? new Map<string, number>())];
}
