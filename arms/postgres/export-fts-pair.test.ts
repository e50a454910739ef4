import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { fuse, fuseParamsSchema, resolveFuseParams, unpackRun } from '../../harness/fusion/index.js';
import { inputsOf, packAll } from '../../harness/fusion/testing.js';
import { memoryLogger } from '../../harness/log.js';
import { runCaptured } from '../../harness/testing/cli.js';
import { tempDir } from '../../harness/testing/temp.js';
import type { Arm, ArmContext } from '../types.js';
import { closeEmbedded, type Db, openEmbedded } from './connection.js';
import { postgresArm } from './index.js';
import { alexMemory, SHARED_WORK_DIR } from './testing.js';

// `harness export-sql` on a fusion of two full-text postgres arms: the statement it prints, run as printed on a
// table built with the tsvector columns it prints, against the workbench's `fuse` of the two arms' own runs.
const dir = tempDir('harness-export-fts-pair');
const ctx: ArmContext = { cache: new ContentStore(join(dir, 'cache')), log: memoryLogger(), workDir: SHARED_WORK_DIR, env: {} };
const { corpus, queries } = alexMemory();
const TOP_K = 100;

/** Three full-text arms: english cover density (the default), simple with separate fields, and english by ts_rank. */
const ARMS = {
  'pg-english': {},
  'pg-simple': { config: 'simple', fields: 'separate', rank: 'ts_rank', normalization: 32 },
  'pg-rank': { rank: 'ts_rank', normalization: 1, weights: [0.2, 0.3, 0.5, 1] },
} as const;
type ArmId = keyof typeof ARMS;
const paramsOf = (id: ArmId) => postgresArm.params.parse({ ranking: 'fts', fts: ARMS[id] });

const runs = new Map<ArmId, Run>();
const arms: Arm[] = [];
let db: Db;

beforeAll(async () => {
  for (const id of Object.keys(ARMS) as ArmId[]) {
    const arm = postgresArm.create(id, paramsOf(id), ctx);
    arms.push(arm);
    await arm.index(corpus);
    const run = new Map<string, Map<string, number>>();
    for (const q of queries) run.set(q.id, new Map((await arm.search(q, TOP_K)).map((d) => [d.docId, d.score])));
    runs.set(id, run);
  }
  // The deployment's table: the corpus under the name the printed statement reads, tsvector columns added per export.
  db = await openEmbedded(SHARED_WORK_DIR);
  await db.transaction(false, async (tx) => {
    await tx.query('CREATE SCHEMA harness_scratch');
    await tx.query('CREATE TABLE harness_scratch.docs (id text NOT NULL, title text NOT NULL, text text NOT NULL)');
    await tx.query('INSERT INTO harness_scratch.docs SELECT * FROM unnest($1::text[], $2::text[], $3::text[])', [
      corpus.map((d) => d.id),
      corpus.map((d) => d.title ?? ''),
      corpus.map((d) => d.text),
    ]);
  });
}, 240_000);

afterAll(async () => {
  await db?.transaction(false, (tx) => tx.query('DROP SCHEMA IF EXISTS harness_scratch CASCADE'));
  await db?.release();
  for (const a of arms) await a.close?.();
  await closeEmbedded();
});

/** `harness export-sql` of the fusion `params` over `inputs`, from a report.json holding the three arms. */
async function exported(name: string, inputs: readonly [ArmId, ArmId], params: Record<string, unknown>) {
  const folder = join(dir, name);
  mkdirSync(folder);
  const fusion = { id: name, kind: String(params['method']), node: 'fuse', inputs, params: fuseParamsSchema.parse(params) };
  const armRuns = (Object.keys(ARMS) as ArmId[]).map((id) => ({ id, kind: 'postgres', node: 'retrieve', params: paramsOf(id) }));
  writeFileSync(join(folder, 'report.json'), JSON.stringify({ runs: [...armRuns, fusion] }));
  return runCaptured(['export-sql', '--report', folder, '--system', name], folder);
}

/** The printed tsvector columns (`--   tsv = <expression>`), as [name, expression]. */
function printedColumns(printed: string): [string, string][] {
  return [...printed.matchAll(/^-- {3}(tsv2?) = (.*)$/gm)].map((m) => [m[1]!, m[2]!]);
}

/** Builds the printed columns on the table, then runs the printed statement for every query (binds: text, depth, topK). */
async function runPrinted(printed: string): Promise<Run> {
  await db.transaction(false, async (tx) => {
    await tx.query('ALTER TABLE harness_scratch.docs DROP COLUMN IF EXISTS tsv, DROP COLUMN IF EXISTS tsv2');
    for (const [column, expression] of printedColumns(printed)) {
      await tx.query(`ALTER TABLE harness_scratch.docs ADD COLUMN ${column} tsvector`);
      await tx.query(`UPDATE harness_scratch.docs SET ${column} = ${expression}`);
    }
  });
  const out = new Map<string, Map<string, number>>();
  for (const q of queries) {
    const rows = await db.transaction(true, (tx) => tx.query<{ id: string; score: number }>(printed, [q.text, TOP_K, TOP_K]));
    out.set(q.id, new Map(rows.map((r) => [r.id, Number(r.score)])));
  }
  return out;
}

