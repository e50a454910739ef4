import { z } from 'zod';

/**
 * The params of the `postgres` arm (docs/arms/postgres.md). Every value that reaches SQL text rather than a bind
 * parameter (a text search configuration, a bitmask, an index parameter) is checked here against a closed set or
 * an integer range, so building the SQL can never inject anything.
 */

/** `text search configuration` names are identifiers, optionally schema-qualified (`english`, `public.my_cfg`). */
const REGCONFIG = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;
/** Environment variable names as POSIX shells accept them. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const ftsParams = z
  .object({
    /** The text search configuration (`regconfig`) used for documents and queries. */
    config: z.string().regex(REGCONFIG, 'a text search configuration name such as english or simple').default('english'),
    /** `websearch` (websearch_to_tsquery), `plain` (plainto_tsquery) or `raw` (to_tsquery: the query text is tsquery syntax). */
    parser: z.enum(['websearch', 'plain', 'raw']).default('websearch'),
    /**
     * `any`: every `&` the parser put between query terms becomes `|` (any term matches, as BM25 scores a bag of
     * words); `all`: the parser's own output (every term must match). Ignored for `raw`.
     */
    match: z.enum(['any', 'all']).default('any'),
    /** `ts_rank` (term frequency) or `ts_rank_cd` (cover density). */
    rank: z.enum(['ts_rank', 'ts_rank_cd']).default('ts_rank_cd'),
    /** The normalisation bitmask of ts_rank / ts_rank_cd (0 to 63; 32 maps rank to rank / (rank + 1)). */
    normalization: z.number().int().min(0).max(63).default(0),
    /** `flat`: title and text in one tsvector; `separate`: title labelled `titleWeight`, text `textWeight`. */
    fields: z.enum(['flat', 'separate']).default('flat'),
    titleWeight: z.enum(['A', 'B', 'C', 'D']).default('A'),
    textWeight: z.enum(['A', 'B', 'C', 'D']).default('B'),
    /** The weights of labels D, C, B, A (PostgreSQL's order and default). */
    weights: z.tuple([z.number().min(0).max(1), z.number().min(0).max(1), z.number().min(0).max(1), z.number().min(0).max(1)]).default([0.1, 0.2, 0.4, 1.0]),
  })
  .strict();

