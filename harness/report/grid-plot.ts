import type { JsonValue } from '../../evalset/types.js';
import { studentTQuantile } from '../stats/special.js';
import { stratumIndices } from '../decision/build.js';
import { fmtMean } from '../decision/format.js';
import { primaryMeasure } from '../decision/select.js';
import { color, esc, niceTicks, textWidth } from './svg.js';
import { fmtParams } from './systems.js';
import type { ReportData, ReportRun } from '../decision/types.js';

/**
 * Grids as pictures (issue 28): for each grid group, its swept parameter against the primary measure, one
 * panel per stratum: a line with a band for one numeric or categorical parameter, a heat map for two, a ranked
 * dot plot for input subsets (or three parameters and more). Picks of tuning and the oracle are marked, the
 * baseline and the tuned system drawn as lines. Hand-made SVG like svg.ts: byte-identical for the same data.
 */

/** One grid point's mean and band in one stratum. */
interface Cell {
  readonly mean: number;
  readonly lo: number;
  readonly hi: number;
}

/** A grid group as the plots read it. */
export interface GridModel {
  readonly group: string;
  readonly members: readonly ReportRun[];
  /** Point keys that vary across members, in the config's order. */
  readonly keys: readonly string[];
  readonly shape: 'line' | 'heat' | 'ranked';
  /** Member id -> how many folds (or the split) picked it. */
  readonly picks: ReadonlyMap<string, number>;
  readonly oracle?: string;
  readonly tuned?: string;
  readonly measure: string;
  readonly baseline: string;
  readonly strata: readonly string[];
  /** member -> stratum -> cell. */
  readonly cells: ReadonlyMap<string, ReadonlyMap<string, Cell>>;
  /** stratum -> mean of the baseline and of the tuned system. */
  readonly baselineMean: ReadonlyMap<string, number>;
  readonly tunedMean: ReadonlyMap<string, number>;
}

export const GRID_CAPTION =
  'One panel per stratum. Each grid point is drawn at its mean on the primary measure, with a band of ± the half-width of a 95% paired t-interval of its difference to the baseline (descriptive and uncorrected: where a band leaves the dashed baseline line, that point differs from the baseline at 5% before any correction). ▲ a point tuning picked (on a fold or the dev split), ◆ the oracle (best on the test queries, optimistic by design), dotted line: the tuned system.';

function pointOf(r: ReportRun): Readonly<Record<string, JsonValue>> {
  return r.point ?? {};
}

/** The grid groups of a report with every number their plots draw. */
export function gridModels(data: ReportData): GridModel[] {
  const groups = new Map<string, ReportRun[]>();
  for (const r of data.runs) {
    if (r.group === undefined || r.node === 'tune') continue;
    groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  }
  const measure = primaryMeasure(data);
  const baseline = data.gateResult?.config.baseline ?? data.baseline;
  const strata = stratumIndices(data.queries);
  const base = data.perQuery[baseline]?.[measure] ?? [];
  const meanOver = (v: readonly number[], idx: readonly number[]) => idx.reduce((a, i) => a + (v[i] as number), 0) / idx.length;
  return [...groups].map(([group, members]) => {
    const keys = Object.keys(pointOf(members[0] as ReportRun)).filter((k) => new Set(members.map((m) => JSON.stringify(pointOf(m)[k]))).size > 1);
    const tuned = data.runs.find((r) => r.node === 'tune' && r.group === group);
    const picks = new Map<string, number>();
    for (const c of tuned?.tuning?.choices ?? []) picks.set(c.member, (picks.get(c.member) ?? 0) + 1);
    const cells = new Map(members.map((m) => [m.id, new Map(strata.map((s) => [s.id, bandOf(data.perQuery[m.id]?.[measure] ?? [], base, s.indices)]))]));
    const tunedVals = tuned ? data.perQuery[tuned.id]?.[measure] : undefined;
    return {
      group,
      members,
      keys,
      shape: keys.includes('inputs') || keys.length > 2 ? 'ranked' : keys.length === 2 ? 'heat' : 'line',
      picks,
      ...(tuned?.tuning ? { oracle: tuned.tuning.oracle.member, tuned: tuned.id } : {}),
      measure,
      baseline,
      strata: strata.map((s) => s.id),
      cells,
      baselineMean: new Map(strata.map((s) => [s.id, meanOver(base, s.indices)])),
      tunedMean: new Map(tunedVals ? strata.map((s) => [s.id, meanOver(tunedVals, s.indices)]) : []),
    };
  });
}

