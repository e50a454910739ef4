import type { z } from 'zod';
import type { Corpus, JsonValue, Query } from '../evalset/types.js';
import type { ContentStore } from '../harness/cache/index.js';
import type { Logger } from '../harness/log.js';

/** One retrieved document with the arm's score (higher is better; comparable only within one arm). */
export interface ScoredDoc {
  readonly docId: string;
  readonly score: number;
}

/** What `index` reports; a config may pin these with `expect.indexStats` and they go into the manifest. */
export interface IndexStats {
  readonly documents: number;
  readonly [stat: string]: number;
}

/**
 * A configured retrieval method: index a corpus once, then answer queries. The harness supplies everything
 * else (batching, caching of runs, scoping, progress).
 */
export interface Arm {
  readonly id: string;
  /**
   * The lowest score `search` can ever return (for BM25, 0), used by fusions that normalise against a
   * theoretical minimum (TM2C2). Undefined when the arm has no such bound.
   */
  readonly theoreticalMinScore: number | undefined;
  /** Prepare for retrieval over `corpus`. Called once per arm instance, before any search. */
  index(corpus: Corpus): Promise<IndexStats>;
  /** Best-first top-`topK` documents for one query; ties in score may come in any order. */
  search(query: Query, topK: number): Promise<readonly ScoredDoc[]>;
  /** Optional batched path, for arms that gain from batching (embedding APIs). */
  searchMany?(queries: readonly Query[], topK: number): Promise<ReadonlyMap<string, readonly ScoredDoc[]>>;
  close?(): Promise<void>;
}

/** What the harness hands an arm: the shared cache, a logger, and where to put scratch files. */
export interface ArmContext {
  readonly cache: ContentStore;
  readonly log: Logger;
  /** A folder the arm may use for on-disk indexes; persists across runs (under the cache root). */
  readonly workDir: string;
  readonly env: NodeJS.ProcessEnv;
}

/** What an arm kind needs from the machine; checked when the config loads. */
export interface ArmRequirements {
  /** Environment variables that must be set (names only; values never printed). */
  readonly env?: readonly string[];
  /** Packages that must be importable. */
  readonly packages?: readonly string[];
}

/**
 * An arm kind: its strict params schema, what it requires, its identity, and how to build an instance.
 * Built-in arms and any future external arm use this same type.
 */
export interface ArmFactory<S extends z.ZodType = z.ZodType> {
  /** kebab-case; equals the registry key and the config `kind`. */
  readonly kind: string;
  /** One line, shown in `harness arms`. */
  readonly summary: string;
  /** A strict zod schema (unknown keys rejected) with defaults filled in. */
  readonly params: S;
  readonly requires?: ArmRequirements;
  /**
   * Everything that makes two arms return the same run for the same corpus and queries. Goes into cache keys
   * and the manifest, so it must never contain a secret.
   */
  fingerprint(params: z.output<S>): JsonValue;
  create(id: string, params: z.output<S>, ctx: ArmContext): Arm;
}
