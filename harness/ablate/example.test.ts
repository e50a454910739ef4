import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { chromiumAvailable, inspectReportPage } from '../report/testdata/chromium.js';
import { PROJECT_ROOT } from '../testing/shared.js';

// The bundled example end to end: `harness ablate --config configs/example.yaml` into a temp folder, then the
// rendered report is pinned by snapshot, opened in a browser, and turned into an ADR.
const work = mkdtempSync(join(tmpdir(), 'harness-example-'));
let reportDir = '';

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(args, { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: PROJECT_ROOT });
  return { code, out };
}

beforeAll(async () => {
  const r = await cli(['ablate', '--config', 'configs/example.yaml', '--verify', '--output', join(work, 'reports'), '--cache', join(work, 'cache')]);
  expect(r.code, r.out).toBe(0);
  expect(r.out).toContain('  OK     bm25             nDCG@10    expected 0.5572 actual 0.5572');
  const [name] = readdirSync(join(work, 'reports'));
  reportDir = join(work, 'reports', name!);
});

describe('the bundled example report', () => {
  it('renders report.md and report.html exactly as pinned', async () => {
    await expect(readFileSync(join(reportDir, 'report.md'), 'utf8')).toMatchFileSnapshot('__snapshots__/example.report.md');
    await expect(readFileSync(join(reportDir, 'report.html'), 'utf8')).toMatchFileSnapshot('__snapshots__/example.report.html');
  });

  it('reports every stratum with its query count', () => {
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    for (const [stratum, n] of [
      ['exact', 36],
      ['paraphrase', 36],
      ['multi-hop', 34],
      ['all', 106],
    ] as const) {
      expect(md).toContain(`| ${stratum} | ${n} |`);
    }
  });

  it('drafts an ADR whose numbers equal the report', async () => {
    const adrDir = join(work, 'adr');
    mkdirSync(adrDir);
    const r = await cli(['adr', '--report', reportDir, '--title', 'Keep BM25 or move to FTS5', '--adr-dir', adrDir, '--date', '2026-11-22']);
    expect(r.code).toBe(0);
    const [file] = readdirSync(adrDir);
    expect(file).toBe('0001-keep-bm25-or-move-to-fts5.md');
    const adr = readFileSync(join(adrDir, file!), 'utf8');
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as {
      comparisons: { stratum: string; measure: string; baseline: string; system: string; baselineMean: number; systemMean: number; delta: number; pAdjusted: number | null }[];
      gateResult: { verdict: string };
    };
    expect(adr).toContain(report.gateResult.verdict);
    const rows = adr
      .slice(adr.indexOf('## Evidence'))
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| stratum') && !l.startsWith('| ---'))
      .map((l) => l.slice(1, -1).split('|').map((c) => c.trim()));
    expect(rows.length).toBeGreaterThan(0);
    // Columns: stratum, n, measure, baseline, system, baseline mean, system mean, delta, ...
    for (const [stratum, , measure, baseline, system, baselineMean, systemMean, delta] of rows) {
      expect([baseline, system]).toEqual(['bm25', 'fts5']);
      const c = report.comparisons.find((x) => x.stratum === stratum && x.measure === measure && x.system === system && x.baseline === baseline);
      expect(c, `${stratum} ${measure}`).toBeDefined();
      expect(Number(baselineMean!.replace(/\*/g, ''))).toBeCloseTo(c!.baselineMean, 4);
      expect(Number(systemMean!.replace(/\*/g, ''))).toBeCloseTo(c!.systemMean, 4);
      expect(Number(delta!.replace(/\*/g, ''))).toBeCloseTo(c!.delta, 4);
    }
  });

  it.skipIf(!chromiumAvailable('the example report.html'))('opens in headless Chromium with every plot drawn and a screenshot saved', async () => {
    const shot = join(reportDir, 'screenshot.png');
    const { plots, problems } = await inspectReportPage(join(reportDir, 'report.html'), shot);
    expect(plots.length).toBeGreaterThan(3);
    for (const p of plots) {
      expect(p.width, p.cls).toBeGreaterThan(100);
      expect(p.drawn, p.cls).toBeGreaterThan(2);
      expect(p.drawnWithBox, p.cls).toBe(p.drawn);
    }
    expect(problems).toEqual([]);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });
});
