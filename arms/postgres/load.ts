import { randomBytes } from 'node:crypto';
import type { Corpus } from '../../evalset/types.js';
import type { QueryRecall } from '../dense/ann-recall.js';
import type { VectorMatrix } from '../dense/store.js';
import type { Db, Tx } from './connection.js';
import type { PostgresParams, VectorParams } from './params.js';
import { checkedSchema, type QuerySettings, settingsSql, tsvectorSql, vectorIndexSql, vectorText, vectorTopSql } from './sql.js';

/** Rows per INSERT: one statement of unnest()ed arrays, a few hundred kB of parameters. */
const BATCH = 500;

/** A fresh scratch schema name, so arms sharing one database (or a rerun after a crash) never collide. */
export function scratchSchema(): string {
  return `harness_scratch_${randomBytes(6).toString('hex')}`;
}

/**
 * Creates `schema` with table `docs(row, id, tsv, emb)`, loads the corpus (and its vectors, rows L2-normalised)
 * and builds the GIN index on `tsv` and the vector index the params ask for, in one transaction. Returns the
 * load and index build times in ms.
 */
export async function loadScratch(db: Db, schema: string, p: PostgresParams, corpus: Corpus, m: VectorMatrix | undefined): Promise<Record<string, number>> {
  const s = checkedSchema(schema);
  const v = p.vector;
  const withVectors = m !== undefined && v !== undefined;
  const t0 = performance.now();
  let t1 = t0;
  await db.transaction(false, async (tx) => {
    if (withVectors && db.engine === 'server') await createVectorExtension(tx);
    await tx.query(`CREATE SCHEMA ${s}`);
    const emb = withVectors ? `, emb ${v.type}(${m.dims})` : '';
    await tx.query(`CREATE TABLE ${s}.docs (row int PRIMARY KEY, id text NOT NULL, tsv tsvector${emb})`);
    const insert =
      `INSERT INTO ${s}.docs (row, id, tsv${withVectors ? ', emb' : ''}) ` +
      `SELECT r, i, ${tsvectorSql(p.fts, 'ti', 'tx')}${withVectors ? `, e::${v.type}` : ''} ` +
      `FROM unnest($1::int[], $2::text[], $3::text[], $4::text[]${withVectors ? ', $5::text[]' : ''}) AS u(r, i, ti, tx${withVectors ? ', e' : ''})`;
    for (let from = 0; from < corpus.length; from += BATCH) {
      const docs = corpus.slice(from, from + BATCH);
      const args: unknown[][] = [docs.map((_, j) => from + j), docs.map((d) => d.id), docs.map((d) => d.title ?? ''), docs.map((d) => d.text)];
      if (withVectors) args.push(docs.map((_, j) => vectorText(m.vectors, (from + j) * m.dims, m.dims)));
      await tx.query(insert, args);
    }
    await tx.query(`CREATE INDEX docs_tsv ON ${s}.docs USING gin (tsv)`);
    t1 = performance.now();
    const ddl = withVectors ? vectorIndexSql(s, v) : undefined;
    if (ddl !== undefined) await tx.query(ddl);
    await tx.query(`ANALYZE ${s}.docs`);
  });
  return { pgLoadMs: Math.round(t1 - t0), pgIndexBuildMs: Math.round(performance.now() - t1) };
}

async function createVectorExtension(tx: Tx): Promise<void> {
  const have = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'`);
  if ((have[0]?.n ?? 0) === 0) await tx.query('CREATE EXTENSION vector');
}

export async function dropScratch(db: Db, schema: string): Promise<void> {
  await db.transaction(false, (tx) => tx.query(`DROP SCHEMA IF EXISTS ${checkedSchema(schema)} CASCADE`));
}

/**
 * Runs the vector top-k inside one transaction with the index's query-time settings. An approximate arm also
 * turns sequential scans off, so the planner uses the index even on a table small enough to scan: the arm
 * measures the index, which is what a production-size table gets.
 */
export async function vectorSearch(
  db: Db,
  schema: string,
  v: VectorParams,
  settings: QuerySettings,
  q: string,
  topK: number,
  exact = false,
): Promise<{ id: string; score: number }[]> {
  const p: VectorParams = exact ? { ...v, index: 'exact' } : v;
  return db.transaction(true, async (tx) => {
    for (const s of settingsSql(p.index, settings)) await tx.query(s);
    if (p.index !== 'exact') await tx.query('SET LOCAL enable_seqscan = off');
    return tx.query<{ id: string; score: number }>(vectorTopSql(schema, p, '$1', '$2'), [q, topK]);
  });
}

/** One measured query: its vector, the depth its vector list was searched to, and that list's scores when the search kept them. */
export interface PendingRecall {
  readonly q: string;
  readonly depth: number;
  /** The ANN answer's scores as the run returned them (`ranking: vector`); absent: searched again here (hybrid). */
  readonly scores?: readonly number[];
}

/**
 * Recall on the eval queries (arms/dense/ann-recall.ts): each pending query searched exactly over the same
 * stored vectors, at the depth the run searched it to, into `recall`. Rows the index returned compare by score
 * with the exact k-th, pgvector computing both the same way. A hybrid's vector list is not in its answer, so it
 * is searched again through the index: the same index and settings give the same list.
 */
export async function measureQueryRecall(
  db: Db,
  schema: string,
  v: VectorParams,
  settings: QuerySettings,
  pending: readonly PendingRecall[],
  recall: QueryRecall,
): Promise<void> {
  for (const x of pending) {
    const exact = await vectorSearch(db, schema, v, settings, x.q, x.depth, true);
    const ann = x.scores ?? (await vectorSearch(db, schema, v, settings, x.q, x.depth)).map((r) => Number(r.score));
    recall.add(
      x.depth,
      exact.map((r) => Number(r.score)),
      ann,
    );
  }
}

/** `hnsw (m 4, ef_construction 16, ef_search 10)`, for the log. */
export function describeVectorIndex(v: VectorParams, settings: QuerySettings): string {
  const setting =
    v.index === 'hnsw'
      ? `m ${v.m}, ef_construction ${v.efConstruction}, ef_search ${settings.efSearch ?? 'default'}`
      : `lists ${v.lists}, probes ${settings.probes ?? 'default'}`;
  return `${v.index} (${setting})`;
}
