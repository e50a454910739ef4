import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../harness/errors.js';
import { closeEmbedded, type Db, openEmbedded } from './connection.js';
import { postgresParams } from './params.js';
import { checkedRows, queryModeIdentity, searchQueryMode } from './query-mode.js';
import { SHARED_WORK_DIR } from './testing.js';

// Query mode's own logic on the embedded database (its arm needs a server: real-server.test.ts runs it there).
// PGlite has no timer interrupts, so the statement timeout is checked on the real server only.
const S = 'harness_test_qm';
let db: Db;

beforeAll(async () => {
  db = await openEmbedded(SHARED_WORK_DIR);
}, 120_000);

// Tests run shuffled, and one of them changes the table: each starts from the same rows.
beforeEach(async () => {
  await db.transaction(false, async (tx) => {
    await tx.query(`DROP SCHEMA IF EXISTS ${S} CASCADE`);
    await tx.query(`CREATE SCHEMA ${S}`);
    await tx.query(`CREATE TABLE ${S}.mem (mem_id text, body text, w float8)`);
    await tx.query(`INSERT INTO ${S}.mem VALUES ('a', 'alpha', 1), ('b', 'beta', NULL), ('c', 'gamma', 3)`);
    await tx.query(`CREATE VIEW ${S}.mem_view AS SELECT * FROM ${S}.mem`);
  });
});

afterAll(async () => {
  await db?.transaction(false, (tx) => tx.query(`DROP SCHEMA IF EXISTS ${S} CASCADE`));
  await db?.release();
  await closeEmbedded();
});

const params = (sql: string) => postgresParams.parse({ mode: 'query', urlEnv: 'PG_URL', query: { sql } });
const search = (sql: string) => searchQueryMode('pg-mine', params(sql), db, { id: 'q7', text: 'alpha' }, 10, undefined);

describe('query mode scores', () => {
  it('a NULL score is refused naming the arm, the query and the row, never read as 0', async () => {
    const err = (await search(`SELECT mem_id AS id, w AS score FROM ${S}.mem ORDER BY mem_id LIMIT $2`).catch((e: unknown) => e)) as HarnessError;
    expect(err).toBeInstanceOf(HarnessError);
    expect([err.message, err.exitCode]).toEqual(["arm 'pg-mine': query q7: row 2 of params.query.sql has a NULL `score` (id b, score null)", 2]);
    expect(err.hint).toMatch(/never NULL/);
    const ok = await search(`SELECT mem_id AS id, coalesce(w, 0)::numeric AS score FROM ${S}.mem ORDER BY mem_id LIMIT $2`);
    expect(ok).toEqual([
      { docId: 'a', score: 1 },
      { docId: 'b', score: 0 },
      { docId: 'c', score: 3 },
    ]);
  });

  it('text, NaN, booleans, empty text and a NULL id are refused the same way; numeric text (numeric, bigint) is read', () => {
    const refused = (score: unknown, id: unknown = 'd1') => {
      try {
        checkedRows('arm1', 'q1', [{ id, score }]);
        return 'accepted';
      } catch (e) {
        return (e as HarnessError).message;
      }
    };
    for (const bad of ['high', 'NaN', true, '', undefined, Number.POSITIVE_INFINITY])
      expect(refused(bad), String(bad)).toMatch(/^arm 'arm1': query q1: row 1 /);
    expect(refused(null)).toBe("arm 'arm1': query q1: row 1 of params.query.sql has a NULL `score` (id d1, score null)");
    expect(refused(1, null)).toBe("arm 'arm1': query q1: row 1 of params.query.sql has a NULL `id` (id null, score 1)");
    expect(
      checkedRows('arm1', 'q1', [
        { id: 5n, score: '0.25' },
        { id: 'x', score: -2 },
      ]),
    ).toEqual([
      { docId: '5', score: 0.25 },
      { docId: 'x', score: -2 },
    ]);
  });
});

describe('query mode identity (the fingerprint of the data searched)', () => {
  const VIEW_SQL = `SELECT mem_id AS id, length(body)::float8 AS score FROM ${S}.mem_view WHERE body <> $1 LIMIT $2`;
  const identity = () => queryModeIdentity('pg-mine', params(VIEW_SQL), db);

  it('names the database and every table the statement reads (through a view), with a content check', async () => {
    const id = (await identity()) as { database: string; tables: { table: string; rows: number; sample: string }[] };
    expect(id.database).toBe('postgres');
    expect(id.tables.map((t) => [t.table, t.rows])).toEqual([[`"${S}"."mem"`, 3]]);
    expect(id.tables[0]?.sample).toMatch(/^[0-9a-f]{32}$/);
    expect(await identity()).toEqual(id);
  });

  it('changes when a row is added, and when a row is rewritten with the count unchanged', async () => {
    const before = JSON.stringify(await identity());
    await db.transaction(false, (tx) => tx.query(`UPDATE ${S}.mem SET body = 'delta' WHERE mem_id = 'c'`));
    const rewritten = JSON.stringify(await identity());
    expect(rewritten).not.toBe(before);
    await db.transaction(false, (tx) => tx.query(`INSERT INTO ${S}.mem VALUES ('d', 'epsilon', 4)`));
    const grown = JSON.stringify(await identity());
    expect(grown).not.toBe(rewritten);
    expect(grown).toContain('"rows":4');
  });
});
