import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Debian's Chromium, or the binary HARNESS_CHROMIUM names. */
export const CHROMIUM = process.env['HARNESS_CHROMIUM'] ?? '/usr/bin/chromium';

/** Whether the browser tests can run here; prints why not, so a skip is never silent. */
export function chromiumAvailable(what: string): boolean {
  const ok = existsSync(CHROMIUM);
  if (!ok) process.stderr.write(`[skip] ${what} in headless Chromium: ${CHROMIUM} is absent (apt-get install chromium)\n`);
  return ok;
}

/** The part of SVGGraphicsElement used in the page (the project compiles without the DOM lib). */
interface Boxed {
  getBBox(): { width: number; height: number };
}

export interface PlotInfo {
  cls: string;
  width: number;
  height: number;
  /** Circles, polylines, rects and paths: each must have a non-empty box. */
  drawn: number;
  drawnWithBox: number;
  /** Lines may legitimately have zero length (a zero-width CI), but a plot needs some. */
  linesWithLength: number;
}

export interface PageInspection {
  readonly plots: PlotInfo[];
  /** Query points per scatter plot. */
  readonly scatterPoints: number[];
  /** Console errors and warnings, page errors and any request that left the file system. */
  readonly problems: string[];
}

/**
 * Opens a report page in headless Chromium with a fresh profile, measures every plot, and saves a full-page
 * screenshot to `screenshot`.
 */
export async function inspectReportPage(html: string, screenshot: string): Promise<PageInspection> {
  const { chromium } = await import('playwright-core');
  const profile = await mkdtemp(join(tmpdir(), 'harness-chromium-profile-'));
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
    await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
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
    const scatterPoints = await page.$$eval('svg.scatter', (svgs) => svgs.map((s) => s.querySelectorAll('circle > title').length));
    await page.screenshot({ path: screenshot, fullPage: true });
    return { plots, scatterPoints, problems };
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}
