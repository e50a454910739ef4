import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli/main.js';
import { memoryLogger } from '../../harness/log.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';
import { tempDir } from '../../harness/testing/temp.js';
import { linkGloveInto } from '../dense/testing.js';
import { closeEmbedded } from './connection.js';
import { SHARED_WORK_DIR } from './testing.js';

// configs/example-postgres.yaml end to end through the CLI, in the embedded database (no server, offline):
// Postgres full text, pgvector exact and an HNSW ef_search grid over GloVe, the SQL RRF and the workbench's.
const work = tempDir('harness-example-postgres');
const cache = join(work, 'cache');

/** configs/example-postgres.yaml's efSearch grid, in config order. */
const GRID = [5, 10, 40, 200];

interface Manifest {
  systems: { id: string; indexStats: Record<string, number> }[];
}

let code = -1;
let out = '';
let dir = '';

beforeAll(async () => {
  await linkGloveInto(cache);
  // The embedded database's snapshot of a fresh data folder, shared with the other postgres tests.
  mkdirSync(join(SHARED_WORK_DIR, 'pglite'), { recursive: true });
  mkdirSync(join(cache, 'work'), { recursive: true });
  symlinkSync(join(SHARED_WORK_DIR, 'pglite'), join(cache, 'work', 'pglite'), 'dir');
  const reports = mkdtempSync(join(work, 'reports-'));
  const args = ['ablate', '--config', 'configs/example-postgres.yaml', '--verify', '--jobs', '1', '--output', reports, '--cache', cache];
  code = await runCli(args, { out: (t) => void (out += t), log: memoryLogger(), env: { HF_HUB_OFFLINE: '1' }, cwd: PROJECT_ROOT });
  dir = join(reports, readdirSync(reports)[0] ?? '');
}, 600_000);

afterAll(() => closeEmbedded());

/** A TREC run file's lines without the run tag (the last column). */
function untagged(id: string): string[] {
  return readFileSync(join(dir, 'runs', `${id}.trec`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(' ').slice(0, 5).join(' '));
}

describe('configs/example-postgres.yaml', () => {
  it('runs offline with no server and reproduces its pinned numbers (pg-exact as example-dense glove)', () => {
    expect(code, out).toBe(0);
    expect(out).not.toContain('FAIL');
    expect(out).toMatch(/OK\s+pg-exact\s+nDCG@10/);
  });

  it('causes no serious warning of its own (fusion weights, permutations, mappings, ids)', () => {
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { warnings: { code: string; severity: string }[] };
    const own = new Set(['input-unreachable', 'permutations-too-few', 'empty-results', 'unknown-ids']);
    expect(report.warnings.filter((w) => w.severity === 'serious' && own.has(w.code))).toEqual([]);
  });

  it("the SQL RRF (pg-hybrid) and the workbench's RRF of the same two runs are identical, score for score", () => {
    const sql = untagged('pg-hybrid');
    expect(sql.length).toBeGreaterThan(1000);
    expect(sql).toEqual(untagged('rrf.pg-fts+pg-exact'));
  });

  it('harness export-sql prints the workbench RRF as the statement pg-hybrid runs (rrf, k 60, weights 1)', async () => {
    let sql = '';
    const c = await runCli(['export-sql', '--report', dir, '--system', 'rrf.pg-fts+pg-exact'], {
      out: (t) => void (sql += t),
      log: memoryLogger(),
      env: {},
      cwd: PROJECT_ROOT,
    });
    expect(c, sql).toBe(0);
    expect(sql).toMatch(/^-- rrf\.pg-fts\+pg-exact: \{"method":"rrf","rrfK":60,.*"weights":\{"fts":1,"vector":1\}/);
    expect(sql).toContain('COALESCE(1::float8 / (60::float8 + f.r), 0) + COALESCE(1::float8 / (60::float8 + v.r), 0) AS score');
  });

  it('the ef_search grid: recall@10 against exact search, in each point index stats, from below 0.9 to near 1.0', () => {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
    const recall = GRID.map((ef) => {
      const s = manifest.systems.find((x) => x.id === `pg-hnsw.efSearch=${ef}`)?.indexStats ?? {};
      return (s['annRecallFound@10'] ?? Number.NaN) / (s['annRecallExact@10'] ?? Number.NaN);
    });
    // Each point builds its own graph and pgvector draws HNSW levels at random, so a point's recall varies from
    // build to build. Over 20 builds (docs/adr/0036-postgres-arms.md): efSearch 5 0.617-0.634 (fewer rows than
    // the LIMIT), 10 0.941-0.971, 200 0.999-1.000. The bounds below leave that spread a wide margin.
    expect(recall[0], String(recall)).toBeLessThan(0.8);
    expect(recall[1], String(recall)).toBeGreaterThanOrEqual(0.9);
    expect(recall[3], String(recall)).toBeGreaterThan(0.98);
    expect(recall[3]).toBeLessThanOrEqual(1);
    const report = readFileSync(join(dir, 'report.md'), 'utf8');
    expect(report).toMatch(/\| pg-hnsw\.efSearch=200 \|.*annRecallFound@10 \d+, annRecallExact@10 1000/);
  });

  it('the report body: an Approximate indexes row per grid point, recall@10 in config order; only efSearch 5 a serious warning', () => {
    const report = readFileSync(join(dir, 'report.md'), 'utf8');
    const body = report.slice(report.indexOf('## Approximate indexes'));
    expect(body.length).toBeLessThan(report.length);
    const rows = GRID.map((ef) =>
      new RegExp(
        `\\| pg-hnsw\\.efSearch=${ef} \\| pgvector hnsw \\(vector, cosine\\) \\| m 4, efConstruction 16, efSearch ${ef} \\| (\\*\\*)?([0-9.]+)(\\*\\*)? \\| [0-9.]+ \\| 100 \\|`,
      ).exec(body),
    );
    expect(
      rows.every((m) => m !== null),
      body.slice(0, 2000),
    ).toBe(true);
    // Bold marks a recall below the 0.9 line: the first point only.
    expect(rows.map((m) => m?.[1] === '**')).toEqual([true, false, false, false]);
    const json = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as {
      warnings: { code: string; severity: string; subject: string; message: string }[];
    };
    const ann = json.warnings.filter((w) => w.code === 'ann-recall');
    expect(ann.map((w) => w.severity)).toEqual(['serious']);
    expect(ann[0]?.subject).toContain('pg-hnsw.efSearch=5');
    expect(ann[0]?.subject).not.toMatch(/efSearch=(10|40|200)\b/);
    expect(ann[0]?.message).toContain('raise efSearch, m, efConstruction');
  });
});