/** The embedding of the vector side: an embedding arm kind and its params, computed through the shared store. */
export const embedParams = z
  .object({
    kind: z.enum(['onnx-embed', 'use-lite', 'hash-embed']),
    params: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export const vectorParams = z
  .object({
    embed: embedParams,
    /** Column type: `vector` (float4) or `halfvec` (float2, half the memory). */
    type: z.enum(['vector', 'halfvec']).default('vector'),
    /** `cosine` (<=>, score 1 - distance), `l2` (<->, score -distance), `inner` (<#>, score the inner product). */
    distance: z.enum(['cosine', 'l2', 'inner']).default('cosine'),
    /** `exact`: no index, every row compared; `hnsw` or `ivfflat`: pgvector's approximate indexes. */
    index: z.enum(['exact', 'hnsw', 'ivfflat']).default('exact'),
    m: z.number().int().min(2).max(100).default(16),
    efConstruction: z.number().int().min(4).max(1000).default(64),
    lists: z.number().int().min(1).max(32768).default(100),
    /** Eval queries per scope also searched exactly, for an approximate index's recall (evenly spaced when more; not fingerprinted). */
    recallSample: z.number().int().min(1).default(1000),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.index === 'hnsw' && p.efConstruction < 2 * p.m)
      ctx.addIssue({ code: 'custom', path: ['efConstruction'], message: `pgvector needs efConstruction >= 2 * m (m is ${p.m})` });
  });

export const hybridParams = z
  .object({
    /**
     * `rrf`: Σ w / (rrfK + rank); `cc`: Σ w·φ(score) / Σ w, φ the `normalization` over each list's read entries,
     * as the workbench's `fuse` computes them (docs/adr/0041-engine-fusion-and-ann-recall.md).
     */
    method: z.enum(['rrf', 'cc']).default('rrf'),
    rrfK: z.number().finite().min(0).default(60),
    /** cc only: `min-max`, `z-score` (population sd) or `dbsf` (mean -/+ 3 sample sd, Qdrant's). */
    normalization: z.enum(['min-max', 'z-score', 'dbsf']).default('min-max'),
    /** The weight of each list (> 0: a list of weight 0 is ranking: fts or vector); 1 each when absent. */
    weights: z
      .object({ fts: z.number().finite().positive().default(1), vector: z.number().finite().positive().default(1) })
      .strict()
      .default({ fts: 1, vector: 1 }),
    /** Entries read from each list; absent: the search's topK (what a `fuse` system reads of two arms' runs). */
    depth: z.number().int().min(1).optional(),
  })
  .strict();

export const queryModeParams = z
  .object({
    /**
     * A read-only SELECT over your own table returning columns `id` and `score` (higher is better), with bind
     * parameters `$1` the query text, `$2` topK and, when `vector` is set, `$3` the query vector as pgvector text.
     */
    sql: z.string().min(1),
    /**
     * The statement timeout of each search (`SET LOCAL statement_timeout`), in ms: a statement past it is
     * cancelled on the server and fails the run. Not fingerprinted: a search that finishes is the same search.
     */
    timeoutMs: z.number().int().min(1).max(86_400_000).default(30_000),
  })
  .strict();

export const postgresParams = z
  .object({
    /** `load`: a scratch schema holds the eval set's corpus for the run; `query`: your existing table, read only. */
    mode: z.enum(['load', 'query']).default('load'),
    /** The environment variable holding the connection URL; absent: the embedded PGlite database. */
    urlEnv: z.string().regex(ENV_NAME, 'an environment variable name such as DATABASE_URL').optional(),
    /** Declares the server behind `urlEnv` on this machine (or trusted with the corpus): then no text leaves it. */
    local: z.boolean().default(false),
    /** `fts`, `vector`, or `hybrid` (both lists fused by RRF in one SQL statement). Ignored in query mode. */
    ranking: z.enum(['fts', 'vector', 'hybrid']).default('fts'),
    fts: ftsParams.default(ftsParams.parse({})),
    vector: vectorParams.optional(),
    hybrid: hybridParams.default(hybridParams.parse({})),
    query: queryModeParams.optional(),
    /**
     * Query-time settings, each `SET LOCAL` in the search's transaction when given (absent: the server's own,
     * pgvector's defaults ef_search 40, probes 1, iterative scan off). Top-level so that `grid:` can sweep them,
     * and so that query mode can set them for your own index.
     */
    efSearch: z.number().int().min(1).max(1000).optional(),
    probes: z.number().int().min(1).max(32768).optional(),
    /** `hnsw.iterative_scan` / `ivfflat.iterative_scan` (pgvector 0.8; ivfflat has no strict_order). */
    iterativeScan: z.enum(['off', 'strict_order', 'relaxed_order']).optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.vector?.index === 'ivfflat' && p.iterativeScan === 'strict_order')
      ctx.addIssue({ code: 'custom', path: ['iterativeScan'], message: 'ivfflat supports iterativeScan off or relaxed_order only' });
    if (p.mode === 'query' && p.query === undefined)
      ctx.addIssue({ code: 'custom', path: ['query'], message: 'mode: query needs query.sql, your read-only SELECT returning id and score' });
    if (p.mode === 'load' && p.query !== undefined)
      ctx.addIssue({ code: 'custom', path: ['query'], message: 'query.sql applies to mode: query only; remove it or set mode: query' });
    if (p.mode === 'query' && p.urlEnv === undefined)
      ctx.addIssue({ code: 'custom', path: ['urlEnv'], message: 'mode: query reads your own database: name the environment variable holding its URL' });
    if (p.mode === 'load' && p.ranking !== 'fts' && p.vector === undefined)
      ctx.addIssue({ code: 'custom', path: ['vector'], message: `ranking: ${p.ranking} needs vector.embed (the embedding arm kind and params)` });
  });

export type PostgresParams = z.output<typeof postgresParams>;
export type FtsParams = z.output<typeof ftsParams>;
export type VectorParams = z.output<typeof vectorParams>;
export type HybridParams = z.output<typeof hybridParams>;
