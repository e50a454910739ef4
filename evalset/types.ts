/**
 * The eval-set model. Names follow CONTEXT.md: a Corpus of Documents, Queries in Strata, graded Qrels, Runs.
 * Ids are plain strings that never contain whitespace (TREC formats split on it); readers reject such ids.
 */

import type { JsonValue } from '../harness/json.js';

export type { JsonValue };

/** One retrievable unit: a memory, a conversation turn, a session, a passage. */
export interface Document {
  readonly id: string;
  readonly text: string;
  readonly title?: string;
  /** ISO 8601 date or date-time, when the source has one. */
  readonly timestamp?: string;
  readonly metadata?: Readonly<Record<string, JsonValue>>;
  /** Private content: never printed in reports or logs, never sent to a hosted API unless the config allows it. */
  readonly sensitive?: boolean;
}

export type Corpus = readonly Document[];

/** An information need. `stratum` groups queries for per-stratum reporting (exact, paraphrase, multi-hop, ...). */
export interface Query {
  readonly id: string;
  readonly text: string;
  readonly stratum: string;
  /**
   * The retrieval scope the query searches in, for eval sets whose queries each see only part of the corpus
   * (one LoCoMo conversation, one LongMemEval haystack). Absent: the whole corpus.
   */
  readonly scope?: string;
  /**
   * The gold answer, for answer measures (LoCoMo's and LongMemEval's `answer`, a memory store's `answer`); a
   * number in the source file becomes its decimal string. Absent: the query counts for retrieval only.
   * Metadata keys the answer level reads: `abstention: true` (the history holds no answer; correct is saying
   * so), `answerOnly: true` (kept for answer measures only: it has no judgments, so retrieval measures skip
   * it), `questionDate`, `questionType`, `category`, `conversationIndex`.
   */
  readonly answer?: string;
  readonly metadata?: Readonly<Record<string, JsonValue>>;
}

/**
 * Gold relevance: queryId -> docId -> grade. Grades are integers; a grade below the relevance level (default 1)
 * is judged-not-relevant, and negative grades are "in the pool, not relevant" exactly as in trec_eval.
 */
export type Qrels = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** Retrieval output: queryId -> docId -> score (higher is better). Rank is derived, never stored. */
export type Run = ReadonlyMap<string, ReadonlyMap<string, number>>;

/**
 * A complete evaluation input. `scopes` maps a scope id to the ids of the documents it contains; a query with
 * `scope` is retrieved against that subset only. `units` names coarser retrieval units (e.g. `session`) and
 * maps each document id to its unit id, so a turn-level run can be scored at session level.
 */
/**
 * Whether unlisted documents are known non-relevant (`complete`: memory stores built from a fact table, LoCoMo
 * and LongMemEval evidence at their unit) or unknown (`pooled`: TREC/BEIR pools, judged pools), where judgment
 * holes exist and the holes check (condensed lists, Bpref) means something.
 */
export type QrelsCompleteness = 'complete' | 'pooled';

export interface EvalSet {
  readonly name: string;
  /**
   * The eval-set format that read it (`memory`, `locomo`, `longmemeval`), when its reader says so: the answer
   * level picks its protocol (judge routing, aggregates) from it.
   */
  readonly format?: string;
  readonly documents: Corpus;
  readonly queries: readonly Query[];
  readonly qrels: Qrels;
  readonly scopes?: ReadonlyMap<string, readonly string[]>;
  readonly units?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Counted, human-readable notes from loading (items fixed or dropped). Reports print them. */
  readonly notes?: readonly string[];
}