/** The workbench's fusion of the two arms' runs, as a `fuse` system computes it. */
function workbench(inputs: readonly [ArmId, ArmId], params: Record<string, unknown>): Run {
  const r = resolveFuseParams(fuseParamsSchema.parse(params), inputs);
  const ids = queries.map((q) => q.id);
  const { table, packed } = packAll(ids, runs.get(inputs[0])!, runs.get(inputs[1])!);
  return unpackRun(
    fuse(
      inputsOf(
        packed,
        r.weights.map((weight) => ({ weight })),
      ),
      { ...r.spec, topK: TOP_K },
    ),
    table,
  );
}

const CASES = [
  { name: 'rrf.k20', inputs: ['pg-english', 'pg-simple'], params: { method: 'rrf', rrfK: 20, weights: { 'pg-english': 0.7, 'pg-simple': 1.3 } }, exact: true },
  { name: 'cc.minmax', inputs: ['pg-english', 'pg-simple'], params: { method: 'cc', normalization: 'min-max', alpha: 0.3 }, exact: true },
  { name: 'cc.zscore', inputs: ['pg-simple', 'pg-english'], params: { method: 'cc', normalization: 'z-score' }, exact: false },
  { name: 'cc.dbsf', inputs: ['pg-english', 'pg-rank'], params: { method: 'cc', normalization: 'dbsf', alpha: 0.6 }, exact: false },
] as const;

describe('harness export-sql of two full-text rankings, the printed statement run on PGlite', () => {
  it.each(CASES)(
    '$name: prints what it fuses and how each column is built; run as printed, it ranks as the workbench fuse does',
    async (c) => {
      const r = await exported(c.name, c.inputs, c.params);
      expect(r.code, r.stderr).toBe(0);
      const weights = resolveFuseParams(fuseParamsSchema.parse(c.params), c.inputs).weights;
      const head = r.out.split('\n')[0]!;
      expect(head).toContain(`"weights":${JSON.stringify({ [c.inputs[0]]: weights[0], [c.inputs[1]]: weights[1] })}`);
      expect(head).toMatch(new RegExp(`^-- ${c.name.replace('.', '\\.')}: \\{"method":"${c.params.method}".*\\(two full-text rankings of one table`));
      expect(r.out).toContain('-- binds: $1 query text, $2 entries read per list, $3 topK;');
      // Both arms build the same tsvector only for english + rank (another ranking of the same column).
      const sameColumn = (c.inputs as readonly string[]).includes('pg-rank');
      expect(printedColumns(r.out).map(([name]) => name)).toEqual(sameColumn ? ['tsv'] : ['tsv', 'tsv2']);
      expect(r.out).toMatch(sameColumn ? /FROM \(SELECT id, ts_rank\(.*, tsv, q, 1\)/ : /WHERE tsv2 @@ q/);
      const got = await runPrinted(r.out);
      const want = workbench(c.inputs, c.params);
      let compared = 0;
      let maxDiff = 0;
      for (const q of queries) {
        const [g, w] = [[...(got.get(q.id) ?? [])], [...(want.get(q.id) ?? [])]];
        expect(
          g.map(([d]) => d),
          q.id,
        ).toEqual(w.map(([d]) => d));
        for (const [i, [, score]] of g.entries()) maxDiff = Math.max(maxDiff, Math.abs(score - w[i]![1]));
        compared += g.length;
      }
      expect(compared).toBeGreaterThan(1000);
      expect(maxDiff).toBeLessThan(c.exact ? Number.MIN_VALUE : 1e-12);
    },
    240_000,
  );

  it('an input id with a line break is refused, exit 2 naming its field, printing nothing', async () => {
    const folder = join(dir, 'evil');
    mkdirSync(folder);
    const evil = 'pg\nDROP TABLE docs;';
    const params = fuseParamsSchema.parse({ method: 'rrf' });
    const report = {
      runs: [
        { id: 'pg-english', kind: 'postgres', node: 'retrieve', params: paramsOf('pg-english') },
        { id: evil, kind: 'postgres', node: 'retrieve', params: paramsOf('pg-simple') },
        { id: 'rrf.pair', kind: 'rrf', node: 'fuse', inputs: ['pg-english', evil], params },
      ],
    };
    writeFileSync(join(folder, 'report.json'), JSON.stringify(report));
    const r = await runCaptured(['export-sql', '--report', folder, '--system', 'rrf.pair'], folder);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.stderr).toContain('report.json runs[1].id: the system id "pg\\nDROP TABLE docs;" holds a line break or another control character');
  });
});
