import type { JsonValue } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import type { ScoredDoc } from '../types.js';
import type { Db, Tx } from './connection.js';
import type { PostgresParams } from './params.js';
import { quoteIdent, settingsSql } from './sql.js';

/**
 * Query mode: the user's own SELECT over their own table, read only. Its run depends on what the table holds,
 * which no param says, so the probe puts the database's identity and a content check of every table the
 * statement reads into the fingerprint; every search runs under a statement timeout.
 */

type QueryParams = NonNullable<PostgresParams['query']>;

/** The user's SQL wrapped so that every bind parameter sent has a type, and how many it binds. */
export function wrappedSql(id: string, q: QueryParams, withVector: boolean): { sql: string; binds: number } {
  const own = q.sql.trim().replace(/;$/, '');
  const binds = withVector ? 3 : 2;
  const used = Math.max(0, ...Array.from(own.matchAll(/\$(\d+)/g), (m) => Number(m[1])));
  if (used > binds)
    throw new HarnessError(
      `arm '${id}': params.query.sql uses $${used}, but only $1 (query text), $2 (topK)${withVector ? ', $3 (query vector)' : ''} are bound`,
      {
        exitCode: 2,
        hint: withVector ? 'use $1, $2 and $3 only' : 'set params.vector.embed to bind the query vector as $3',
      },
    );
  // PostgreSQL must deduce a type for every parameter sent, and cannot for one the statement never names
  // (a vector query without $1): a second FROM item names them all. Parsed after the user's query, its casts
  // convert what that query deduced rather than conflict with it.
  const typed = ['$1::text', '$2::int', '$3::text'].slice(0, binds).join(', ');
  return { sql: `SELECT harness_q.id, harness_q.score FROM (${own}) harness_q, (SELECT ${typed}) harness_p`, binds };
}

/**
 * The transaction's limits: the statement timeout, and (PostgreSQL 14 and later) a check every second that the
 * client is still there, so a harness killed mid-statement leaves nothing running on the server.
 */
async function limit(tx: Tx, timeoutMs: number): Promise<void> {
  await tx.query(`SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}`);
  await tx.query(`SELECT set_config('client_connection_check_interval', '1000', true) WHERE current_setting('server_version_num')::int >= 140000`);
}

/** One query's rows from a user's SQL, checked: an `id` and a finite numeric `score` each (NULL is no score). */
export function checkedRows(id: string, queryId: string, rows: readonly Record<string, unknown>[]): ScoredDoc[] {
  return rows.map((r, i) => {
    const docId = r['id'];
    const raw = r['score'];
    // numeric and bigint arrive as strings; NULL, booleans and empty text would pass Number() as 0 or 1.
    const score = typeof raw === 'number' || (typeof raw === 'string' && raw.trim() !== '') || typeof raw === 'bigint' ? Number(raw) : Number.NaN;
    if ((typeof docId !== 'string' && typeof docId !== 'number' && typeof docId !== 'bigint') || !Number.isFinite(score))
      throw new HarnessError(
        `arm '${id}': query ${queryId}: row ${i + 1} of params.query.sql has ${raw === null ? 'a NULL `score`' : docId === null ? 'a NULL `id`' : 'no text or integer `id` and finite `score` column'} (id ${String(docId)}, score ${String(raw)})`,
        {
          exitCode: 2,
          hint: 'make the SELECT return the columns id and score (SELECT doc_id AS id, ... AS score), score never NULL (coalesce it, or filter those rows out)',
        },
      );
    return { docId: String(docId), score };
  });
}

/** Runs the user's SQL for one query: `$1` its text, `$2` topK, `$3` its vector when the params embed. */
export async function searchQueryMode(
  id: string,
  p: PostgresParams,
  db: Db,
  query: { id: string; text: string },
  topK: number,
  vector: string | undefined,
): Promise<ScoredDoc[]> {
  const q = p.query as QueryParams;
  const { sql } = wrappedSql(id, q, vector !== undefined);
  const args = vector === undefined ? [query.text, topK] : [query.text, topK, vector];
  const rows = await db
    .transaction(true, async (tx) => {
      await limit(tx, q.timeoutMs);
      for (const set of settingsSql('any', p)) await tx.query(set);
      return tx.query<Record<string, unknown>>(sql, args);
    })
    .catch((err: unknown) => {
      throw queryFailure(id, query.id, q, vector !== undefined, err);
    });
  return checkedRows(id, query.id, rows);
}

