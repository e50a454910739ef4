import { ENGLISH_V1_STOP_WORDS } from '../../arms/bm25/english-stopwords.js';
import { parseLongMemEvalDate } from '../../evalset/adapters/longmemeval.js';
import type { Document, JsonValue, Query } from '../../evalset/types.js';

const HOUR_MS = 3_600_000;
const WORD = /[\p{L}\p{N}]+/gu;

/** Content words of a text: lower-cased runs of letters and digits, 2+ characters, not an English stop word. */
export function contentTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(WORD)) if (m[0].length >= 2 && !ENGLISH_V1_STOP_WORDS.has(m[0])) out.add(m[0]);
  return out;
}

/** Share of the query's content words found in the text: |Q ∩ T| / |Q|, 0 for a query without content words. */
export function tokenOverlap(query: ReadonlySet<string>, text: ReadonlySet<string>): number {
  if (query.size === 0) return 0;
  let n = 0;
  for (const t of query) if (text.has(t)) n++;
  return n / query.size;
}

/**
 * Exponential recency decay, 2^(-Δ / halfLife) with Δ = max(0, query time - document time) in hours: 1 for a
 * document from the query's moment, 1/2 after one half-life (72 h in garbanzo). A document from after the query
 * counts as Δ = 0. A missing time (NaN) on either side gives 0: no recency credit is invented.
 */
export function recencyDecay(queryMs: number, docMs: number, halfLifeHours: number): number {
  if (Number.isNaN(queryMs) || Number.isNaN(docMs)) return 0;
  return 2 ** (-Math.max(0, queryMs - docMs) / HOUR_MS / halfLifeHours);
}

function timeOf(value: JsonValue | undefined): number {
  return typeof value === 'string' ? Date.parse(value) : Number.NaN;
}

/** Milliseconds of a Document's timestamp, NaN without one. */
export function documentTimeMs(d: Document): number {
  return timeOf(d.timestamp);
}

/**
 * When a query is asked: its `metadata.date` or `metadata.timestamp` (ISO), else LongMemEval's
 * `metadata.questionDate` ("2023/05/25 (Thu) 20:21"), else the newest document of its scope (LoCoMo QAs carry
 * no date; they are asked after the conversation's last session), the same rule as the fusion priors.
 */
export function queryTimeMs(q: Query, documents: readonly Document[]): number {
  const own = timeOf(q.metadata?.['date'] ?? q.metadata?.['timestamp']);
  if (!Number.isNaN(own)) return own;
  const asked = q.metadata?.['questionDate'];
  if (typeof asked === 'string') {
    const iso = parseLongMemEvalDate(asked);
    if (iso !== undefined) return Date.parse(iso);
  }
  let newest = Number.NaN;
  for (const d of documents) {
    const t = documentTimeMs(d);
    if (!Number.isNaN(t) && !(t <= newest)) newest = t;
  }
  return newest;
}

/** Weights of the garbanzo blend; the issue gives its terms, not their weights (docs/adr/0024-reference-recipes.md). */
export interface BlendWeights {
  readonly base: number;
  readonly recency: number;
  readonly overlap: number;
  readonly halfLifeHours: number;
}

export const GARBANZO_BLEND: BlendWeights = { base: 0.6, recency: 0.2, overlap: 0.2, halfLifeHours: 72 };

/** One candidate of a query as the blend reads it. */
export interface BlendCandidate {
  /** The retriever's score; only its ratio to the query's best counts. */
  readonly score: number;
  readonly timeMs: number;
  readonly tokens: ReadonlySet<string>;
}

/**
 * The garbanzo reranking blend of one query's candidates:
 * `base·max(0, s)/max_j max(0, s_j) + recency·2^(-Δh/halfLife) + overlap·|Q ∩ T|/|Q|`, with the base relevance
 * divided by the query's best score so the weights mean the same for any retriever (all base terms are 0 when
 * no score is positive). Session bonus and window penalty are applied by the caller on top.
 */
export function blendScores(candidates: readonly BlendCandidate[], query: ReadonlySet<string>, queryMs: number, w: BlendWeights): Float64Array {
  let top = 0;
  for (const c of candidates) if (c.score > top) top = c.score;
  return Float64Array.from(
    candidates,
    (c) =>
      w.base * (top > 0 ? Math.max(0, c.score) / top : 0) +
      w.recency * recencyDecay(queryMs, c.timeMs, w.halfLifeHours) +
      w.overlap * tokenOverlap(query, c.tokens),
  );
}
