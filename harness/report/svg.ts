import type { ReportedMeasure } from '../compare/measures.js';
import { confirmatory, levelNote } from './decision.js';
import { fmtCI, fmtCompCI, fmtDelta, fmtLevel, fmtMean } from '../decision/format.js';
import { headlineRuns } from './systems.js';
import type { Comparison, ReportData } from '../decision/types.js';

/**
 * Hand-made SVG plots: no library, no script, fixed sizes and two-decimal coordinates, so the same data gives
 * byte-identical markup and the HTML page stays self-contained.
 */

const PALETTE = ['#1b6ca8', '#d1495b', '#2e8b57', '#edae49', '#7b4fa0', '#00798c', '#8c564b', '#e377c2'];
const FONT = 'font-family="system-ui, sans-serif" font-size="11"';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function n2(x: number): string {
  const s = x.toFixed(2);
  return s === '-0.00' ? '0.00' : s;
}

export function color(i: number): string {
  return PALETTE[i % PALETTE.length] as string;
}

/** About five round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart). */
export function niceTicks(lo: number, hi: number, target = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / target;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow) as number;
  const out: number[] = [];
  // Integer multiples of the step, rounded to 12 significant digits, so ticks read 0.6 and not 0.6000000000000001.
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) out.push(k === 0 ? 0 : Number((k * step).toPrecision(12)));
  return out;
}

function tickLabel(v: number): string {
  return Number(v.toPrecision(6)).toString();
}

/**
 * Upper bound of the width of `s` in px at `size` px in the plots' sans-serif (DejaVu Sans metrics, the widest
 * common fallback, plus 5%): layouts size themselves from it, so no label is clipped whatever font renders it.
 */