function queryFailure(id: string, queryId: string, q: QueryParams, withVector: boolean, err: unknown): HarnessError {
  if (err instanceof HarnessError) return err;
  if ((err as { code?: string }).code === '57014' && /statement timeout/.test((err as Error).message))
    return new HarnessError(`arm '${id}': query ${queryId}: params.query.sql ran past params.query.timeoutMs (${q.timeoutMs} ms) and was cancelled`, {
      hint: 'make the statement faster (an index on what it filters and orders by), or raise params.query.timeoutMs',
      cause: err,
    });
  return new HarnessError(`arm '${id}': params.query.sql failed: ${(err as Error).message}`, {
    exitCode: 2,
    hint: `one SELECT returning columns id and score; it runs in a READ ONLY transaction with $1 the query text, $2 topK${withVector ? ', $3 the query vector' : ''}`,
    cause: err,
  });
}

/** Rows of a table read for its content check: a bounded sample, so a large table costs one count and no more. */
const SAMPLE_ROWS = 1000;

/** Every table the plan of the user's statement reads (views resolve to their tables), as `schema.name`. */
async function tablesRead(tx: Tx, sql: string, binds: number): Promise<string[]> {
  const [plan] = await tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (VERBOSE, FORMAT JSON) ${sql}`, ['', 1, null].slice(0, binds));
  const found = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) for (const n of node) walk(n);
    else if (node !== null && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (typeof o['Relation Name'] === 'string') found.add(`${quoteIdent(String(o['Schema']))}.${quoteIdent(o['Relation Name'])}`);
      for (const v of Object.values(o)) walk(v);
    }
  };
  walk(plan?.['QUERY PLAN']);
  return [...found].sort();
}

/** A table's content check: its row count, its size on disk, and the md5 of its first rows as stored. */
async function tableCheck(tx: Tx, table: string): Promise<JsonValue> {
  const [r] = await tx.query<{ rows: string; bytes: string; sample: string | null }>(
    `SELECT (SELECT count(*) FROM ${table})::text AS rows, pg_total_relation_size($1::regclass)::text AS bytes, ` +
      `(SELECT md5(string_agg(s.t::text, E'\\n')) FROM (SELECT t FROM ${table} t LIMIT ${SAMPLE_ROWS}) s) AS sample`,
    [table],
  );
  return { table, rows: Number(r?.rows), bytes: Number(r?.bytes), sample: r?.sample ?? null };
}

/**
 * What identifies the data a query-mode arm searches, for its fingerprint: the server (address, port, cluster
 * system identifier where this user may read it), the database and user, and each table the statement reads
 * with its content check. Never the URL or a password.
 */
export async function queryModeIdentity(id: string, p: PostgresParams, db: Db): Promise<JsonValue> {
  const { sql, binds } = wrappedSql(id, p.query as QueryParams, p.vector !== undefined);
  return db
    .transaction(true, async (tx) => {
      // A sample read in physical order is the same rows each time only if no other scan decides where it starts.
      await tx.query('SET LOCAL synchronize_seqscans = off');
      const [who] = await tx.query<Record<string, string | number | null>>(
        `SELECT host(inet_server_addr()) AS address, inet_server_port() AS port, current_database() AS database, current_user AS "user", ` +
          `CASE WHEN has_function_privilege('pg_control_system()', 'EXECUTE') THEN (SELECT system_identifier::text FROM pg_control_system()) END AS system`,
      );
      const tables = await tablesRead(tx, sql, binds);
      const checks: JsonValue[] = [];
      for (const t of tables) checks.push(await tableCheck(tx, t));
      return { ...who, tables: checks } as JsonValue;
    })
    .catch((err: unknown) => {
      throw queryFailure(id, '(probe)', p.query as QueryParams, p.vector !== undefined, err);
    });
}