/** Mean of `v` over `idx`, with ± the 95% paired t half-width of `v - base` (0 with fewer than 2 queries). */
function bandOf(v: readonly number[], base: readonly number[], idx: readonly number[]): Cell {
  const n = idx.length;
  const mean = idx.reduce((a, i) => a + (v[i] as number), 0) / n;
  if (n < 2 || base.length !== v.length) return { mean, lo: mean, hi: mean };
  const d = idx.map((i) => (v[i] as number) - (base[i] as number));
  const dm = d.reduce((a, x) => a + x, 0) / n;
  const sd = Math.sqrt(d.reduce((a, x) => a + (x - dm) ** 2, 0) / (n - 1));
  const half = (studentTQuantile(0.975, n - 1) * sd) / Math.sqrt(n);
  return { mean, lo: mean - half, hi: mean + half };
}

const FONT = 'font-family="system-ui, sans-serif" font-size="11"';

function n2(x: number): string {
  const s = x.toFixed(2);
  return s === '-0.00' ? '0.00' : s;
}

function tick(v: number): string {
  return Number(v.toPrecision(6)).toString();
}

function valueText(v: JsonValue | undefined): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/** A member's marker: ▲ picked, ◆ oracle, as an SVG path centred on (x, y). */
function marker(kind: 'pick' | 'oracle', x: number, y: number, fill: string, title: string): string {
  const d =
    kind === 'pick'
      ? `M${n2(x)} ${n2(y - 6)} L${n2(x + 5.5)} ${n2(y + 4)} L${n2(x - 5.5)} ${n2(y + 4)} Z`
      : `M${n2(x)} ${n2(y - 6)} L${n2(x + 6)} ${n2(y)} L${n2(x)} ${n2(y + 6)} L${n2(x - 6)} ${n2(y)} Z`;
  return `<path d="${d}" fill="${fill}" stroke="#222" stroke-width="1"><title>${esc(title)}</title></path>`;
}

function markTitle(g: GridModel, id: string, stratum: string): string {
  const c = g.cells.get(id)?.get(stratum);
  const picked = g.picks.get(id);
  const what = [picked ? `picked by tuning ${picked}x` : '', id === g.oracle ? 'oracle (best on test)' : ''].filter(Boolean).join(', ');
  return `${id}, ${stratum}: ${g.measure} ${c ? fmtMean(c.mean) : ''}${c ? `, band [${fmtMean(c.lo)}, ${fmtMean(c.hi)}]` : ''}${what ? ` (${what})` : ''}`;
}

/** Legend line under a grid's panels. */
function legend(g: GridModel, y: number, x0: number): string[] {
  const out = [
    `<line x1="${x0}" y1="${y - 4}" x2="${x0 + 22}" y2="${y - 4}" stroke="#555" stroke-dasharray="4 3"/>`,
    `<text x="${x0 + 28}" y="${y}" ${FONT}>${esc(`baseline ${g.baseline}`)}</text>`,
  ];
  let x = x0 + 40 + textWidth(`baseline ${g.baseline}`);
  if (g.tuned) {
    out.push(`<line x1="${n2(x)}" y1="${y - 4}" x2="${n2(x + 22)}" y2="${y - 4}" stroke="#222" stroke-dasharray="1 3" stroke-width="2"/>`);
    out.push(`<text x="${n2(x + 28)}" y="${y}" ${FONT}>${esc(g.tuned)}</text>`);
    x += 40 + textWidth(g.tuned);
    out.push(marker('pick', x + 6, y - 4, '#fff', 'picked by tuning'), `<text x="${n2(x + 16)}" y="${y}" ${FONT}>picked</text>`);
    x += 24 + textWidth('picked');
    out.push(marker('oracle', x + 6, y - 4, '#fff', 'oracle'), `<text x="${n2(x + 16)}" y="${y}" ${FONT}>oracle</text>`);
  }
  return out;
}

