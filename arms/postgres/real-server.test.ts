import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import { memoryLogger } from '../../harness/log.js';
import { tempDir } from '../../harness/testing/temp.js';
import type { Arm, ArmContext } from '../types.js';
import { closeEmbedded } from './connection.js';
import { postgresArm } from './index.js';
import { alexMemory, SHARED_WORK_DIR } from './testing.js';

// The postgres arm against a real PostgreSQL server: the one `.ci/run` installs from Debian and starts, its URL
// in HARNESS_TEST_PG_URL. Without it the file skips and says why on stderr.
const URL_ENV = 'HARNESS_TEST_PG_URL';
const url = process.env[URL_ENV];
const skip = url === undefined || url === '';
if (skip) process.stderr.write(`[skip] postgres arm on a real server: ${URL_ENV} is unset (.ci/run starts one and sets it)\n`);

// A file whose every test is skipped runs no hooks, so its folder would never be removed: none is made then.
const dir = skip ? '' : tempDir('harness-postgres-server');
const ctx: ArmContext = { cache: new ContentStore(join(dir, 'cache')), log: memoryLogger(), workDir: SHARED_WORK_DIR, env: { [URL_ENV]: url ?? '' } };
const { corpus, queries } = alexMemory();
const FTS = { ranking: 'fts', fts: { config: 'english', parser: 'websearch', match: 'any', rank: 'ts_rank_cd', normalization: 0 } };
/** The user's own table in query mode: a schema of its own, with its own column names. */
const PROD = 'harness_test_prod';

async function runOf(id: string, params: Record<string, unknown>): Promise<Run> {
  const arm: Arm = postgresArm.create(id, postgresArm.params.parse(params), ctx);
  try {
    await arm.index(corpus);
    const run = new Map<string, Map<string, number>>();
    for (const q of queries) run.set(q.id, new Map((await arm.search(q, 100)).map((d) => [d.docId, d.score])));
    return run;
  } finally {
    await arm.close?.();
  }
}

