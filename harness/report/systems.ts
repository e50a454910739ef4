import type { Block, Cell } from './blocks.js';
import { annBlocks } from './ann.js';
import { graphBlocks } from './graph.js';
import { textMappingBlocks } from './text-mapping.js';
import { deviationBlocks } from './deviations.js';
import { mdTable } from './md-table.js';
import type { JsonValue } from '../../evalset/types.js';
import { fmtMean } from '../decision/format.js';
import { meanOf, primaryMeasure } from '../decision/select.js';
import type { InputDiagnostics } from '../systems/types.js';
import type { ReportData, ReportRun, StratumInfo } from '../decision/types.js';
import { degenerateEndpoint } from '../decision/warnings.js';

/**
 * What a report says about its systems when there are many (grids, fusions, tuned points): which are best per
 * stratum, how each grid's points compare, how each fusion's inputs reached its top-k, and what tuning picked.
 * Pure functions of report.json; every renderer shows the same selection.
 */

/** How many systems per stratum the "best systems" lead names. */
export const BEST_PER_STRATUM = 5;
/** Above this many runs, per-stratum tables show the headline runs only (every run stays in the CSV files). */
export const FULL_TABLE_MAX = 16;

/** `k1=0.9, b=0.4` from a params or point object; nested values as compact JSON. */
export function fmtParams(p: JsonValue | Readonly<Record<string, JsonValue>> | undefined): string {
  if (p === undefined || p === null || typeof p !== 'object' || Array.isArray(p)) return p === undefined ? '' : JSON.stringify(p);
  return Object.entries(p)
    .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}

/** Runs of `stratum` ranked by mean on `measure`, best first; ties keep run order. */
export function rankedRuns(data: Pick<ReportData, 'runs' | 'summary'>, stratum: string, measure: string): { run: ReportRun; mean: number }[] {
  return data.runs
    .map((run, i) => ({ run, mean: meanOf(data, stratum, run.id, measure) ?? Number.NaN, i }))
    .filter((x) => !Number.isNaN(x.mean))
    .sort((a, b) => b.mean - a.mean || a.i - b.i)
    .map(({ run, mean }) => ({ run, mean }));
}

/** Ids of the grid members (systems expanded from one config entry). */
export function gridMembers(data: Pick<ReportData, 'runs'>): Set<string> {
  return new Set(data.runs.filter((r) => r.group !== undefined && r.node !== 'tune').map((r) => r.id));
}

/**
 * The runs a per-stratum table shows: every run when there are few; else the runs that are not grid members
 * (arms, named fusions, tuned systems), the baseline and gate runs, and the best of each stratum.
 */
export function headlineRuns(data: ReportData): ReportRun[] {
  if (data.runs.length <= FULL_TABLE_MAX) return [...data.runs];
  const keep = new Set<string>([data.baseline]);
  if (data.gateResult) keep.add(data.gateResult.config.candidate).add(data.gateResult.config.baseline);
  const grid = gridMembers(data);
  for (const r of data.runs) if (!grid.has(r.id)) keep.add(r.id);
  const measure = primaryMeasure(data);
  for (const s of data.strata) for (const x of rankedRuns(data, s.id, measure).slice(0, BEST_PER_STRATUM)) keep.add(x.run.id);
  return data.runs.filter((r) => keep.has(r.id));
}

const h2 = (text: string): Block => ({ kind: 'heading', level: 2, text });
const h3 = (text: string): Block => ({ kind: 'heading', level: 3, text });
const para = (text: string, strong = false): Block => ({ kind: 'para', text, ...(strong ? { strong } : {}) });

/** The best few systems of each stratum by mean, when there are several systems or some are computed. */
function bestSystemsBlocks(data: ReportData, measure: string): Block[] {
  const derived = data.runs.some((r) => r.node !== undefined && r.node !== 'retrieve');
  if (data.runs.length <= 2 && !derived) return [];
  return [
    h2(`Best systems per stratum (${measure})`),
    {
      kind: 'table',
      head: ['stratum', 'n', `best ${BEST_PER_STRATUM}, by mean ${measure}`],
      align: ['l', 'r', 'l'],
      rows: data.strata.map((s) => [
        s.id,
        String(s.n),
        rankedRuns(data, s.id, measure)
          .slice(0, BEST_PER_STRATUM)
          .map((x) => `${x.run.id} ${fmtMean(x.mean)}`)
          .join('; '),
      ]),
    },
    para(
      'Ranked by mean only; significance is in the comparisons. A grid point picked by looking at these numbers is an oracle, optimistic by design; the tuned systems pick without the test queries.',
    ),
  ];
}

