import type { z } from 'zod';
import type { Corpus, JsonValue, Query } from '../evalset/types.js';
import type { ContentStore } from '../harness/cache/index.js';
import type { Logger } from '../harness/log.js';

/** One retrieved document with the arm's score (higher is better; comparable only within one arm). */
export interface ScoredDoc {
  readonly docId: string;
  readonly score: number;
  /**
   * The text a remote system returned for a Returned item (docId `returned:<hash>`, text no Document of the
   * eval set holds), for the judge to read; absent for every result that is a Document.
   */
  readonly text?: string;
}

/** What `index` reports; a config may pin these with `expect.indexStats` and they go into the manifest. */
export interface IndexStats {
  readonly documents: number;
  readonly [stat: string]: number;
}

/**
 * A configured retrieval method: created once per ablation (a model loads once), then indexed once per
 * scope and asked that scope's queries. The harness supplies everything else (batching, caching of runs,
 * scoping, progress).
 */
export interface Arm {
  readonly id: string;
  /**
   * Prepare for retrieval over `corpus`, replacing any earlier index: searches that follow go to this corpus.
   * Called once per scope, before that scope's searches. `queries` are the scope's queries that will follow,
   * for arms that check themselves against them (a run file counts the queries it does not know).
   */
  index(corpus: Corpus, queries?: readonly Query[]): Promise<IndexStats>;
  /** Best-first top-`topK` documents for one query; ties in score may come in any order. */
  search(query: Query, topK: number): Promise<readonly ScoredDoc[]>;
  /** Optional batched path, for arms that gain from batching (embedding APIs). */
  searchMany?(queries: readonly Query[], topK: number): Promise<ReadonlyMap<string, readonly ScoredDoc[]>>;
  /**
   * Optional counters over the searches since the last `index` (graph arms: queries with a seed, per stratum),
   * added to that scope's index stats once its queries are answered (outside the timed searches: an ANN arm
   * searches its measured queries exactly here).
   */
  searchStats?(): Readonly<Record<string, number>> | Promise<Readonly<Record<string, number>>>;
  close?(): Promise<void>;
  /**
   * How many `search` calls the harness may have in flight at once (a remote service's concurrency limit);
   * each query's latency is still measured on its own. Absent: one at a time.
   */
  readonly concurrency?: number;
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
  /** What every arm of the kind needs, or what these params need (an ANN index's package only when chosen). */
  readonly requires?: ArmRequirements | ((params: z.output<S>) => ArmRequirements);
  /**
   * Everything that makes two arms return the same run for the same corpus and queries. Goes into cache keys
   * and the manifest, so it must never contain a secret.
   */
  fingerprint(params: z.output<S>): JsonValue;
  /**
   * The lowest score `search` can ever return with these params (BM25 0, cosine -1), for fusions that
   * normalise against a theoretical minimum (TM2C2). Undefined when the kind has no such bound.
   */
  theoreticalMinScore(params: z.output<S>): number | undefined;
  /**
   * True when the text of corpus Documents leaves this machine: hosted embedding of the corpus, a store call to
   * a remote service, an LLM reading passages. Query text does not count: queries cannot be flagged sensitive
   * (ADR 0018), and a remote arm that only searches a corpus its service already holds sends none.
   */
  sendsTextOffMachine(params: z.output<S>): boolean;
  create(id: string, params: z.output<S>, ctx: ArmContext): Arm;
  /**
   * Params that name files or folders, resolved against the config file's folder (`dir`), as every other path
   * of a config is. Kinds without such params leave this out.
   */
  resolvePaths?(params: z.output<S>, dir: string): z.output<S>;
  /**
   * What identifies the system behind the arm that only a live look can tell (an MCP server's name and version
   * from its handshake), asked once per ablation before any run-cache lookup and added to the fingerprint, so
   * an upgraded server never serves an old run. Also the place to fail early (exit 2) on what only the
   * environment or the server can say (a missing tool, an unset variable). Never returns a secret.
   */
  probe?(id: string, params: z.output<S>, ctx: ArmContext): Promise<JsonValue>;
}