export function textWidth(s: string, size = 11): number {
  let em = 0;
  for (const ch of s) {
    if (/[mwMW@%]/.test(ch)) em += 1.0;
    else if (/[+=<>~#&A-Z]/.test(ch)) em += 0.84;
    else if (/[0-9a-z$?_^*"]/.test(ch)) em += 0.64;
    else if (/[-.,:;'|!()[\]{} /\\`]/.test(ch)) em += 0.42;
    else em += 1.0;
  }
  return em * size * 1.05;
}

/** One row of a forest plot: its label and the comparison it draws. */
export interface ForestRow {
  readonly label: string;
  readonly c: Comparison;
  readonly color: string;
}

/** Rows under an optional group title (a stratum). */
export interface ForestGroup {
  readonly title?: string;
  readonly rows: readonly ForestRow[];
}

export interface ForestSpec {
  readonly cls: string;
  readonly title: string;
  readonly groups: readonly ForestGroup[];
  /** Level named on a row only where its interval's differs from this one (see levelNote). */
  readonly reference: number | undefined;
}

/** The value text right of a row: delta, interval, and its level where it is not the reference. */
function forestValue(c: Comparison, reference: number | undefined): string {
  const both = c.ci[0] === null && c.ci[1] === null;
  const ci = both ? `CI not computable at ${fmtLevel(c.ciLevel)}` : `${fmtCI(c.ci)}${levelNote(c, reference)}`;
  return `${fmtDelta(c.delta)} ${ci}`;
}

/**
 * Forest plot: one row per comparison, in groups, the point at the mean difference and a bar over its interval
 * (at the level of the comparison's corrected decision, so a bar clear of zero is exactly a filled, significant
 * point); an unbounded end is dashed to the plot's edge. Margins are sized from the labels, so none is clipped;
 * a level is printed where it differs from the reference. A dashed line marks zero.
 */
export function forestSvg(spec: ForestSpec): string {
  const lines: ({ kind: 'title'; text: string } | ({ kind: 'row' } & ForestRow))[] = spec.groups.flatMap((g) => [
    ...(g.title === undefined ? [] : [{ kind: 'title' as const, text: g.title }]),
    ...g.rows.map((r) => ({ kind: 'row' as const, ...r })),
  ]);
  const rows = lines.flatMap((l) => (l.kind === 'row' ? [l.c] : []));
  const left = Math.ceil(Math.max(60, ...lines.map((l) => textWidth(l.kind === 'row' ? l.label : l.text, 11) + (l.kind === 'row' ? 16 : 8))));
  const right = Math.ceil(Math.max(80, ...lines.flatMap((l) => (l.kind === 'row' ? [textWidth(forestValue(l.c, spec.reference)) + 16] : []))));
  const plotW = 300;
  const width = Math.max(left + plotW + right, Math.ceil(textWidth(spec.title, 11) + 16));
  const top = 28;
  const rowH = 22;
  const height = top + lines.length * rowH + 36;
  const [lo, hi] = forestRange(rows);
  const x = (v: number) => left + ((v - lo) / (hi - lo)) * plotW;
  const out: string[] = [
    `<svg class="${spec.cls}" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(spec.title)}">`,
    `<title>${esc(spec.title)}</title>`,
    `<text x="8" y="16" ${FONT} font-weight="bold">${esc(spec.title)}</text>`,
  ];
  const axisY = top + lines.length * rowH + 4;
  for (const t of niceTicks(lo, hi)) {
    out.push(
      `<line x1="${n2(x(t))}" y1="${top - 4}" x2="${n2(x(t))}" y2="${axisY}" stroke="#e4e4e4"/>`,
      `<text x="${n2(x(t))}" y="${axisY + 14}" ${FONT} text-anchor="middle">${esc(tickLabel(t))}</text>`,
    );
  }
  out.push(`<line x1="${n2(x(0))}" y1="${top - 4}" x2="${n2(x(0))}" y2="${axisY}" stroke="#555" stroke-dasharray="4 3"/>`);
  out.push(`<line x1="${left}" y1="${axisY}" x2="${left + plotW}" y2="${axisY}" stroke="#555"/>`);
  lines.forEach((l, i) => {
    const y = top + i * rowH + rowH / 2;
    if (l.kind === 'title') {
      out.push(`<text x="8" y="${n2(y + 4)}" ${FONT} font-weight="bold">${esc(l.text)}</text>`);
      return;
    }
    const c = l.c;
    const x0 = c.ci[0] === null ? left : x(c.ci[0]);
    const x1 = c.ci[1] === null ? left + plotW : x(c.ci[1]);
    out.push(
      `<text x="${left - 8}" y="${n2(y + 4)}" ${FONT} text-anchor="end">${esc(l.label)}</text>`,
      `<line x1="${n2(x0)}" y1="${n2(y)}" x2="${n2(x1)}" y2="${n2(y)}" stroke="${l.color}" stroke-width="2"${c.ci[0] === null || c.ci[1] === null ? ' stroke-dasharray="3 3"' : ''}/>`,
      `<circle cx="${n2(x(c.delta))}" cy="${n2(y)}" r="4.5" stroke="${l.color}" stroke-width="2" fill="${c.significant ? l.color : '#fff'}"><title>${esc(forestTooltip(c))}</title></circle>`,
      `<text x="${left + plotW + 8}" y="${n2(y + 4)}" ${FONT}>${esc(forestValue(c, spec.reference))}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

/** The delta axis: zero, every delta and every finite interval end, padded 5%. */
function forestRange(rows: readonly Comparison[]): [number, number] {
  let lo = Math.min(0, ...rows.map((c) => Math.min(c.delta, c.ci[0] ?? c.delta)));
  let hi = Math.max(0, ...rows.map((c) => Math.max(c.delta, c.ci[1] ?? c.delta)));
  if (hi - lo < 1e-9) {
    lo -= 0.01;
    hi += 0.01;
  }
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

/**
 * The gate's forest plot: its confirmatory comparisons only, one row per stratum, every row's level named
 * (they differ under Holm). Empty without a gate.
 */
export function gateForest(data: ReportData): string {
  const g = data.gateResult?.config;
  const rows = confirmatory(data);
  if (!g || rows.length === 0) return '';
  return forestSvg({
    cls: 'plot forest gate-forest',
    title: `${g.measure}: ${g.candidate} - ${g.baseline}, the gate's confirmatory comparisons (CI at each one's corrected level)`,
    groups: [{ rows: rows.map((c) => ({ label: `${c.stratum} (n=${c.n})`, c, color: color(0) })) }],
    reference: undefined,
  });
}

/**
 * Forest plot of the deltas on one measure for the headline systems (every system when there are few), grouped
 * by stratum; the gate's confirmatory rows are marked `[gate]`, the rest are exploratory.
 */
export function forestPlot(data: ReportData, measure: string, reference: number | undefined): string {
  const shown = new Set(headlineRuns(data).map((r) => r.id));
  const groups = data.strata.map((s) => ({
    title: `${s.id} (n=${s.n})`,
    rows: data.comparisons
      .filter((c) => c.stratum === s.id && c.measure === measure && shown.has(c.system) && shown.has(c.baseline))
      .map((c) => ({
        label: `${c.baseline === data.baseline ? c.system : `${c.system} vs ${c.baseline}`}${c.role === 'confirmatory' ? ' [gate]' : ''}`,
        c,
        color: color(data.runs.findIndex((r) => r.id === c.system)),
      })),
  }));
  return forestSvg({
    cls: 'plot forest',
    title: `${measure}: delta (system - ${data.baseline}), CI at the corrected level; exploratory unless [gate]`,
    groups: groups.filter((g) => g.rows.length > 0),
    reference,
  });
}

function forestTooltip(c: Comparison): string {
  return `${c.system} vs ${c.baseline}, ${c.measure}, ${c.stratum} (${c.role === 'confirmatory' ? 'gate' : 'exploratory'}): delta ${fmtDelta(c.delta)}, ${fmtLevel(c.ciLevel)} CI ${fmtCompCI(c)}${c.significant ? ', significant' : ''}`;
}

/**
 * Per-query scatter of one system against its baseline on one measure: a point per query (colour = stratum),
 * the diagonal y = x; points above it are queries the system wins.
 */
export function scatterPlot(data: ReportData, measure: string, baseline: string, system: string): string {
  // Square plot area; the canvas widens for a long title, the y label shrinks its font to fit the side.
  const size = 340;
  const m = 44;
  const canvas = Math.ceil(Math.max(size, textWidth(`${measure}: ${system} vs ${baseline}`) + m + 8, textWidth(baseline) + 16));
  const xs = data.perQuery[baseline]?.[measure] ?? [];
  const ys = data.perQuery[system]?.[measure] ?? [];
  const maxV = Math.max(1, ...xs, ...ys);
  const minV = Math.min(0, ...xs, ...ys);
  const plot = size - 2 * m;
  const sx = (v: number) => m + ((v - minV) / (maxV - minV)) * plot;
  const sy = (v: number) => size - m - ((v - minV) / (maxV - minV)) * plot;
  const strata = data.strata.filter((s) => !s.overall).map((s) => s.id);
  const out: string[] = [];
  const legendH = 16 * strata.length;
  const height = size + legendH;
  out.push(
    `<svg class="plot scatter" xmlns="http://www.w3.org/2000/svg" width="${canvas}" height="${height}" viewBox="0 0 ${canvas} ${height}" role="img" aria-label="${esc(`Per-query ${measure}: ${system} against ${baseline}`)}">`,
    `<title>${esc(`Per-query ${measure}: ${system} (y) against ${baseline} (x)`)}</title>`,
    `<text x="${m}" y="16" ${FONT} font-weight="bold">${esc(`${measure}: ${system} vs ${baseline}`)}</text>`,
    `<rect x="${m}" y="${m}" width="${plot}" height="${plot}" fill="none" stroke="#555"/>`,
    `<line x1="${n2(sx(minV))}" y1="${n2(sy(minV))}" x2="${n2(sx(maxV))}" y2="${n2(sy(maxV))}" stroke="#999" stroke-dasharray="4 3"/>`,
  );
  for (const t of niceTicks(minV, maxV, 4)) {
    out.push(
      `<text x="${n2(sx(t))}" y="${size - m + 14}" ${FONT} text-anchor="middle">${esc(tickLabel(t))}</text>`,
      `<text x="${m - 6}" y="${n2(sy(t) + 4)}" ${FONT} text-anchor="end">${esc(tickLabel(t))}</text>`,
    );
  }
  out.push(
    `<text x="${size / 2}" y="${size - 8}" ${FONT} text-anchor="middle">${esc(baseline)}</text>`,
    `<text x="12" y="${size / 2}" font-family="system-ui, sans-serif" font-size="${n2(Math.min(11, (11 * (size - 8)) / textWidth(system)))}" text-anchor="middle" transform="rotate(-90 12 ${size / 2})">${esc(system)}</text>`,
  );
  data.queries.forEach((q, i) => {
    const col = color(strata.indexOf(q.stratum));
    const xv = xs[i] as number;
    const yv = ys[i] as number;
    out.push(
      `<circle cx="${n2(sx(xv))}" cy="${n2(sy(yv))}" r="3" fill="${col}" fill-opacity="0.6"><title>${esc(`${q.id} (${q.stratum}): ${fmtMean(xv)} -> ${fmtMean(yv)}`)}</title></circle>`,
    );
  });
  strata.forEach((s, i) => {
    const y = size + 12 + i * 16 - 8;
    out.push(`<circle cx="${m + 5}" cy="${y - 4}" r="4" fill="${color(i)}"/>`, `<text x="${m + 14}" y="${y}" ${FONT}>${esc(s)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

/** A point of a recall curve: the spelling of an `R@k` measure and its cutoff. */
export interface RecallAt {
  readonly measure: string;
  readonly cutoff: number;
}

/** The `R@k` measures of the report (no parameters), sorted by cutoff; a recall curve needs at least two. */
export function recallMeasures(measures: readonly ReportedMeasure[]): RecallAt[] {
  return measures
    .filter((m) => m.measure.name === 'R' && Object.keys(m.measure.params).length === 0)
    .map((m) => ({ measure: m.spelling, cutoff: m.measure.cutoff as number }))
    .sort((a, b) => a.cutoff - b.cutoff);
}

/**
 * Mean recall against the cutoff k for every run, over the queries of `stratum`; the k axis is logarithmic
 * when the cutoffs span a factor of ten or more.
 */
export function recallCurves(data: ReportData, stratum: string, recall: readonly RecallAt[]): string {
  // The runner's curves (every usual depth up to topK) when present, else the report's own R@k measures.
  const curves = data.curves && data.curves.cutoffs.length >= 2 ? data.curves : undefined;
  const ks = curves ? curves.cutoffs.map((cutoff, i) => ({ measure: `R@${cutoff}`, cutoff, i })) : recall.map((k, i) => ({ ...k, i }));
  const meanAt = (run: string, k: { measure: string; i: number }) =>
    curves
      ? (curves.means[run]?.[stratum]?.[k.i] ?? 0)
      : (data.summary.find((s) => s.stratum === stratum && s.run === run && s.measure === k.measure)?.mean ?? 0);
  const runs = headlineRuns(data);
  // Wide enough for the longest legend label, tall enough for one legend line per run.
  const m = { l: 50, r: Math.ceil(Math.max(130, ...runs.map((r) => textWidth(r.id) + 44))), t: 28, b: 40 };
  const width = 390 + m.r;
  const height = Math.max(300, 70 + runs.length * 16);
  const kMin = (ks[0] as { cutoff: number }).cutoff;
  const kMax = (ks[ks.length - 1] as { cutoff: number }).cutoff;
  const log = kMax / kMin >= 10;
  const tx = (k: number) => (log ? Math.log10(k) : k);
  const sx = (k: number) => m.l + ((tx(k) - tx(kMin)) / (tx(kMax) - tx(kMin) || 1)) * (width - m.l - m.r);
  const sy = (v: number) => height - m.b - v * (height - m.t - m.b);
  const out: string[] = [];
  out.push(
    `<svg class="plot recall" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(`Recall at k, ${stratum}`)}">`,
    `<title>${esc(`Mean recall at each cutoff k, stratum ${stratum}`)}</title>`,
    `<text x="${m.l}" y="16" ${FONT} font-weight="bold">${esc(`R@k, ${stratum}${log ? ' (log k)' : ''}`)}</text>`,
    `<rect x="${m.l}" y="${m.t}" width="${width - m.l - m.r}" height="${height - m.t - m.b}" fill="none" stroke="#555"/>`,
  );
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(
      `<line x1="${m.l}" y1="${n2(sy(t))}" x2="${width - m.r}" y2="${n2(sy(t))}" stroke="#e4e4e4"/>`,
      `<text x="${m.l - 6}" y="${n2(sy(t) + 4)}" ${FONT} text-anchor="end">${t}</text>`,
    );
  }
  for (const k of ks) out.push(`<text x="${n2(sx(k.cutoff))}" y="${height - m.b + 14}" ${FONT} text-anchor="middle">${k.cutoff}</text>`);
  out.push(`<text x="${(m.l + width - m.r) / 2}" y="${height - 6}" ${FONT} text-anchor="middle">k</text>`);
  runs.forEach((r, i) => {
    const pts = ks.map((k) => {
      const v = meanAt(r.id, k);
      return { x: sx(k.cutoff), y: sy(v), k: k.cutoff, v };
    });
    out.push(`<polyline fill="none" stroke="${color(i)}" stroke-width="2" points="${pts.map((p) => `${n2(p.x)},${n2(p.y)}`).join(' ')}"/>`);
    for (const p of pts) {
      out.push(`<circle cx="${n2(p.x)}" cy="${n2(p.y)}" r="3" fill="${color(i)}"><title>${esc(`${r.id} R@${p.k} = ${fmtMean(p.v)}`)}</title></circle>`);
    }
    const ly = m.t + 10 + i * 16;
    out.push(
      `<line x1="${width - m.r + 10}" y1="${ly - 4}" x2="${width - m.r + 28}" y2="${ly - 4}" stroke="${color(i)}" stroke-width="2"/>`,
      `<text x="${width - m.r + 34}" y="${ly}" ${FONT}>${esc(r.id)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}
