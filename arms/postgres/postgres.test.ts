import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Query, Run } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import { fuse, unpackRun } from '../../harness/fusion/index.js';
import { inputsOf, packAll } from '../../harness/fusion/testing.js';
import { memoryLogger } from '../../harness/log.js';
import { tempDir } from '../../harness/testing/temp.js';
import type { Arm, ArmContext } from '../types.js';
import { closeEmbedded, openEmbedded } from './connection.js';
import { postgresArm } from './index.js';
import { postgresParams } from './params.js';
import { tsquerySql } from './sql.js';
import { alexMemory, SHARED_WORK_DIR } from './testing.js';

// The postgres arm in the embedded database (PGlite with pgvector): the real SQL, no server. hash-embed vectors
// keep it fast; configs/example-postgres.yaml runs the same arm over GloVe (example-postgres.test.ts).
const dir = tempDir('harness-postgres');
const log = memoryLogger();
const ctx: ArmContext = { cache: new ContentStore(join(dir, 'cache')), log, workDir: SHARED_WORK_DIR, env: {} };
const { corpus, queries } = alexMemory();
const HASH = { embed: { kind: 'hash-embed', params: { dims: 64 } } };

const open: Arm[] = [];
async function indexed(id: string, params: Record<string, unknown>, scopeQueries?: readonly Query[]): Promise<{ arm: Arm; stats: Record<string, number> }> {
  const arm = postgresArm.create(id, postgresArm.params.parse(params), ctx);
  open.push(arm);
  return { arm, stats: { ...(await arm.index(corpus, scopeQueries)) } };
}

async function runOf(arm: Arm, topK = 100): Promise<Run> {
  const run = new Map<string, Map<string, number>>();
  for (const q of queries) run.set(q.id, new Map((await arm.search(q, topK)).map((d) => [d.docId, d.score])));
  return run;
}

/** The workbench's ranking order: score descending, then docId descending. */
function inWorkbenchOrder(list: readonly { docId: string; score: number }[]): boolean {
  return list.every((d, i) => i === 0 || list[i - 1]!.score > d.score || (list[i - 1]!.score === d.score && list[i - 1]!.docId > d.docId));
}

let fts: Arm;
let exact: Arm;

beforeAll(async () => {
  fts = (await indexed('pg-fts', { ranking: 'fts' })).arm;
  exact = (await indexed('pg-exact', { ranking: 'vector', vector: HASH })).arm;
}, 240_000);

afterAll(async () => {
  for (const a of open) await a.close?.();
  await closeEmbedded();
});

