import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chromiumAvailable, inspectReportPage } from './testdata/chromium.js';
import { fixtureInput } from './testdata/fixture.js';
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
});