/** Each grid's points with their mean per stratum, the points tuning picked and the oracle marked. */
function gridBlocks(data: ReportData, measure: string): Block[] {
  const groups = new Map<string, ReportRun[]>();
  for (const r of data.runs) {
    if (r.group === undefined || r.node === 'tune') continue;
    const list = groups.get(r.group) ?? [];
    list.push(r);
    groups.set(r.group, list);
  }
  if (groups.size === 0) return [];
  const tunedByGroup = new Map(data.runs.filter((r) => r.tuning && r.group !== undefined).map((r) => [r.group as string, r] as const));
  const B: Block[] = [h2('Grids')];
  for (const [group, members] of groups) {
    const tuned = tunedByGroup.get(group);
    const picked = new Set(tuned?.tuning?.choices.map((c) => c.member) ?? []);
    const oracle = tuned?.tuning?.oracle.member;
    B.push(h3(`${group}: ${members.length} systems, ${measure} per stratum`));
    B.push({
      kind: 'table',
      head: ['system', 'point', ...data.strata.map((s) => s.id), 'note'],
      align: ['l', 'l', ...data.strata.map(() => 'r' as const), 'l'],
      rows: members.map((r) => [
        r.id,
        fmtParams(r.point),
        ...data.strata.map((s) => fmtMean(meanOf(data, s.id, r.id, measure) ?? Number.NaN)),
        [picked.has(r.id) ? 'picked by tuning' : '', r.id === oracle ? 'oracle (best on test)' : ''].filter(Boolean).join('; '),
      ]),
    });
  }
  return B;
}

/** What one tuned system picked, fold by fold, against the oracle. */
function tunedBlocks(data: ReportData, r: ReportRun, overall: StratumInfo | undefined): Block[] {
  const t = r.tuning!;
  const how =
    t.method === 'split'
      ? `on the ${t.choices[0]?.fold} split`
      : `by ${t.choices.length}-fold cross-validation over the test queries (each query scored by the point picked on the other folds)`;
  const tunedMean = overall ? meanOf(data, overall.id, r.id, t.measure) : undefined;
  return [
    para(
      `${r.id} picks a point of grid ${r.group ?? ''} ${how}, by mean ${t.measure}. On the test queries it scores ${tunedMean === undefined ? 'n/a' : fmtMean(tunedMean)}; the oracle, ${t.oracle.member} (best on the test queries themselves, optimistic), scores ${fmtMean(t.oracle.mean)}.`,
    ),
    {
      kind: 'table',
      head: ['fold', 'picked', `${t.measure} where picked`, 'test queries scored'],
      align: ['l', 'l', 'r', 'r'],
      rows: t.choices.map((c) => [c.fold, c.member, fmtMean(c.trainMean), String(c.queries)]),
    },
  ];
}

function tuningBlocks(data: ReportData): Block[] {
  const tuned = data.runs.filter((r) => r.tuning);
  if (tuned.length === 0) return [];
  const overall = data.strata.find((s) => s.overall) ?? data.strata[0];
  return [h2('Tuning'), ...tuned.flatMap((r) => tunedBlocks(data, r, overall))];
}

/** The structural reach of one input: `yes`, `yes in 29 of 105 queries` (barred where its rivals fill the top), `off`, or NO. */
function reachCell(r: ReportRun, d: InputDiagnostics): Cell {
  if (!d.reachable) return degenerateEndpoint(r, d.input) ? 'off (weight 0: grid endpoint)' : { text: 'NO', strong: true };
  const { queries, barredQueries } = d;
  if (queries === undefined || barredQueries === undefined || barredQueries === 0) return 'yes';
  return `yes in ${queries - barredQueries} of ${queries} queries`;
}

/** How much of each fusion's top-k its inputs contributed, and whether they can reach it at all. */
function fusionBlocks(data: ReportData): Block[] {
  const fused = data.runs.filter((r) => r.diagnostics);
  if (fused.length === 0) return [];
  const cutoff = fused[0]?.diagnostics?.inputs[0]?.cutoff ?? 10;
  const B: Block[] = [
    h2(`Fusion inputs: contribution and reach (top ${cutoff})`),
    para(
      `share: fraction of the fused top-${cutoff} entries (all queries) that the input also ranked; solo: fraction only it ranked; reach: can a document only this input ranks first ever enter the fused top-${cutoff}, given the fusion's parameters (structural), and in what share of queries its top document would have (empirical).`,
    ),
  ];
  const barred = fused.flatMap((r) =>
    (r.diagnostics?.inputs ?? []).filter((d) => !d.reachable && !degenerateEndpoint(r, d.input)).map((d) => ({ run: r.id, d })),
  );
  if (barred.length > 0) {
    B.push(para(`${barred.length} input(s) can never reach the fused top-${cutoff}; their contribution is zero by construction, not by evidence:`, true));
    B.push({ kind: 'list', items: barred.map((b) => `${b.run}: input ${b.d.input}: ${b.d.reason}`) });
  }
  B.push({
    kind: 'table',
    head: ['system', 'input', 'share', 'solo', 'reach (structural)', 'reach (empirical)'],
    align: ['l', 'l', 'r', 'r', 'l', 'r'],
    rows: fused.flatMap((r) =>
      (r.diagnostics?.inputs ?? []).map((d): Cell[] => [r.id, d.input, fmtMean(d.share), fmtMean(d.soloShare), reachCell(r, d), fmtMean(d.empiricalReach)]),
    ),
  });
  return B;
}

