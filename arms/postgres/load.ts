import { randomBytes } from 'node:crypto';
import type { Corpus } from '../../evalset/types.js';
import type { Logger } from '../../harness/log.js';
import type { VectorMatrix } from '../dense/store.js';
import type { Db, Tx } from './connection.js';
import type { PostgresParams, VectorParams } from './params.js';
import { checkedSchema, type QuerySettings, settingsSql, tsvectorSql, vectorIndexSql, vectorText, vectorTopSql } from './sql.js';

/** Rows per INSERT: one statement of unnest()ed arrays, a few hundred kB of parameters. */
const BATCH = 500;
/** The cutoffs at which an approximate index's recall against exact search is measured (as for LanceDB). */
const RECALL_CUTOFFS = [10, 100] as const;

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

/**
 * Recall of the approximate index against exact search over the same stored vectors: `recallSample` document
 * vectors (evenly spaced rows) are searched both ways. Stats `annRecallFound@k` (rows the index returned that
 * score at least the exact k-th score: the exact top-k, where rows tied at the cut are interchangeable) and `annRecallExact@k` (size of the exact top-k), the same names and meaning as the
 * LanceDB index's, summable across scopes; recall@k = found / exact; `annRecallQueries` the sample.
 */
export async function measureRecall(
  db: Db,
  schema: string,
  v: VectorParams,
  settings: QuerySettings,
  m: VectorMatrix,
  log: Logger,
  id: string,
): Promise<Record<string, number>> {
  const n = m.ids.length;
  const sample = Math.min(v.recallSample, n);
  const stats: Record<string, number> = { annRecallQueries: sample };
  const msg: string[] = [];
  for (const k of RECALL_CUTOFFS) {
    const kk = Math.min(k, n);
    let found = 0;
    let total = 0;
    for (let i = 0; i < sample; i++) {
      const row = Math.floor((i * n) / sample);
      const q = vectorText(m.vectors, row * m.dims, m.dims);
      const exact = await vectorSearch(db, schema, v, settings, q, kk, true);
      // Which of several rows tied at the k-th score makes the cut is arbitrary; any of them counts as found.
      const kth = exact.at(-1)?.score ?? Number.POSITIVE_INFINITY;
      const ann = await vectorSearch(db, schema, v, settings, q, kk);
      found += Math.min(exact.length, ann.filter((r) => r.score >= kth).length);
      total += exact.length;
    }
    stats[`annRecallFound@${k}`] = found;
    stats[`annRecallExact@${k}`] = total;
    msg.push(`recall@${k} ${(found / Math.max(1, total)).toFixed(3)}`);
  }
  const setting =
    v.index === 'hnsw'
      ? `m ${v.m}, ef_construction ${v.efConstruction}, ef_search ${settings.efSearch ?? 'default'}`
      : `lists ${v.lists}, probes ${settings.probes ?? 'default'}`;
  log.info(`${id}: pgvector ${v.index} (${setting}) over ${n} vectors: ${msg.join(', ')} against exact search (${sample} document vectors as queries)`);
  return stats;
}
