import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureInput } from './testdata/fixture.js';
import { writeReport } from './write.js';

const CHROMIUM = process.env['HARNESS_CHROMIUM'] ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) process.stderr.write(`[skip] report.html in headless Chromium: ${CHROMIUM} is absent (apt-get install chromium)\n`);

/** The part of SVGGraphicsElement used in the page (the project compiles without the DOM lib). */
interface Boxed {
  getBBox(): { width: number; height: number };
}

interface PlotInfo {
  cls: string;
  width: number;
  height: number;
  /** Circles, polylines, rects and paths: each must have a non-empty box. */
  drawn: number;
  drawnWithBox: number;
  /** Lines may legitimately have zero length (a zero-width CI), but a plot needs some. */
  linesWithLength: number;
}

describe.skipIf(!available)('report.html in headless Chromium', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('renders every plot with drawn content, logs no error, and saves a screenshot', async () => {
    const { chromium } = await import('playwright-core');
    const dir = await mkdtemp(join(tmpdir(), 'harness-html-'));
    dirs.push(dir);
    await writeReport(dir, fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    const profile = await mkdtemp(join(tmpdir(), 'harness-chromium-profile-'));
    dirs.push(profile);
    // A fresh profile per run: nothing from an earlier run or the user's own browser leaks in.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1200, height: 900 },
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('request', (r) => {
        if (!r.url().startsWith('file:')) problems.push(`external request: ${r.url()}`);
      });
      await page.goto(pathToFileURL(join(dir, 'report.html')).href, { waitUntil: 'load' });
      const plots: PlotInfo[] = await page.$$eval('svg.plot', (svgs) =>
        svgs.map((svg) => {
          const box = svg.getBoundingClientRect();
          const shapes = Array.from(svg.querySelectorAll('circle, polyline, rect, path'));
          const lines = Array.from(svg.querySelectorAll('line'));
          return {
            cls: svg.getAttribute('class') ?? '',
            width: box.width,
            height: box.height,
            drawn: shapes.length,
            drawnWithBox: shapes.filter((s) => {
              const b = (s as unknown as Boxed).getBBox();
              return b.width > 0 && b.height > 0;
            }).length,
            linesWithLength: lines.filter((l) => {
              const b = (l as unknown as Boxed).getBBox();
              return b.width > 0 || b.height > 0;
            }).length,
          };
        }),
      );
      expect(plots.map((p) => p.cls)).toEqual([
        'plot forest',
        'plot forest',
        'plot forest',
        'plot scatter',
        'plot scatter',
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
      const scatterPoints = await page.$$eval('svg.scatter', (svgs) => svgs.map((s) => s.querySelectorAll('circle > title').length));
      expect(scatterPoints).toEqual([24, 24]);
      const shot = join(dir, 'screenshot.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect((await stat(shot)).size).toBeGreaterThan(10_000);
      expect(problems).toEqual([]);
      if (process.env['HARNESS_KEEP_SCREENSHOT']) process.stderr.write(`screenshot: ${shot}\n`);
    } finally {
      await context.close();
    }
  });
});