describe('postgres params', () => {
  it('refuses what would reach SQL text unchecked, and incomplete modes, naming the param', () => {
    const issues = (p: unknown) => postgresParams.safeParse(p).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(issues({ fts: { config: "english'); DROP TABLE x; --" } }).join()).toMatch(/^fts\.config: a text search configuration name/);
    expect(issues({ urlEnv: 'postgres://u:secret@h/db' }).join()).toMatch(/^urlEnv: an environment variable name/);
    expect(issues({ mode: 'query', urlEnv: 'DATABASE_URL' }).join()).toMatch(/^query: mode: query needs query.sql/);
    expect(issues({ mode: 'query', query: { sql: 'SELECT 1' } }).join()).toMatch(/^urlEnv: mode: query reads your own database/);
    expect(issues({ ranking: 'hybrid' }).join()).toMatch(/^vector: ranking: hybrid needs vector.embed/);
    expect(issues({ ranking: 'vector', vector: { ...HASH, index: 'hnsw', m: 16, efConstruction: 20 } }).join()).toMatch(/efConstruction >= 2 \* m/);
  });

  it('keeps the URL out of the fingerprint, and counts a remote load as text leaving the machine', () => {
    const p = postgresParams.parse({ urlEnv: 'DATABASE_URL' });
    expect(JSON.stringify(postgresArm.fingerprint(p))).not.toContain('DATABASE_URL=');
    expect(postgresArm.sendsTextOffMachine(p)).toBe(true);
    expect(postgresArm.sendsTextOffMachine(postgresParams.parse({ urlEnv: 'DATABASE_URL', local: true }))).toBe(false);
    expect(postgresArm.sendsTextOffMachine(postgresParams.parse({}))).toBe(false);
    expect(postgresArm.sendsTextOffMachine(postgresParams.parse({ mode: 'query', urlEnv: 'DATABASE_URL', query: { sql: 'SELECT 1' } }))).toBe(false);
    // Sweeping ef_search changes the fingerprint of a vector arm, not of a full-text one.
    const fp = (x: Record<string, unknown>) => JSON.stringify(postgresArm.fingerprint(postgresParams.parse(x)));
    expect(fp({ ranking: 'vector', vector: HASH, efSearch: 10 })).not.toBe(fp({ ranking: 'vector', vector: HASH, efSearch: 20 }));
    expect(fp({ ranking: 'fts', efSearch: 10 })).toBe(fp({ ranking: 'fts' }));
  });

  it('fails early, exit 2, on an unset URL variable, and never prints a URL it could not reach', async () => {
    const p = postgresParams.parse({ urlEnv: 'HARNESS_NO_SUCH_URL' });
    const unset = await postgresArm.probe?.('a', p, ctx).catch((e: unknown) => e);
    expect(unset).toBeInstanceOf(HarnessError);
    expect((unset as HarnessError).exitCode).toBe(2);
    expect((unset as HarnessError).message).toContain('HARNESS_NO_SUCH_URL (params.urlEnv) is not set');
    const url = 'postgres://harness:s3cret-pw@127.0.0.1:1/db';
    const down = await postgresArm.probe?.('a', p, { ...ctx, env: { HARNESS_NO_SUCH_URL: url } }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(HarnessError);
    expect(String((down as Error).message)).not.toContain('s3cret-pw');
  });
});

describe('postgres full text (ts_rank_cd over websearch_to_tsquery, any term)', () => {
  it('ORs the parsed terms unless every term must match', () => {
    const p = postgresParams.parse({}).fts;
    expect(tsquerySql(p, '$1')).toBe(`replace(websearch_to_tsquery('english'::regconfig, $1)::text, ' & ', ' | ')::tsquery`);
    expect(tsquerySql({ ...p, match: 'all', parser: 'plain' }, '$1')).toBe(`plainto_tsquery('english'::regconfig, $1)`);
  });

  it('ranks the example in the workbench order with scores above its theoretical minimum 0', async () => {
    const hits = await fts.search(queries[0]!, 100);
    expect(hits.length).toBeGreaterThan(3);
    expect(inWorkbenchOrder(hits)).toBe(true);
    expect(hits.every((h) => h.score > 0)).toBe(true);
    expect(postgresArm.theoreticalMinScore(postgresParams.parse({}))).toBe(0);
    // "What is Alex's dog named?": the memories naming the dog (m0034, m0142, graded 3) are found.
    expect(hits.slice(0, 10).map((h) => h.docId)).toContain('m0034');
  });
});

describe('postgres hybrid: RRF of the two lists in one SQL statement', () => {
  it("equals the workbench's own RRF of the full-text and exact vector runs, score for score", async () => {
    const hybrid = (await indexed('pg-hybrid', { ranking: 'hybrid', vector: HASH, hybrid: { rrfK: 60 } })).arm;
    const [a, b, sql] = [await runOf(fts), await runOf(exact), await runOf(hybrid)];
    const ids = queries.map((q) => q.id);
    const { table, packed } = packAll(ids, a, b);
    const workbench = unpackRun(fuse(inputsOf(packed), { method: 'rrf', rrfK: 60, normalization: 'none', absent: 'zero', topK: 100 }), table);
    for (const q of ids) expect([...(sql.get(q) ?? [])], q).toEqual([...(workbench.get(q) ?? [])]);
  });
});

describe('postgres pgvector', () => {
  it('HNSW reports its recall on the eval queries against exact search at every depth, rising with ef_search; exact search has none', async () => {
    const searched = async (id: string, params: Record<string, unknown>) => {
      const { arm } = await indexed(id, params, queries);
      await runOf(arm, 100);
      return { ...(await arm.searchStats?.()) } as Record<string, number>;
    };
    const hnsw = (ef: number) => searched(`pg-hnsw-${ef}`, { ranking: 'vector', vector: { ...HASH, index: 'hnsw', m: 4, efConstruction: 16 }, efSearch: ef });
    const [low, high] = [await hnsw(5), await hnsw(200)];
    const recall = (s: Record<string, number>, k: number) => (s[`annQueryFound@${k}`] ?? Number.NaN) / (s[`annQueryExact@${k}`] ?? Number.NaN);
    expect(low['annQueries']).toBe(queries.length);
    expect(low['annQueryExact@10']).toBe(queries.length * 10);
    expect(low['annQueryExact@100']).toBe(queries.length * 100);
    // ef_search 5 returns about 5 rows (a few queries a row or two more): about half the exact top 10 at most,
    // a twentieth of the top 100; measured 0.050 at 100.
    expect(recall(low, 10)).toBeLessThan(0.6);
    expect(recall(low, 100)).toBeLessThan(0.1);
    expect(recall(high, 10)).toBeGreaterThan(0.95);
    expect(recall(high, 100)).toBeGreaterThan(0.9);
    expect(recall(high, 100)).toBeLessThanOrEqual(1);
    expect(
      log.lines.some((l) => /pg-hnsw-200: pgvector hnsw \(m 4, ef_construction 16, ef_search 200\) on 106 eval queries: recall@5 .*recall@100/.test(l)),
    ).toBe(true);
    const ivf = await searched('pg-ivf', { ranking: 'vector', vector: { ...HASH, index: 'ivfflat', lists: 8 }, probes: 8 });
    // Every list probed is an exhaustive scan: the exact top k, up to rows within rounding of the k-th score.
    expect(recall(ivf, 10)).toBeGreaterThanOrEqual(0.99);
    // A hybrid's vector list is searched again through the index at its depth.
    const hybrid = await searched('pg-hybrid-hnsw', {
      ranking: 'hybrid',
      vector: { ...HASH, index: 'hnsw', m: 4, efConstruction: 16 },
      efSearch: 5,
      hybrid: { depth: 50 },
    });
    expect([hybrid['annQueryExact@50'], hybrid['annQueryExact@100']]).toEqual([queries.length * 50, undefined]);
    expect(recall(hybrid, 50)).toBeLessThan(0.2);
    expect(await (await indexed('pg-exact-2', { ranking: 'vector', vector: HASH }, queries)).arm.searchStats?.()).toEqual({});
  }, 120_000);

  it("sets ef_search with SET LOCAL: it holds for the search's transaction and leaks into no later one", async () => {
    const db = await openEmbedded(SHARED_WORK_DIR);
    const show = () => db.transaction(true, async (tx) => (await tx.query<{ 'hnsw.ef_search': string }>('SHOW hnsw.ef_search'))[0]?.['hnsw.ef_search']);
    const arm = (await indexed('pg-hnsw-7', { ranking: 'vector', vector: { ...HASH, index: 'hnsw' }, efSearch: 7 })).arm;
    // pgvector returns at most ef_search rows from an HNSW scan without iterative scan: the setting took.
    expect((await arm.search(queries[0]!, 50)).length).toBeLessThanOrEqual(7);
    expect(await show()).toBe('40');
  }, 60_000);

  it('drops its scratch schema at close', async () => {
    const db = await openEmbedded(SHARED_WORK_DIR);
    const count = () =>
      db.transaction(
        true,
        async (tx) => (await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'harness_scratch_%'`))[0]?.n,
      );
    const before = await count();
    const { arm } = await indexed('pg-tmp', { ranking: 'fts' });
    expect(await count()).toBe((before ?? 0) + 1);
    await arm.close?.();
    expect(await count()).toBe(before);
  });
});