/** Every grid group's plot, in report order. */
export function gridPlots(data: ReportData): string[] {
  return gridModels(data).map((g) => (g.shape === 'line' ? linePlot(g) : g.shape === 'heat' ? heatMap(g) : rankedPlot(g)));
}

/** x positions of a parameter's values: numeric when every value is a number, else evenly spaced in order. */
function xAxis(values: readonly JsonValue[]): { numeric: boolean; order: string[]; pos: (v: JsonValue | undefined) => number } {
  const numeric = values.every((v) => typeof v === 'number');
  const order = numeric ? [...new Set(values as number[])].sort((a, b) => a - b).map(String) : [...new Set(values.map(valueText))];
  if (numeric) {
    const nums = order.map(Number);
    const lo = nums[0] as number;
    const hi = nums[nums.length - 1] as number;
    return { numeric, order, pos: (v) => (hi > lo ? ((v as number) - lo) / (hi - lo) : 0.5) };
  }
  return { numeric, order, pos: (v) => (order.length > 1 ? order.indexOf(valueText(v)) / (order.length - 1) : 0.5) };
}

/** Panels laid out in rows of at most four. */
function panelLayout(count: number, w: number, h: number): { cols: number; at: (i: number) => { x: number; y: number }; width: number; height: number } {
  const cols = Math.min(4, count);
  const rows = Math.ceil(count / cols);
  return { cols, at: (i) => ({ x: 8 + (i % cols) * w, y: 28 + Math.floor(i / cols) * h }), width: 16 + cols * w, height: 28 + rows * h + 24 };
}

function svgOpen(cls: string, width: number, height: number, title: string): string[] {
  return [
    `<svg class="plot grid ${cls}" xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(width)}" height="${Math.ceil(height)}" viewBox="0 0 ${Math.ceil(width)} ${Math.ceil(height)}" role="img" aria-label="${esc(title)}">`,
    `<title>${esc(title)}</title>`,
    `<text x="8" y="16" ${FONT} font-weight="bold">${esc(title)}</text>`,
  ];
}

/** The swept parameter (x) against the measure (y) per stratum: band, line, baseline, tuned, picks, oracle. */
function linePlot(g: GridModel): string {
  const key = g.keys[0] ?? Object.keys(pointOf(g.members[0] as ReportRun))[0] ?? 'point';
  const ax = xAxis(g.members.map((m) => pointOf(m)[key] ?? null));
  const pw = 240;
  const ph = 190;
  const lay = panelLayout(g.strata.length, pw, ph);
  const title = `${g.group}: ${key} against ${g.measure}, ${g.members.length} points`;
  const width = Math.max(lay.width, textWidth(title) + 16);
  const out = svgOpen('line', width, lay.height, title);
  g.strata.forEach((s, i) => out.push(...linePanel(g, s, key, ax, lay.at(i), pw, ph, color(i))));
  out.push(...legend(g, lay.height - 8, 8), '</svg>');
  return out.join('\n');
}

