import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { type FusionSpec, fuse, fuseParamsSchema, resolveFuseParams, unpackRun } from '../../harness/fusion/index.js';
import { inputsOf, packAll } from '../../harness/fusion/testing.js';
import { memoryLogger } from '../../harness/log.js';
import { tempDir } from '../../harness/testing/temp.js';
import type { Arm, ArmContext } from '../types.js';
import { closeEmbedded } from './connection.js';
import { exportFromReport, exportFusionSql } from './export.js';
import { postgresArm } from './index.js';
import { alexMemory, SHARED_WORK_DIR } from './testing.js';

// The fusions SQL can express, run as one statement by the postgres arm (ranking: hybrid) on the bundled example
// in the embedded database, against the workbench's `fuse` of the arm's own full-text and vector runs.
const dir = tempDir('harness-postgres-fusion-sql');
const ctx: ArmContext = { cache: new ContentStore(join(dir, 'cache')), log: memoryLogger(), workDir: SHARED_WORK_DIR, env: {} };
const { corpus, queries } = alexMemory();
const VECTOR = { embed: { kind: 'hash-embed', params: { dims: 64 } } };
const TOP_K = 100;

const open: Arm[] = [];
async function indexed(params: Record<string, unknown>): Promise<Arm> {
  const arm = postgresArm.create(`pg-${open.length}`, postgresArm.params.parse(params), ctx);
  open.push(arm);
  await arm.index(corpus);
  return arm;
}

async function runOf(arm: Arm): Promise<Run> {
  const run = new Map<string, Map<string, number>>();
  for (const q of queries) run.set(q.id, new Map((await arm.search(q, TOP_K)).map((d) => [d.docId, d.score])));
  return run;
}

let fts: Run;
let vec: Run;

beforeAll(async () => {
  fts = await runOf(await indexed({ ranking: 'fts' }));
  vec = await runOf(await indexed({ ranking: 'vector', vector: VECTOR }));
}, 240_000);

afterAll(async () => {
  for (const a of open) await a.close?.();
  await closeEmbedded();
});

const CASES = [
  { name: 'weighted rrf (k 20, fts 0.7, vector 1.3)', hybrid: { method: 'rrf', rrfK: 20, weights: { fts: 0.7, vector: 1.3 } }, exact: true },
  { name: 'cc min-max (0.3 / 0.7)', hybrid: { method: 'cc', normalization: 'min-max', weights: { fts: 0.3, vector: 0.7 } }, exact: true },
  { name: 'cc z-score (equal weights)', hybrid: { method: 'cc', normalization: 'z-score' }, exact: false },
  { name: 'cc dbsf (0.6 / 0.4)', hybrid: { method: 'cc', normalization: 'dbsf', weights: { fts: 0.6, vector: 0.4 } }, exact: false },
] as const;

describe('fusion in one SQL statement against the workbench fuse of the same two runs', () => {
  it.each(CASES)(
    '$name: the same ranking for every query; scores equal (bit for bit where no aggregate sums)',
    async (c) => {
      const sql = await runOf(await indexed({ ranking: 'hybrid', vector: VECTOR, hybrid: c.hybrid }));
      const h = postgresArm.params.parse({ ranking: 'hybrid', vector: VECTOR, hybrid: c.hybrid }).hybrid;
      const spec: FusionSpec = { method: h.method, rrfK: h.rrfK, normalization: h.method === 'rrf' ? 'none' : h.normalization, absent: 'zero', topK: TOP_K };
      const ids = queries.map((q) => q.id);
      const { table, packed } = packAll(ids, fts, vec);
      const want = unpackRun(fuse(inputsOf(packed, [{ weight: h.weights.fts }, { weight: h.weights.vector }]), spec), table);
      let maxDiff = 0;
      let compared = 0;
      for (const q of ids) {
        const got = [...(sql.get(q) ?? new Map<string, number>())];
        const exp = [...(want.get(q) ?? new Map<string, number>())];
        expect(
          got.map(([d]) => d),
          q,
        ).toEqual(exp.map(([d]) => d));
        got.forEach(([, s], i) => {
          maxDiff = Math.max(maxDiff, Math.abs(s - exp[i]![1]));
          compared++;
        });
      }
      expect(compared).toBeGreaterThan(1000);
      if (c.exact) expect(maxDiff).toBe(0);
      else expect(maxDiff).toBeLessThan(1e-12);
    },
    240_000,
  );
});

