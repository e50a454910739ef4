import type { Corpus, JsonValue, Query } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import { documentText } from '../dense/arm.js';
import type { Arm, ArmContext, ArmFactory, IndexStats, ScoredDoc } from '../types.js';
import { type Db, openDb, packageVersion } from './connection.js';
import { checkEmbed, embedFingerprint, Vectors } from './embed.js';
import { QueryRecall } from '../dense/ann-recall.js';
import { describeVectorIndex, dropScratch, loadScratch, measureQueryRecall, type PendingRecall, scratchSchema, vectorSearch } from './load.js';
import { type PostgresParams, postgresParams } from './params.js';
import { queryModeIdentity, searchQueryMode } from './query-mode.js';
import { ftsTopSql, hybridSql, settingsSql, vectorText } from './sql.js';

/** Bump when a change here changes any score for the same params. */
const ALGORITHM_VERSION = 1;

/** Everything that changes the ranking, and nothing secret: the URL stays in its variable, only the name is kept. */
function fingerprint(p: PostgresParams): JsonValue {
  const vector =
    p.vector === undefined ? undefined : (({ recallSample: _measuredOnly, embed, ...rest }) => ({ ...rest, embed: embedFingerprint(embed) }))(p.vector);
  const usesFts = p.mode === 'load' && p.ranking !== 'vector';
  const usesVector = p.mode === 'query' ? vector !== undefined : p.ranking !== 'fts';
  return JSON.parse(
    JSON.stringify({
      kind: 'postgres',
      v: ALGORITHM_VERSION,
      mode: p.mode,
      engine: p.urlEnv === undefined ? 'embedded' : 'server',
      ...(p.mode === 'load' ? { ranking: p.ranking } : { sql: p.query?.sql }),
      ...(usesFts ? { fts: p.fts } : {}),
      ...(usesVector ? { vector } : {}),
      ...(usesVector || p.mode === 'query' ? { efSearch: p.efSearch, probes: p.probes, iterativeScan: p.iterativeScan } : {}),
      ...(p.mode === 'load' && p.ranking === 'hybrid' ? { hybrid: p.hybrid } : {}),
    }),
  ) as JsonValue;
}

/** The lowest score the ranking can return: ts_rank and RRF 0; over L2-normalised rows cosine and inner product -1, L2 -2. */
function theoreticalMin(p: PostgresParams): number | undefined {
  if (p.mode === 'query') return undefined;
  if (p.ranking !== 'vector') return 0;
  return p.vector?.distance === 'l2' ? -2 : -1;
}

/** What the server says about itself: its version and pgvector's, into the fingerprint; fails early when unusable. */
async function probe(id: string, p: PostgresParams, ctx: ArmContext): Promise<JsonValue> {
  if (p.vector !== undefined) checkEmbed(p.vector.embed);
  if (p.urlEnv === undefined)
    return { engine: 'pglite', pglite: packageVersion('@electric-sql/pglite'), pgvector: packageVersion('@electric-sql/pglite-pgvector') };
  const db = await openDb(p.urlEnv, ctx);
  try {
    const server = await db.transaction(true, async (tx) => {
      const [v] = await tx.query<{ server_version: string }>('SHOW server_version');
      const ext = await tx.query<{ installed: string | null; available: string | null }>(
        `SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS installed, (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS available`,
      );
      const pgvector = ext[0]?.installed ?? ext[0]?.available ?? null;
      const needsVector = p.mode === 'load' ? p.ranking !== 'fts' : false;
      if (needsVector && pgvector === null)
        throw new HarnessError(`arm '${id}': the server in ${p.urlEnv} has no pgvector extension (ranking: ${p.ranking} needs it)`, {
          exitCode: 2,
          hint: 'install pgvector on the server (Debian: postgresql-<major>-pgvector), or use ranking: fts',
        });
      return { engine: 'server', server: v?.server_version ?? 'unknown', pgvector };
    });
    // Query mode searches what the database holds: which database, and what its tables hold, is part of the run.
    return p.mode === 'query' ? { ...(server as Record<string, JsonValue>), database: await queryModeIdentity(id, p, db) } : server;
  } finally {
    await db.release();
  }
}

export const postgresArm: ArmFactory<typeof postgresParams> = {
  kind: 'postgres',
  summary: 'PostgreSQL full text (ts_rank_cd), pgvector (exact, HNSW, IVFFlat) or their RRF in SQL; embedded PGlite or a server by URL',
  params: postgresParams,
  requires: (p) => ({
    env: p.urlEnv === undefined ? [] : [p.urlEnv],
    packages: p.urlEnv === undefined ? ['@electric-sql/pglite', '@electric-sql/pglite-pgvector'] : ['pg'],
  }),
  fingerprint,
  theoreticalMinScore: theoreticalMin,
  // The corpus goes to the server only when this arm loads it; a query-mode arm searches what the server holds.
  sendsTextOffMachine: (p) => p.mode === 'load' && p.urlEnv !== undefined && !p.local,
  probe,
  create: (id, p, ctx) => postgresInstance(id, p, ctx),
};