/** One stratum's panel of a line plot, at `at`, `pw` x `ph` px. */
function linePanel(
  g: GridModel,
  s: string,
  key: string,
  ax: ReturnType<typeof xAxis>,
  at: { x: number; y: number },
  pw: number,
  ph: number,
  col: string,
): string[] {
  const m = { l: 46, r: 12, t: 18, b: 38 };
  const cells = g.members.map((r) => ({ r, c: g.cells.get(r.id)?.get(s) as Cell, x: ax.pos(pointOf(r)[key] ?? null) }));
  const base = g.baselineMean.get(s) as number;
  const tuned = g.tunedMean.get(s);
  const lo = Math.min(base, tuned ?? base, ...cells.map((c) => c.c.lo));
  const hi = Math.max(base, tuned ?? base, ...cells.map((c) => c.c.hi));
  const pad = (hi - lo || 0.01) * 0.08;
  const [y0, y1] = [lo - pad, hi + pad];
  const X = (f: number) => at.x + m.l + f * (pw - m.l - m.r);
  const Y = (v: number) => at.y + ph - m.b - ((v - y0) / (y1 - y0)) * (ph - m.t - m.b);
  const out = [
    `<text x="${n2(at.x + m.l)}" y="${n2(at.y + 12)}" ${FONT} font-weight="bold">${esc(s)}</text>`,
    `<rect x="${n2(X(0))}" y="${n2(Y(y1))}" width="${n2(X(1) - X(0))}" height="${n2(Y(y0) - Y(y1))}" fill="none" stroke="#999"/>`,
  ];
  for (const t of niceTicks(y0, y1, 4)) out.push(`<text x="${n2(X(0) - 4)}" y="${n2(Y(t) + 4)}" ${FONT} text-anchor="end">${esc(tick(t))}</text>`);
  out.push(
    ...xTicks(ax, X, Y(y0) + 13, pw - m.l - m.r),
    `<text x="${n2((X(0) + X(1)) / 2)}" y="${n2(Y(y0) + 28)}" ${FONT} text-anchor="middle">${esc(key)}</text>`,
  );
  const pts = cells.sort((a, b) => a.x - b.x);
  const band = [...pts.map((p) => `${n2(X(p.x))},${n2(Y(p.c.hi))}`), ...[...pts].reverse().map((p) => `${n2(X(p.x))},${n2(Y(p.c.lo))}`)].join(' ');
  out.push(
    `<polygon points="${band}" fill="${col}" fill-opacity="0.18" stroke="none"/>`,
    `<line x1="${n2(X(0))}" y1="${n2(Y(base))}" x2="${n2(X(1))}" y2="${n2(Y(base))}" stroke="#555" stroke-dasharray="4 3"/>`,
    ...(tuned === undefined
      ? []
      : [`<line x1="${n2(X(0))}" y1="${n2(Y(tuned))}" x2="${n2(X(1))}" y2="${n2(Y(tuned))}" stroke="#222" stroke-dasharray="1 3" stroke-width="2"/>`]),
    `<polyline fill="none" stroke="${col}" stroke-width="2" points="${pts.map((p) => `${n2(X(p.x))},${n2(Y(p.c.mean))}`).join(' ')}"><title>${esc(`${g.group}, ${s}: ${g.measure} by ${key}`)}</title></polyline>`,
  );
  // Dots only while they stay apart; a 200-point sweep reads as its line.
  if (pts.length <= 40)
    for (const p of pts)
      out.push(`<circle cx="${n2(X(p.x))}" cy="${n2(Y(p.c.mean))}" r="2.5" fill="${col}"><title>${esc(markTitle(g, p.r.id, s))}</title></circle>`);
  for (const p of pts) {
    if (g.picks.has(p.r.id)) out.push(marker('pick', X(p.x), Y(p.c.mean) - 9, '#fff', markTitle(g, p.r.id, s)));
    if (p.r.id === g.oracle) out.push(marker('oracle', X(p.x), Y(p.c.mean), col, markTitle(g, p.r.id, s)));
  }
  return out;
}

/** Tick labels of a parameter axis: round values when numeric, else every value (thinned to fit). */
function xTicks(ax: ReturnType<typeof xAxis>, X: (f: number) => number, y: number, width: number): string[] {
  const label = (f: number, text: string) => `<text x="${n2(X(f))}" y="${n2(y)}" ${FONT} text-anchor="middle">${esc(text)}</text>`;
  if (ax.numeric) {
    const nums = ax.order.map(Number);
    const lo = nums[0] as number;
    const hi = nums[nums.length - 1] as number;
    if (!(hi > lo)) return [label(0.5, tick(lo))];
    return niceTicks(lo, hi, 4).map((t) => label((t - lo) / (hi - lo), tick(t)));
  }
  const widest = Math.max(...ax.order.map((o) => textWidth(o))) + 6;
  const every = Math.max(1, Math.ceil((widest * ax.order.length) / width));
  return ax.order.flatMap((o, i) => (i % every === 0 ? [label(ax.pos(o), o)] : []));
}

/** Colour of a mean between lo and hi: light to dark blue. */
function shade(v: number, lo: number, hi: number): string {
  const f = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  const mix = (a: number, b: number) => Math.round(a + (b - a) * f);
  return `rgb(${mix(239, 8)},${mix(246, 69)},${mix(255, 148)})`;
}