describe('a workbench fusion exported as SQL and run back through the arm', () => {
  const ftsP = postgresArm.params.parse({ ranking: 'fts' });
  const vecP = postgresArm.params.parse({ ranking: 'vector', vector: VECTOR });

  it('cc dbsf with alpha 0.35 (a tuned point): the exported statement ranks as the workbench fuse does', async () => {
    const fuseP = fuseParamsSchema.parse({ method: 'cc', normalization: 'dbsf', alpha: 0.35 });
    const out = exportFusionSql(fuseP, ['pg-fts', 'pg-vec'], ftsP, vecP, 'harness_scratch_x');
    expect(out.hybrid).toMatchObject({ method: 'cc', normalization: 'dbsf', weights: { fts: 0.35, vector: 0.65 } });
    expect(out.sql).toContain('stddev_samp(score) OVER ()');
    expect(out.sql).toMatch(/^WITH f AS \(SELECT id, score, .* FROM \(SELECT id, ts_rank_cd\(/);
    const sql = await runOf(await indexed({ ranking: 'hybrid', fts: ftsP.fts, vector: VECTOR, hybrid: out.hybrid }));
    const r = resolveFuseParams(fuseP, ['pg-fts', 'pg-vec']);
    const ids = queries.map((q) => q.id);
    const { table, packed } = packAll(ids, fts, vec);
    const spec: FusionSpec = { ...r.spec, topK: TOP_K };
    const want = unpackRun(
      fuse(
        inputsOf(
          packed,
          r.weights.map((weight) => ({ weight })),
        ),
        spec,
      ),
      table,
    );
    for (const q of ids) {
      const got = [...(sql.get(q) ?? new Map<string, number>())];
      const exp = [...(want.get(q) ?? new Map<string, number>())];
      expect(
        got.map(([d]) => d),
        q,
      ).toEqual(exp.map(([d]) => d));
      got.forEach(([, x], i) => expect(Math.abs(x - exp[i]![1])).toBeLessThan(1e-12));
    }
  }, 240_000);

  it('refuses what SQL here does not express, naming each reason', () => {
    const refuse =
      (p: Record<string, unknown>, v = vecP) =>
      () =>
        exportFusionSql(fuseParamsSchema.parse(p), ['pg-fts', 'pg-vec'], ftsP, v, 's');
    expect(refuse({ method: 'combmnz' })).toThrow(/method combmnz: only rrf and cc are exported/);
    expect(refuse({ method: 'cc', normalization: 'tm2c2', absent: 'min' })).toThrow(/normalization tm2c2[\s\S]*absent min/);
    expect(refuse({ method: 'rrf', weights: { 'pg-fts': 0 } })).toThrow(/a list of weight 0/);
    const hybrid = postgresArm.params.parse({ ranking: 'hybrid', vector: VECTOR });
    expect(refuse({ method: 'rrf' }, hybrid)).toThrow(/second input must be a postgres arm with ranking: vector or ranking: fts/);
  });
});

describe("exportFromReport: a report's fusion (declared or tuned) over two postgres arms", () => {
  const fts = { id: 'pg-fts', kind: 'postgres', node: 'retrieve', params: postgresArm.params.parse({ ranking: 'fts' }) };
  const vec = { id: 'pg-exact', kind: 'postgres', node: 'retrieve', params: postgresArm.params.parse({ ranking: 'vector', vector: VECTOR }) };
  const point = (alpha: number) => ({
    id: `cc.alpha=${alpha}`,
    kind: 'cc',
    node: 'fuse',
    inputs: ['pg-fts', 'pg-exact'],
    params: fuseParamsSchema.parse({ method: 'cc', normalization: 'dbsf', alpha }),
  });
  const tuned = (members: string[]) => ({ id: 'cc.tuned', kind: 'tuned', node: 'tune', tuning: { choices: members.map((member) => ({ member })) } });

  it('a tuned system exports its picked point, with its weights', () => {
    const out = exportFromReport([fts, vec, point(0.2), point(0.6), tuned(['cc.alpha=0.6'])], 'cc.tuned');
    expect(out.system).toBe('cc.alpha=0.6');
    expect(out.hybrid).toMatchObject({ method: 'cc', normalization: 'dbsf', weights: { fts: 0.6, vector: 0.4 } });
    expect(out.sql).toContain('FROM harness_scratch.docs');
  });

  it('refuses folds that picked different points, unknown ids and non-postgres inputs', () => {
    expect(() => exportFromReport([fts, vec, point(0.2), point(0.6), tuned(['cc.alpha=0.2', 'cc.alpha=0.6'])], 'cc.tuned')).toThrow(/2 different points/);
    expect(() => exportFromReport([fts, vec], 'nope')).toThrow(/no system "nope"/);
    expect(() => exportFromReport([{ ...fts, kind: 'bm25' }, vec, point(0.2)], 'cc.alpha=0.2')).toThrow(/must both be postgres arms/);
  });
});
