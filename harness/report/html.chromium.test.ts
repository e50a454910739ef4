import { copyFile, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { chromiumAvailable, inspectFirstScreen, inspectReportPage, inspectWidth } from './testdata/chromium.js';
import { fixtureInput } from './testdata/fixture.js';
import { manySystemsInput } from './testdata/many-systems.js';
import { writeReport } from './write.js';
import { tempDir } from '../testing/temp.js';

describe.skipIf(!chromiumAvailable('report.html'))('report.html in headless Chromium', () => {
  it('renders every plot with drawn content, logs no error, and saves a screenshot', async () => {
    const dir = tempDir('harness-html');
    await writeReport(dir, fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    const shot = join(dir, 'screenshot.png');
    const { plots, scatterPoints, problems } = await inspectReportPage(join(dir, 'report.html'), shot);
    // Recall curves: one per stratum (exact, paraphrase) and the pooled row.
    expect(plots.map((p) => p.cls)).toEqual([
      'plot forest gate-forest',
      'plot forest',
      'plot forest',
      'plot forest',
      'plot scatter',
      'plot scatter',
      'plot recall',
      'plot recall',
      'plot recall',
    ]);
    for (const p of plots) {
      expect(p.width, p.cls).toBeGreaterThan(100);
      expect(p.height, p.cls).toBeGreaterThan(100);
      expect(p.drawn, p.cls).toBeGreaterThan(2);
      expect(p.drawnWithBox, p.cls).toBe(p.drawn);
      expect(p.linesWithLength, p.cls).toBeGreaterThan(0);
    }
    // 24 query points per scatter plot, each with a non-empty box.
    expect(scatterPoints).toEqual([24, 24]);
    expect((await stat(shot)).size).toBeGreaterThan(10_000);
    expect(problems).toEqual([]);
    if (process.env['HARNESS_KEEP_SCREENSHOT']) process.stderr.write(`screenshot: ${shot}\n`);
  });

  it('a 60-system report at 1280 px: no horizontal scroll of the page, no table scrolling sideways', async () => {
    const dir = tempDir('harness-html-many');
    await writeReport(dir, manySystemsInput());
    const page = await inspectWidth(join(dir, 'report.html'));
    expect(page.scrollWidth).toBeLessThanOrEqual(1280);
    expect(page.overflowing).toEqual([]);
    expect(page.problems).toEqual([]);
  }, 60_000);

  // The study users run first, as shipped (41 systems, 4 strata, 3 grids), read the way a reviewer does.
  it('rrf-vs-cc at 1280x900: the decision in the first screen, no label clipped, no horizontal scroll, a table that filters', async () => {
    const work = tempDir('harness-html-rrf');
    const code = await runCli(['ablate', '--config', 'configs/rrf-vs-cc.yaml', '--output', join(work, 'reports'), '--cache', join(work, 'cache')], {
      out: () => {},
      log: memoryLogger(),
      env: {},
      cwd: PROJECT_ROOT,
    });
    expect(code).toBe(0);
    const [name] = await readdir(join(work, 'reports'));
    const dir = join(work, 'reports', name as string);
    await mkdir(join(dir, 'assets'));
    const shot = join(dir, 'assets', 'first-screen.png');
    const system = 'cc-minmax.alpha=0.5';
    const page = await inspectFirstScreen(join(dir, 'report.html'), shot, system);
    expect(page.verdictBottom).not.toBeNull();
    expect(page.gateForestBottom).not.toBeNull();
    expect(page.verdictBottom as number).toBeLessThanOrEqual(page.viewportHeight);
    expect(page.gateForestBottom as number).toBeLessThanOrEqual(page.viewportHeight);
    // Hundreds of labels, ticks and values across forest, grid, scatter and recall plots; none leaves its plot.
    expect(page.textsChecked).toBeGreaterThan(500);
    expect(page.clipped).toEqual([]);
    expect(page.scrollWidth).toBeLessThanOrEqual(1280);
    expect(page.overflowing).toEqual([]);
    // Its rows against the baseline, in 4 strata on 3 measures, and nothing else.
    expect(page.filtered.sides).toEqual([`${system} vs bm25`]);
    expect(page.filtered.shown).toBe(12);
    expect(page.filtered.total).toBeGreaterThan(500);
    expect(page.problems).toEqual([]);
    expect((await stat(shot)).size).toBeGreaterThan(10_000);
    if (process.env['HARNESS_KEEP_SCREENSHOT']) process.stderr.write(`first screen: ${shot}\n`);
    // The README shows this screen; HARNESS_README_SCREENSHOT=1 refreshes its copy.
    if (process.env['HARNESS_README_SCREENSHOT']) await copyFile(shot, join(PROJECT_ROOT, 'docs', 'assets', 'report-first-screen.png'));
  }, 120_000);
});