describe.skipIf(skip)('postgres arm on a real PostgreSQL server', () => {
  let admin: pg.Client;
  let pgvector: string | null = null;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const r = await admin.query<{ v: string | null }>(`SELECT (SELECT default_version FROM pg_available_extensions WHERE name = 'vector') AS v`);
    pgvector = r.rows[0]?.v ?? null;
    await admin.query(`DROP SCHEMA IF EXISTS ${PROD} CASCADE; CREATE SCHEMA ${PROD}`);
    await admin.query(
      `CREATE TABLE ${PROD}.memories (mem_id text PRIMARY KEY, body text NOT NULL, tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)`,
    );
    // A function that writes: a query calling it must fail in the READ ONLY transaction and change nothing.
    await admin.query(`CREATE FUNCTION ${PROD}.purge() RETURNS int LANGUAGE sql AS 'DELETE FROM ${PROD}.memories RETURNING 1'`);
    await admin.query(`INSERT INTO ${PROD}.memories (mem_id, body) SELECT * FROM unnest($1::text[], $2::text[])`, [
      corpus.map((d) => d.id),
      corpus.map((d) => d.text),
    ]);
  }, 60_000);

  /** Backends of this server running a pg_sleep: a cancelled statement leaves none. */
  async function sleepers(): Promise<number> {
    const r = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()`,
    );
    return r.rows[0]?.n ?? 0;
  }

  afterAll(async () => {
    await admin?.query(`DROP SCHEMA IF EXISTS ${PROD} CASCADE`);
    await admin?.end();
    await closeEmbedded();
  });

  it('probes the server version into the fingerprint, never the URL', async () => {
    const p = postgresArm.params.parse({ ...FTS, urlEnv: URL_ENV });
    const probed = JSON.stringify(await postgresArm.probe?.('pg-fts', p, ctx));
    expect(probed).toMatch(/"engine":"server","server":"\d+/);
    expect(probed).not.toContain(url);
  });

  it('ranks full text exactly as the embedded database does (same runs, score for score)', async () => {
    const server = await runOf('pg-fts-server', { ...FTS, urlEnv: URL_ENV, local: true });
    const embedded = await runOf('pg-fts-embedded', FTS);
    for (const q of queries) expect([...(server.get(q.id) ?? [])], q.id).toEqual([...(embedded.get(q.id) ?? [])]);
    // The scratch schema is gone once the arm closes.
    const left = await admin.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'harness_scratch_%'`);
    expect(left.rows[0]?.n).toBe(0);
  }, 240_000);

  it('query mode reads your own table with your SQL, in a READ ONLY transaction, and gives the same run', async () => {
    const sql =
      `SELECT mem_id AS id, ts_rank_cd('{0.1,0.2,0.4,1}'::float4[], tsv, q, 0)::float8 AS score FROM ${PROD}.memories, ` +
      `(SELECT replace(websearch_to_tsquery('english', $1)::text, ' & ', ' | ')::tsquery AS q) t ` +
      `WHERE tsv @@ q ORDER BY score DESC, mem_id COLLATE "C" DESC LIMIT $2`;
    const mine = await runOf('pg-own-table', { mode: 'query', urlEnv: URL_ENV, query: { sql } });
    const loaded = await runOf('pg-fts-server', { ...FTS, urlEnv: URL_ENV, local: true });
    for (const q of queries) expect([...(mine.get(q.id) ?? [])], q.id).toEqual([...(loaded.get(q.id) ?? [])]);
    // A statement that never names $1 still runs: every parameter sent gets a type.
    const longest = postgresArm.create(
      'pg-longest',
      postgresArm.params.parse({
        mode: 'query',
        urlEnv: URL_ENV,
        query: { sql: `SELECT mem_id AS id, length(body)::float8 AS score FROM ${PROD}.memories ORDER BY score DESC, mem_id DESC LIMIT $2;` },
      }),
      ctx,
    );
    await longest.index(corpus);
    expect(await longest.search(queries[0]!, 5)).toHaveLength(5);
    await longest.close?.();
    const writer = postgresArm.create(
      'pg-writes',
      postgresArm.params.parse({
        mode: 'query',
        urlEnv: URL_ENV,
        query: { sql: `SELECT mem_id AS id, ${PROD}.purge()::float8 AS score FROM ${PROD}.memories LIMIT $2` },
      }),
      ctx,
    );
    await writer.index(corpus);
    const err = await writer.search(queries[0]!, 10).catch((e: unknown) => e);
    await writer.close?.();
    expect(err).toBeInstanceOf(HarnessError);
    expect((err as HarnessError).message).toMatch(/params\.query\.sql failed: cannot execute DELETE in a read-only transaction/);
    expect((await admin.query(`SELECT count(*)::int AS n FROM ${PROD}.memories`)).rows[0]?.n).toBe(corpus.length);
  }, 240_000);

  it('query mode: a statement past params.query.timeoutMs is cancelled on the server and fails the run, naming the query', async () => {
    const slow = postgresArm.create(
      'pg-slow',
      postgresArm.params.parse({
        mode: 'query',
        urlEnv: URL_ENV,
        query: { sql: `SELECT 'a' AS id, pg_sleep(600)::text::float8 AS score LIMIT $2`, timeoutMs: 300 },
      }),
      ctx,
    );
    await slow.index(corpus);
    const t0 = performance.now();
    const err = (await slow.search(queries[0]!, 10).catch((e: unknown) => e)) as HarnessError;
    await slow.close?.();
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(HarnessError);
    expect([err.message, err.exitCode]).toEqual([
      `arm 'pg-slow': query ${queries[0]!.id}: params.query.sql ran past params.query.timeoutMs (300 ms) and was cancelled`,
      1,
    ]);
    expect(await sleepers()).toBe(0);
  });

  it('query mode: a harness killed mid-statement leaves nothing running on the server (PostgreSQL 14 and later)', async (t) => {
    const v = Number((await admin.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]?.v);
    if (v < 140000) {
      process.stderr.write('[skip] cancel of a killed client: the server is older than PostgreSQL 14 (statement_timeout still bounds it)\n');
      t.skip();
      return;
    }
    const script = `const { postgresArm } = await import(${JSON.stringify(join(import.meta.dirname, 'index.ts'))});
      const p = postgresArm.params.parse({ mode: 'query', urlEnv: 'PG_URL', query: { sql: "SELECT 'a' AS id, pg_sleep(600)::text::float8 AS score LIMIT $2", timeoutMs: 600000 } });
      const arm = postgresArm.create('pg-sleep', p, { env: process.env, workDir: '', log: { info() {}, warn() {} } });
      await arm.index([]); console.log('searching'); await arm.search({ id: 'q', text: 'x' }, 10);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, PG_URL: url }, stdio: 'pipe' });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    for (let i = 0; i < 50 && (await sleepers()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await sleepers()).toBe(1);
    child.kill('SIGKILL');
    let left = 1;
    for (let i = 0; i < 50 && left > 0; i++, await new Promise((r) => setTimeout(r, 100))) left = await sleepers();
    expect(left).toBe(0);
  });

  it("query mode's fingerprint names the database and what its tables hold: another database or changed rows never hit the old run", async () => {
    const p = postgresArm.params.parse({
      mode: 'query',
      urlEnv: URL_ENV,
      query: { sql: `SELECT mem_id AS id, 1::float8 AS score FROM ${PROD}.memories LIMIT $2` },
    });
    const probe = async (env: string) => JSON.stringify(await postgresArm.probe?.('pg-mine', p, { ...ctx, env: { [URL_ENV]: env } }));
    const before = await probe(url as string);
    expect(before).toContain(`"table":"\\"${PROD}\\".\\"memories\\"","rows":${corpus.length}`);
    expect(before).not.toContain(url);
    // One row rewritten, the count unchanged; put back after, for the tests that compare runs on this table.
    const first = `(SELECT min(mem_id) FROM ${PROD}.memories)`;
    await admin.query(`UPDATE ${PROD}.memories SET body = body || ' x' WHERE mem_id = ${first}`);
    const rewritten = await probe(url as string);
    await admin.query(`UPDATE ${PROD}.memories SET body = left(body, -2) WHERE mem_id = ${first}`);
    expect(rewritten).not.toBe(before);
    await admin.query(`DROP DATABASE IF EXISTS harness_test_other`);
    await admin.query(`CREATE DATABASE harness_test_other`);
    try {
      const other = new URL(url as string);
      other.pathname = '/harness_test_other';
      const o = new pg.Client({ connectionString: other.toString() });
      await o.connect();
      await o.query(`CREATE SCHEMA ${PROD}; CREATE TABLE ${PROD}.memories AS SELECT 'm1'::text AS mem_id, 'body'::text AS body`);
      await o.end();
      const there = await probe(other.toString());
      expect(there).toContain('"database":"harness_test_other"');
      expect(there).not.toBe(before);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS harness_test_other`);
    }
  });

  it('pgvector on the server: exact search equals the embedded one (skips, saying so, where the extension is not installed)', async (t) => {
    if (pgvector === null) {
      process.stderr.write(
        '[skip] pgvector on the real server: the extension is not available there (Debian: postgresql-15-pgvector is not installed); full text only\n',
      );
      t.skip();
      return;
    }
    const params = { ranking: 'vector', vector: { embed: { kind: 'hash-embed', params: { dims: 64 } } } };
    const server = await runOf('pg-vec-server', { ...params, urlEnv: URL_ENV, local: true });
    const embedded = await runOf('pg-vec-embedded', params);
    for (const q of queries)
      expect(
        [...(server.get(q.id) ?? [])].map(([d]) => d),
        q.id,
      ).toEqual([...(embedded.get(q.id) ?? [])].map(([d]) => d));
  }, 240_000);
});
