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

/** A client box (the project compiles without the DOM lib). */
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
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

/** A page of headless Chromium with a fresh profile, problems (console errors, page errors, requests off the file system) collected. */
async function withPage<T>(
  html: string,
  viewport: { width: number; height: number },
  fn: (page: import('playwright-core').Page, problems: string[]) => Promise<T>,
): Promise<T> {
  const { chromium } = await import('playwright-core');
  const profile = await mkdtemp(join(tmpdir(), 'harness-chromium-profile-'));
  // A fresh profile per run: nothing from an earlier run or the user's own browser leaks in.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport,
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
    return await fn(page, problems);
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

/**
 * Opens a report page in headless Chromium with a fresh profile, measures every plot, and saves a full-page
 * screenshot to `screenshot`.
 */
export async function inspectReportPage(html: string, screenshot: string): Promise<PageInspection> {
  return withPage(html, { width: 1200, height: 900 }, async (page, problems) => {
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
  });
}

/** What a reader sees of a report at 1280 x 900, and what filtering its exploratory table by one system leaves. */
export interface FirstScreen {
  /** Bottom edges, in px from the top of the page, of the verdict and of the gate's forest plot. */
  readonly verdictBottom: number | null;
  readonly gateForestBottom: number | null;
  readonly viewportHeight: number;
  readonly scrollWidth: number;
  /** Boxes that scroll sideways inside the page (the exploratory table's, code blocks, tables): `tag.class`. */
  readonly overflowing: string[];
  /** SVG text elements whose box leaves their SVG's box: `class: text`. */
  readonly clipped: string[];
  readonly textsChecked: number;
  /** Rows of the exploratory table shown after choosing `system` in its system filter, and their systems. */
  readonly filtered: { readonly shown: number; readonly total: number; readonly sides: string[] };
  readonly problems: string[];
}

/**
 * Opens a report page at 1280 x 900, measures the first screen, every SVG text against its SVG, the page's
 * width, saves a screenshot of the first screen to `screenshot`, then filters the exploratory table by `system`.
 */
export async function inspectFirstScreen(html: string, screenshot: string, system: string): Promise<FirstScreen> {
  return withPage(html, { width: 1280, height: 900 }, async (page, problems) => {
    // The page has just loaded, unscrolled: client boxes are page coordinates.
    const bottom = (sel: string) => page.$$eval(sel, (es) => (es[0] ? es[0].getBoundingClientRect().bottom : null));
    const texts = await page.$$eval('svg', (svgs) =>
      svgs.flatMap((svg) => {
        const b = svg.getBoundingClientRect();
        return (Array.from(svg.querySelectorAll('text')) as unknown as { getBoundingClientRect(): Box; textContent: string | null }[]).map((t) => {
          const r = t.getBoundingClientRect();
          const out = r.left < b.left - 0.5 || r.right > b.right + 0.5 || r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5;
          return out ? `${svg.getAttribute('class')}: ${t.textContent}` : '';
        });
      }),
    );
    const measured = {
      verdictBottom: await bottom('.verdict'),
      gateForestBottom: await bottom('svg.gate-forest'),
      viewportHeight: page.viewportSize()?.height ?? 0,
      scrollWidth: await page.$eval('html', (h) => h.scrollWidth),
      overflowing: await page.$$eval('.explore-wrap, table, pre', (es) =>
        es.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
      ),
      clipped: texts.filter((t) => t !== ''),
      textsChecked: texts.length,
    };
    await page.screenshot({ path: screenshot });
    await page.selectOption('#f-system', system);
    const filtered = await page.$$eval('#explore tbody tr', (rows) => {
      const shown = rows.filter((r) => !(r as unknown as { hidden: boolean }).hidden);
      return {
        shown: shown.length,
        total: rows.length,
        sides: [...new Set(shown.map((r) => `${r.getAttribute('data-system')} vs ${r.getAttribute('data-baseline')}`))],
      };
    });
    return { ...measured, filtered, problems };
  });
}

/** How wide a report page is at a 1280 px viewport, and which of its boxes scroll sideways inside it. */
export async function inspectWidth(html: string): Promise<{ scrollWidth: number; overflowing: string[]; problems: string[] }> {
  return withPage(html, { width: 1280, height: 900 }, async (page, problems) => ({
    scrollWidth: await page.$eval('html', (h) => h.scrollWidth),
    overflowing: await page.$$eval('.explore-wrap, table, pre', (es) =>
      es.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
    ),
    problems,
  }));
}
