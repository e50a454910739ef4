import type { ShapeCheck } from '../cache/index.js';
import type { ScopeData, ScopeRun } from '../systems/types.js';
import { DocPositions, unwireRun, type WireScopeRun, wireRun } from './wire.js';

/**
 * The run cache's entry (RUN_CACHE_VERSION 3): a {@link ScopeRun} in the shape the workers already send it
 * ({@link WireScopeRun}: documents as positions in the scope's corpus, scores as float64, one offset per query),
 * its four arrays base64 in the JSON envelope the store checks. A corpus position is safe to store: the run
 * cache key holds the scope's corpus fingerprint, and document order is part of it. Float64 keeps every score
 * bit for bit (a JSON number would turn -0 into 0). The arrays are in this machine's byte order, as the
 * worker's are; the entry is read where it was written.
 */
export interface RunEntry extends Omit<WireScopeRun, 'offsets' | 'docs' | 'scores' | 'latencies'> {
  readonly offsets: string;
  readonly docs: string;
  readonly scores: string;
  readonly latencies: string;
}

// One corpus index per scope for the entries this process writes (a scope is read many times, by every system).
const positions = new DocPositions();

const base64 = (a: Uint32Array | Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');

export function runEntry(run: ScopeRun, scope: ScopeData): RunEntry {
  const w = wireRun(run, scope, positions);
  return { ...w, offsets: base64(w.offsets), docs: base64(w.docs), scores: base64(w.scores), latencies: base64(w.latencies) };
}

/** A base64 text's bytes in a fresh, aligned buffer; undefined when they do not fill whole `size`-byte elements. */
function bytesOf(text: unknown, size: number): ArrayBuffer | undefined {
  if (typeof text !== 'string') return undefined;
  const b = Buffer.from(text, 'base64');
  return b.byteLength % size === 0 ? new Uint8Array(b).buffer : undefined;
}

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((s) => typeof s === 'string');
const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);

/** The wire form an entry holds, or what is wrong with it (checked so that a run is never misread). */
function wireOf(v: unknown): WireScopeRun | string {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not an object';
  const r = v as Record<string, unknown>;
  if (!finite(r['indexMs']) || !finite(r['searchMs'])) return 'indexMs/searchMs missing';
  const stats = r['indexStats'];
  if (stats === null || typeof stats !== 'object' || !Object.values(stats).every(finite)) return 'indexStats is not an object of numbers';
  if (!isStrings(r['queryIds']) || !isStrings(r['extraDocs']) || !isStrings(r['latencyIds'])) return 'queryIds, extraDocs or latencyIds is not a list of ids';
  const [offsets, docs, scores, latencies] = [bytesOf(r['offsets'], 4), bytesOf(r['docs'], 4), bytesOf(r['scores'], 8), bytesOf(r['latencies'], 8)];
  if (offsets === undefined || docs === undefined || scores === undefined || latencies === undefined)
    return 'offsets, docs, scores or latencies is not a typed array';
  const { returned, ...rest } = r as unknown as RunEntry;
  const wire = {
    ...rest,
    offsets: new Uint32Array(offsets),
    docs: new Uint32Array(docs),
    scores: new Float64Array(scores),
    latencies: new Float64Array(latencies),
    ...(returned === undefined ? {} : { returned }),
  };
  return wire;
}

/** What is wrong with a wire form's arrays against its scope: lengths, offsets, positions, scores, queries. */
function arrayProblem(w: WireScopeRun, scope: ScopeData): string | undefined {
  const nq = w.queryIds.length;
  if (w.offsets.length !== nq + 1 || w.offsets[0] !== 0 || w.offsets[nq] !== w.docs.length || w.docs.length !== w.scores.length)
    return 'offsets do not cover docs and scores';
  for (let q = 0; q < nq; q++) if (w.offsets[q + 1]! < w.offsets[q]!) return `offsets decrease at query ${w.queryIds[q]}`;
  const known = scope.documents.length + w.extraDocs.length;
  for (let i = 0; i < w.docs.length; i++) if (w.docs[i]! >= known) return `document position ${w.docs[i]} is outside the scope and its extra ids`;
  for (let i = 0; i < w.scores.length; i++) if (!Number.isFinite(w.scores[i]!)) return `score ${w.scores[i]} is not finite`;
  if (w.latencies.length !== w.latencyIds.length || !w.latencies.every(Number.isFinite)) return 'latencies do not match latencyIds';
  const listed = new Set(w.queryIds);
  const missing = scope.queries.find((q) => !listed.has(q.id));
  return missing === undefined ? undefined : `no results for query ${missing.id}`;
}

function returnedProblem(returned: unknown): string | undefined {
  if (returned === undefined) return undefined;
  const ok = returned !== null && typeof returned === 'object' && Object.values(returned).every((t) => typeof (t as { text?: unknown })?.text === 'string');
  return ok ? undefined : 'returned is not an object of { text }';
}

// Runs the shape check has already decoded, so a hit is decoded once.
const decoded = new WeakMap<object, ScopeRun>();

/**
 * The shape of a run-cache entry holding every query of `scope`: an entry that checksums fine but does not
 * decode, or lacks a query, is evicted and recomputed rather than used.
 */
export function runEntryCheck(scope: ScopeData): ShapeCheck {
  return (v) => {
    const w = wireOf(v);
    if (typeof w === 'string') return w;
    const problem = arrayProblem(w, scope) ?? returnedProblem(w.returned);
    if (problem === undefined) decoded.set(v as object, unwireRun(w, scope));
    return problem;
  };
}

/** The ScopeRun an entry holds (one that passed {@link runEntryCheck} for `scope`). */
export function runOfEntry(entry: RunEntry, scope: ScopeData): ScopeRun {
  const run = decoded.get(entry);
  if (run !== undefined) return run;
  const w = wireOf(entry);
  if (typeof w === 'string') throw new Error(`run cache entry: ${w}`);
  return unwireRun(w, scope);
}