/** Two parameters: one heat map per stratum, picks outlined, the oracle marked, each mean printed where it fits. */
function heatMap(g: GridModel): string {
  const [kx, ky] = g.keys as [string, string];
  const ax = xAxis(g.members.map((m) => pointOf(m)[kx] ?? null));
  const ay = xAxis(g.members.map((m) => pointOf(m)[ky] ?? null));
  const yLabelW = Math.max(...ay.order.map((o) => textWidth(o))) + 10;
  const cw = Math.max(16, Math.min(46, Math.floor(200 / ax.order.length)));
  const ch = Math.max(10, Math.min(22, Math.floor(160 / ay.order.length)));
  const pw = Math.max(yLabelW + 24 + cw * ax.order.length + 12, textWidth(kx) + yLabelW + 40);
  const ph = 40 + ch * ay.order.length + 40;
  const lay = panelLayout(g.strata.length, pw, ph);
  const title = `${g.group}: ${kx} x ${ky}, ${g.measure}, ${g.members.length} points`;
  const out = svgOpen('heat', Math.max(lay.width, textWidth(title) + 16), lay.height, title);
  g.strata.forEach((s, i) => {
    const at = lay.at(i);
    const cells = g.members.map((r) => ({ r, c: g.cells.get(r.id)?.get(s) as Cell }));
    const lo = Math.min(...cells.map((c) => c.c.mean));
    const hi = Math.max(...cells.map((c) => c.c.mean));
    const x0 = at.x + yLabelW + 24;
    const y0 = at.y + 34;
    out.push(`<text x="${n2(at.x)}" y="${n2(at.y + 12)}" ${FONT} font-weight="bold">${esc(`${s} (${fmtMean(lo)} to ${fmtMean(hi)})`)}</text>`);
    ay.order.forEach((o, j) => out.push(`<text x="${n2(x0 - 4)}" y="${n2(y0 + j * ch + ch / 2 + 4)}" ${FONT} text-anchor="end">${esc(o)}</text>`));
    ax.order.forEach((o, j) => {
      if (j % Math.max(1, Math.ceil((textWidth(o) + 4) / cw)) === 0)
        out.push(`<text x="${n2(x0 + j * cw + cw / 2)}" y="${n2(y0 + ay.order.length * ch + 13)}" ${FONT} text-anchor="middle">${esc(o)}</text>`);
    });
    out.push(`<text x="${n2(x0 + (ax.order.length * cw) / 2)}" y="${n2(y0 + ay.order.length * ch + 28)}" ${FONT} text-anchor="middle">${esc(kx)}</text>`);
    out.push(`<text x="${n2(at.x)}" y="${n2(y0 - 4)}" ${FONT}>${esc(ky)}</text>`);
    for (const { r, c } of cells)
      out.push(
        ...heatCell(
          g,
          r,
          c,
          s,
          x0 + ax.order.indexOf(valueText(pointOf(r)[kx] ?? null)) * cw,
          y0 + ay.order.indexOf(valueText(pointOf(r)[ky] ?? null)) * ch,
          cw,
          ch,
          shade(c.mean, lo, hi),
        ),
      );
  });
  out.push(...legend(g, lay.height - 8, 8), '</svg>');
  return out.join('\n');
}

function heatCell(g: GridModel, r: ReportRun, c: Cell, s: string, x: number, y: number, cw: number, ch: number, fill: string): string[] {
  const picked = g.picks.has(r.id);
  const out = [
    `<rect x="${n2(x)}" y="${n2(y)}" width="${cw}" height="${ch}" fill="${fill}" stroke="${picked ? '#222' : '#fff'}" stroke-width="${picked ? 2 : 1}"><title>${esc(markTitle(g, r.id, s))}</title></rect>`,
  ];
  const dark = fill.startsWith('rgb(') && Number(fill.slice(4).split(',')[0]) < 120;
  if (cw >= 38 && ch >= 14)
    out.push(
      `<text x="${n2(x + cw / 2)}" y="${n2(y + ch / 2 + 4)}" font-family="system-ui, sans-serif" font-size="9" text-anchor="middle" fill="${dark ? '#fff' : '#222'}">${fmtMean(c.mean).slice(1)}</text>`,
    );
  if (r.id === g.oracle) out.push(marker('oracle', x + cw - 6, y + 6, '#d1495b', markTitle(g, r.id, s)));
  return out;
}