/** The systems sections: best per stratum, grids, tuning, fusion inputs' contribution and reach. */
export function systemsBlocks(data: ReportData): Block[] {
  const measure = primaryMeasure(data);
  return [
    ...bestSystemsBlocks(data, measure),
    ...gridBlocks(data, measure),
    ...tuningBlocks(data),
    ...fusionBlocks(data),
    ...textMappingBlocks(data),
    ...deviationBlocks(data),
  ];
}

function fmtMs(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(3);
}

/** The evidence sections: cost per system and the queries where two systems differ most. */
export function evidenceBlocks(data: ReportData): Block[] {
  const B: Block[] = [];
  if (data.costs) {
    const costs = data.costs;
    B.push(h2('Cost'));
    B.push(
      para(
        'Index time and size summed over scopes; per-query latency of searching (retrieve) or fusing (fuse), in milliseconds, as measured when the run was computed (a cached run keeps its timings).',
      ),
    );
    B.push({
      kind: 'table',
      head: ['system', 'documents', 'index ms', 'query ms p50', 'query ms p95', 'index stats'],
      align: ['l', 'r', 'r', 'r', 'r', 'l'],
      rows: headlineRuns(data)
        .filter((r) => costs[r.id])
        .map((r) => {
          const c = costs[r.id]!;
          const stats = Object.entries(c.indexStats).filter(([k]) => k !== 'documents');
          return [
            r.id,
            c.indexStats['documents'] === undefined ? '' : String(c.indexStats['documents']),
            fmtMs(c.indexMs),
            fmtMs(c.queryMsP50),
            fmtMs(c.queryMsP95),
            stats.map(([k, v]) => `${k} ${v}`).join(', '),
          ];
        }),
    });
  }
  if (data.examples && data.examples.queries.length > 0) {
    const ex = data.examples;
    const doc = (d: { docId: string; text?: string; sensitive?: boolean }) =>
      d.text === undefined ? `${d.docId}${d.sensitive ? ' (sensitive: text withheld)' : ''}` : `${d.docId}: ${d.text}`;
    B.push(h2(`Queries where ${ex.system} differs most from ${ex.baseline} (${ex.measure})`));
    B.push({
      kind: 'table',
      head: ['stratum', 'query', ex.baseline, ex.system, `top of ${ex.baseline}`, `top of ${ex.system}`],
      align: ['l', 'l', 'r', 'r', 'l', 'l'],
      rows: ex.queries.map((q) => [
        `${q.stratum} (${q.kind})`,
        `${q.queryId}: ${q.text}`,
        fmtMean(q.baselineValue),
        fmtMean(q.systemValue),
        q.baselineTop.map(doc).join(' / ') || '(nothing retrieved)',
        q.systemTop.map(doc).join(' / ') || '(nothing retrieved)',
      ]),
    });
  }
  B.push(...graphBlocks(data));
  B.push(...annBlocks(data));
  return B;
}

function mdCell(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Markdown lines of blocks. */
export function blocksToMarkdown(blocks: readonly Block[]): string[] {
  const L: string[] = [];
  for (const b of blocks) {
    if (b.kind === 'heading') L.push(`${'#'.repeat(b.level)} ${b.text}`, '');
    else if (b.kind === 'para') L.push(b.strong ? `**${b.text}**` : b.text, '');
    else if (b.kind === 'list') L.push(...b.items.map((i) => `- ${mdCell(i)}`), '');
    else {
      const rows = b.rows.map((r) => r.map((c) => (typeof c === 'string' ? mdCell(c) : `**${mdCell(c.text)}**`)));
      L.push(...mdTable(b.head.map(mdCell), b.align, rows, b.keyColumns), '');
    }
  }
  return L;
}

/** HTML lines of blocks, with `esc` escaping text. */
export function blocksToHtml(blocks: readonly Block[], esc: (s: string) => string): string[] {
  const H: string[] = [];
  for (const b of blocks) {
    if (b.kind === 'heading') H.push(`<h${b.level}>${esc(b.text)}</h${b.level}>`);
    else if (b.kind === 'para') H.push(b.strong ? `<p><strong>${esc(b.text)}</strong></p>` : `<p>${esc(b.text)}</p>`);
    else if (b.kind === 'list') H.push('<ul>', ...b.items.map((i) => `<li>${esc(i)}</li>`), '</ul>');
    else {
      const cls = (i: number) => (b.align[i] === 'r' ? ' class="num"' : '');
      H.push('<table>', `<tr>${b.head.map((h, i) => `<th${cls(i)}>${esc(h)}</th>`).join('')}</tr>`);
      for (const r of b.rows)
        H.push(`<tr>${r.map((c, i) => `<td${cls(i)}>${typeof c === 'string' ? esc(c) : `<strong>${esc(c.text)}</strong>`}</td>`).join('')}</tr>`);
      H.push('</table>');
    }
  }
  return H;
}
