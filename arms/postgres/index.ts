import type { Corpus, JsonValue, Query } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import { documentText } from '../dense/arm.js';
import type { Arm, ArmContext, ArmFactory, IndexStats, ScoredDoc } from '../types.js';
import { type Db, openDb, packageVersion } from './connection.js';
import { checkEmbed, embedFingerprint, Vectors } from './embed.js';
import { dropScratch, loadScratch, measureRecall, scratchSchema, vectorSearch } from './load.js';
import { type PostgresParams, postgresParams } from './params.js';
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
    return await db.transaction(true, async (tx) => {
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
  } finally {
    await db.release();
  }
}

/** One query's rows from a user's SQL, checked: an `id` and a finite `score` each (`query.sql` names the source). */
function checkedRows(id: string, rows: readonly Record<string, unknown>[]): ScoredDoc[] {
  return rows.map((r, i) => {
    const docId = r['id'];
    const score = Number(r['score']);
    if ((typeof docId !== 'string' && typeof docId !== 'number' && typeof docId !== 'bigint') || !Number.isFinite(score))
      throw new HarnessError(`arm '${id}': row ${i + 1} of params.query.sql has no text or integer \`id\` and finite \`score\` column`, {
        exitCode: 2,
        hint: 'make the SELECT return the columns id and score (SELECT doc_id AS id, ... AS score)',
      });
    return { docId: String(docId), score };
  });
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
  return {
    id,
    async index(corpus: Corpus): Promise<IndexStats> {
      const conn = await connected();
      if (p.mode === 'query') return { documents: corpus.length };
      if (schema !== undefined) await dropScratch(conn, schema);
      schema = scratchSchema();
      return indexScratch(id, p, ctx, conn, schema, corpus, p.ranking === 'fts' ? undefined : vectors);
    },
    async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
      if (db === undefined) throw new HarnessError(`arm '${id}': search called before index`);
      if (topK <= 0) return [];
      if (p.mode === 'query') return searchQueryMode(id, p, db, query.text, topK, p.vector === undefined ? undefined : await queryVector(query.text));
      const s = schema as string;
      if (p.ranking === 'fts')
        return db.transaction(true, (tx) => tx.query<{ id: string; score: number }>(ftsTopSql(s, p.fts, '$1', '$2'), [query.text, topK])).then(toScored);
      const v = p.vector as NonNullable<PostgresParams['vector']>;
      const q = await queryVector(query.text);
      if (p.ranking === 'vector') return toScored(await vectorSearch(db, s, v, p, q, topK));
      const sql = hybridSql(s, p.fts, v, p.hybrid);
      return toScored(
        await db.transaction(true, async (tx) => {
          for (const set of settingsSql(v.index, p)) await tx.query(set);
          if (v.index !== 'exact') await tx.query('SET LOCAL enable_seqscan = off');
          return tx.query<{ id: string; score: number }>(sql, [query.text, p.hybrid.depth ?? topK, q, topK]);
        }),
      );
    },
    async close() {
      if (db !== undefined && schema !== undefined) await dropScratch(db, schema);
      schema = undefined;
      await db?.release();
      db = undefined;
      await vectors?.close();
    },
  };
}

function toScored(rows: readonly { id: string; score: number }[]): ScoredDoc[] {
  return rows.map((r) => ({ docId: r.id, score: Number(r.score) }));
}

/** Embeds (vector rankings), loads the scratch schema, and measures an approximate index's recall. */
async function indexScratch(
  id: string,
  p: PostgresParams,
  ctx: ArmContext,
  db: Db,
  schema: string,
  corpus: Corpus,
  vectors: Vectors | undefined,
): Promise<IndexStats> {
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
  const v = p.vector;
  const recall = m !== undefined && v !== undefined && v.index !== 'exact' && corpus.length > 0 ? await measureRecall(db, schema, v, p, m, ctx.log, id) : {};
  const embed: Record<string, number> = m === undefined ? {} : { dims: m.dims, embedded: m.embedded, embedCached: m.cached, embedMs: Math.round(embedMs) };
  return { documents: corpus.length, ...embed, ...loaded, ...recall };
}

async function searchQueryMode(id: string, p: PostgresParams, db: Db, text: string, topK: number, vector: string | undefined): Promise<ScoredDoc[]> {
  const own = (p.query as NonNullable<PostgresParams['query']>).sql.trim().replace(/;$/, '');
  const args = vector === undefined ? [text, topK] : [text, topK, vector];
  const used = Math.max(0, ...Array.from(own.matchAll(/\$(\d+)/g), (m) => Number(m[1])));
  // PostgreSQL must deduce a type for every parameter sent, and cannot for one the statement never names
  // (a vector query without $1): a second FROM item names them all. Parsed after the user's query, its casts
  // convert what that query deduced rather than conflict with it.
  const typed = ['$1::text', '$2::int', '$3::text'].slice(0, args.length).join(', ');
  const sql = `SELECT harness_q.id, harness_q.score FROM (${own}) harness_q, (SELECT ${typed}) harness_p`;
  if (used > args.length)
    throw new HarnessError(
      `arm '${id}': params.query.sql uses $${used}, but only $1 (query text), $2 (topK)${vector === undefined ? '' : ', $3 (query vector)'} are bound`,
      {
        exitCode: 2,
        hint: vector === undefined ? 'set params.vector.embed to bind the query vector as $3' : 'use $1, $2 and $3 only',
      },
    );
  const rows = await db
    .transaction(true, async (tx) => {
      for (const set of settingsSql('any', p)) await tx.query(set);
      return tx.query<Record<string, unknown>>(sql, args);
    })
    .catch((err: unknown) => {
      if (err instanceof HarnessError) throw err;
      throw new HarnessError(`arm '${id}': params.query.sql failed: ${(err as Error).message}`, {
        exitCode: 2,
        hint: `one SELECT returning columns id and score; it runs in a READ ONLY transaction with $1 the query text, $2 topK${vector === undefined ? '' : ', $3 the query vector'}`,
        cause: err,
      });
    });
  return checkedRows(id, rows);
}