function postgresInstance(id: string, p: PostgresParams, ctx: ArmContext): Arm {
  let db: Db | undefined;
  let schema: string | undefined;
  const vectors = p.vector === undefined ? undefined : new Vectors(p.vector.embed, ctx);
  const connected = async () => {
    db ??= await openDb(p.urlEnv, ctx);
    return db;
  };
  const queryVector = async (text: string) => vectorText(await (vectors as Vectors).query(text));
  const recall = new QueryRecall(p.vector?.recallSample ?? 0);
  let pending: PendingRecall[] = [];
  return {
    id,
    async index(corpus: Corpus, queries?: readonly Query[]): Promise<IndexStats> {
      const conn = await connected();
      if (p.mode === 'query') return { documents: corpus.length };
      if (schema !== undefined) await dropScratch(conn, schema);
      schema = scratchSchema();
      recall.reset(queries);
      pending = [];
      return indexScratch(id, p, conn, schema, corpus, p.ranking === 'fts' ? undefined : vectors);
    },
    async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
      if (db === undefined) throw new HarnessError(`arm '${id}': search called before index`);
      if (topK <= 0) return [];
      if (p.mode === 'query') return searchQueryMode(id, p, db, query, topK, p.vector === undefined ? undefined : await queryVector(query.text));
      const s = schema as string;
      if (p.ranking === 'fts')
        return db.transaction(true, (tx) => tx.query<{ id: string; score: number }>(ftsTopSql(s, p.fts, '$1', '$2'), [query.text, topK])).then(toScored);
      const v = p.vector as NonNullable<PostgresParams['vector']>;
      const q = await queryVector(query.text);
      // Only what the exact search needs is kept here; it runs in searchStats, outside the timed search.
      const measured = v.index !== 'exact' && recall.wants(query.id);
      if (p.ranking === 'vector') {
        const rows = await vectorSearch(db, s, v, p, q, topK);
        if (measured) pending.push({ q, depth: topK, scores: rows.map((r) => Number(r.score)) });
        return toScored(rows);
      }
      if (measured) pending.push({ q, depth: p.hybrid.depth ?? topK });
      const sql = hybridSql(s, p.fts, v, p.hybrid);
      return toScored(
        await db.transaction(true, async (tx) => {
          for (const set of settingsSql(v.index, p)) await tx.query(set);
          if (v.index !== 'exact') await tx.query('SET LOCAL enable_seqscan = off');
          return tx.query<{ id: string; score: number }>(sql, [query.text, p.hybrid.depth ?? topK, q, topK]);
        }),
      );
    },
    async searchStats() {
      if (pending.length === 0 || db === undefined || p.vector === undefined) return {};
      const measured = pending;
      pending = [];
      const t0 = performance.now();
      await measureQueryRecall(db, schema as string, p.vector, p, measured, recall);
      const ms = Math.round(performance.now() - t0);
      ctx.log.info(
        `${id}: pgvector ${describeVectorIndex(p.vector, p)} on ${measured.length} eval queries: ${recall.summary()} against exact search (${ms} ms)`,
      );
      return recall.stats();
    },
    async close() {
      const [conn, s] = [db, schema];
      db = undefined;
      schema = undefined;
      // The connection goes back whatever fails before: an embedded database still held keeps the process alive.
      try {
        if (conn !== undefined && s !== undefined) await dropScratch(conn, s);
      } finally {
        try {
          await conn?.release();
        } finally {
          await vectors?.close();
        }
      }
    },
  };
}

function toScored(rows: readonly { id: string; score: number }[]): ScoredDoc[] {
  return rows.map((r) => ({ docId: r.id, score: Number(r.score) }));
}

/** Embeds (vector rankings) and loads the scratch schema. */
async function indexScratch(id: string, p: PostgresParams, db: Db, schema: string, corpus: Corpus, vectors: Vectors | undefined): Promise<IndexStats> {
  const t0 = performance.now();
  const m =
    vectors === undefined
      ? undefined
      : await vectors.corpus(
          corpus.map((d) => ({ id: d.id, text: documentText(d) })),
          `${id}: embedding ${corpus.length} documents`,
        );
  const embedMs = performance.now() - t0;
  const loaded = await loadScratch(db, schema, p, corpus, m);
  const embed: Record<string, number> = m === undefined ? {} : { dims: m.dims, embedded: m.embedded, embedCached: m.cached, embedMs: Math.round(embedMs) };
  return { documents: corpus.length, ...embed, ...loaded };
}