/** Input subsets (or three parameters and more): every point ranked by its pooled mean, a dot and band per stratum. */
function rankedPlot(g: GridModel): string {
  const pooled = g.strata[g.strata.length - 1] as string;
  const rows = [...g.members].sort((a, b) => (g.cells.get(b.id)?.get(pooled)?.mean ?? 0) - (g.cells.get(a.id)?.get(pooled)?.mean ?? 0));
  const label = (r: ReportRun) => {
    const what = [g.picks.has(r.id) ? `picked ${g.picks.get(r.id)}x` : '', r.id === g.oracle ? 'oracle' : ''].filter(Boolean).join(', ');
    return `${fmtParams(pointOf(r))}${what ? ` (${what})` : ''}`;
  };
  const lw = Math.ceil(Math.max(...rows.map((r) => textWidth(label(r)))) + 14);
  const pw = 190;
  const rowH = 16;
  const top = 44;
  const height = top + rows.length * rowH + 50;
  const title = `${g.group}: ${g.members.length} points ranked by ${g.measure} in ${pooled}`;
  const out = svgOpen('ranked', Math.max(lw + g.strata.length * pw + 16, textWidth(title) + 16), height, title);
  rows.forEach((r, i) => out.push(`<text x="${n2(lw - 6)}" y="${n2(top + i * rowH + rowH / 2 + 4)}" ${FONT} text-anchor="end">${esc(label(r))}</text>`));
  g.strata.forEach((s, k) => out.push(...rankedPanel(g, s, rows, lw + k * pw, top, pw, rowH, color(k))));
  out.push(...legend(g, height - 8, 8), '</svg>');
  return out.join('\n');
}

function rankedPanel(g: GridModel, s: string, rows: readonly ReportRun[], x0: number, top: number, pw: number, rowH: number, col: string): string[] {
  const cells = rows.map((r) => g.cells.get(r.id)?.get(s) as Cell);
  const base = g.baselineMean.get(s) as number;
  const tuned = g.tunedMean.get(s);
  const lo = Math.min(base, tuned ?? base, ...cells.map((c) => c.lo));
  const hi = Math.max(base, tuned ?? base, ...cells.map((c) => c.hi));
  const pad = (hi - lo || 0.01) * 0.06;
  const X = (v: number) => x0 + 10 + ((v - (lo - pad)) / (hi - lo + 2 * pad)) * (pw - 24);
  const bottom = top + rows.length * rowH;
  const out = [
    `<text x="${n2(x0 + 10)}" y="${n2(top - 22)}" ${FONT} font-weight="bold">${esc(s)}</text>`,
    `<rect x="${n2(x0 + 10)}" y="${n2(top - 4)}" width="${pw - 24}" height="${n2(bottom - top + 8)}" fill="none" stroke="#ccc"/>`,
    `<line x1="${n2(X(base))}" y1="${n2(top - 4)}" x2="${n2(X(base))}" y2="${n2(bottom + 4)}" stroke="#555" stroke-dasharray="4 3"/>`,
    ...(tuned === undefined
      ? []
      : [`<line x1="${n2(X(tuned))}" y1="${n2(top - 4)}" x2="${n2(X(tuned))}" y2="${n2(bottom + 4)}" stroke="#222" stroke-dasharray="1 3" stroke-width="2"/>`]),
  ];
  for (const t of niceTicks(lo - pad, hi + pad, 3))
    out.push(`<text x="${n2(X(t))}" y="${n2(bottom + 18)}" ${FONT} text-anchor="middle">${esc(tick(t))}</text>`);
  rows.forEach((r, i) => {
    const c = cells[i] as Cell;
    const y = top + i * rowH + rowH / 2;
    out.push(`<line x1="${n2(X(c.lo))}" y1="${n2(y)}" x2="${n2(X(c.hi))}" y2="${n2(y)}" stroke="${col}" stroke-width="2" stroke-opacity="0.45"/>`);
    if (r.id === g.oracle) out.push(marker('oracle', X(c.mean), y, col, markTitle(g, r.id, s)));
    else if (g.picks.has(r.id)) out.push(marker('pick', X(c.mean), y, col, markTitle(g, r.id, s)));
    else out.push(`<circle cx="${n2(X(c.mean))}" cy="${n2(y)}" r="3.5" fill="${col}"><title>${esc(markTitle(g, r.id, s))}</title></circle>`);
  });
  return out;
}
