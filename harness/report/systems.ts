import type { JsonValue } from '../../evalset/types.js';
import { fmtMean } from './format.js';
import { meanOf, primaryMeasure } from './select.js';
import type { ReportData, ReportRun } from './types.js';

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

/** Markdown lines of the systems sections: best per stratum, grids, fusion diagnostics, tuning. */
export function systemsMarkdown(data: ReportData, table: (head: readonly string[], align: readonly ('l' | 'r')[], rows: readonly (readonly string[])[]) => string[], cell: (s: string) => string): string[] {
  const L: string[] = [];
  const measure = primaryMeasure(data);
  const derived = data.runs.some((r) => r.node !== undefined && r.node !== 'retrieve');
  if (data.runs.length > 2 || derived) {
    L.push(`## Best systems per stratum (${measure})`, '');
    const rows = data.strata.map((s) => [
      cell(s.id),
      String(s.n),
      rankedRuns(data, s.id, measure)
        .slice(0, BEST_PER_STRATUM)
        .map((x) => `${cell(x.run.id)} ${fmtMean(x.mean)}`)
        .join('; '),
    ]);
    L.push(...table(['stratum', 'n', `best ${BEST_PER_STRATUM}, by mean ${measure}`], ['l', 'r', 'l'], rows), '');
    L.push('Ranked by mean only; significance is in the comparisons below. A grid point picked by looking at these numbers is an oracle, optimistic by design; the tuned systems pick without the test queries.', '');
  }

  const groups = new Map<string, ReportRun[]>();
  for (const r of data.runs) {
    if (r.group === undefined || r.node === 'tune') continue;
    const list = groups.get(r.group) ?? [];
    list.push(r);
    groups.set(r.group, list);
  }
  const tunedByGroup = new Map(data.runs.filter((r) => r.tuning && r.group !== undefined).map((r) => [r.group as string, r] as const));
  if (groups.size > 0) {
    L.push('## Grids', '');
    for (const [group, members] of groups) {
      const tuned = tunedByGroup.get(group);
      const picked = new Set(tuned?.tuning?.choices.map((c) => c.member) ?? []);
      const oracle = tuned?.tuning?.oracle.member;
      L.push(`### ${group}: ${members.length} systems, ${measure} per stratum`, '');
      L.push(
        ...table(
          ['system', 'point', ...data.strata.map((s) => s.id), 'note'],
          ['l', 'l', ...data.strata.map(() => 'r' as const), 'l'],
          members.map((r) => [
            cell(r.id),
            cell(fmtParams(r.point)),
            ...data.strata.map((s) => fmtMean(meanOf(data, s.id, r.id, measure) ?? Number.NaN)),
            [picked.has(r.id) ? 'picked by tuning' : '', r.id === oracle ? 'oracle (best on test)' : ''].filter(Boolean).join('; '),
          ]),
        ),
        '',
      );
    }
  }

  const tuned = data.runs.filter((r) => r.tuning);
  if (tuned.length > 0) {
    L.push('## Tuning', '');
    for (const r of tuned) {
      const t = r.tuning!;
      const how = t.method === 'split' ? `on the \`${t.choices[0]?.fold}\` split` : `by ${t.choices.length}-fold cross-validation over the test queries (each query scored by the point picked on the other folds)`;
      const overall = data.strata.find((s) => s.overall) ?? data.strata[0];
      const tunedMean = overall ? meanOf(data, overall.id, r.id, t.measure) : undefined;
      L.push(
        `**${cell(r.id)}** picks a point of grid \`${cell(r.group ?? '')}\` ${how}, by mean ${t.measure}. On the test queries it scores ${tunedMean === undefined ? 'n/a' : fmtMean(tunedMean)}; the oracle, \`${cell(t.oracle.member)}\` (best on the test queries themselves, optimistic), scores ${fmtMean(t.oracle.mean)}.`,
        '',
      );
      L.push(
        ...table(
          ['fold', 'picked', `${t.measure} where picked`, 'test queries scored'],
          ['l', 'l', 'r', 'r'],
          t.choices.map((c) => [cell(c.fold), cell(c.member), fmtMean(c.trainMean), String(c.queries)]),
        ),
        '',
      );
    }
  }

  const fused = data.runs.filter((r) => r.diagnostics);
  if (fused.length > 0) {
    const cutoff = fused[0]?.diagnostics?.inputs[0]?.cutoff ?? 10;
    L.push(`## Fusion inputs: contribution and reach (top ${cutoff})`, '');
    L.push(
      `share: fraction of the fused top-${cutoff} entries (all queries) that the input also ranked; solo: fraction only it ranked; reach: can a document only this input ranks first ever enter the fused top-${cutoff}, given the fusion's parameters (structural), and in what share of queries its top document would have (empirical).`,
      '',
    );
    const barred = fused.flatMap((r) => (r.diagnostics?.inputs ?? []).filter((d) => !d.reachable).map((d) => ({ run: r.id, d })));
    if (barred.length > 0) {
      L.push(`**${barred.length} input(s) can never reach the fused top-${cutoff}; their contribution is zero by construction, not by evidence:**`, '');
      L.push(...barred.map((b) => `- \`${cell(b.run)}\`: input \`${cell(b.d.input)}\`: ${cell(b.d.reason)}`), '');
    }
    L.push(
      ...table(
        ['system', 'input', 'share', 'solo', 'reach (structural)', 'reach (empirical)'],
        ['l', 'l', 'r', 'r', 'l', 'r'],
        fused.flatMap((r) =>
          (r.diagnostics?.inputs ?? []).map((d) => [
            cell(r.id),
            cell(d.input),
            fmtMean(d.share),
            fmtMean(d.soloShare),
            d.reachable ? 'yes' : '**NO**',
            fmtMean(d.empiricalReach),
          ]),
        ),
      ),
      '',
    );
  }
  return L;
}

function fmtMs(x: number): string {
  return x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(3);
}

/** Markdown lines of the evidence sections: cost per system and the queries that differ most. */
export function evidenceMarkdown(data: ReportData, table: (head: readonly string[], align: readonly ('l' | 'r')[], rows: readonly (readonly string[])[]) => string[], cell: (s: string) => string): string[] {
  const L: string[] = [];
  if (data.costs) {
    const costs = data.costs;
    L.push('## Cost', '');
    L.push('Index time and size per scope summed over scopes; per-query latency of searching (retrieve) or fusing (fuse), milliseconds, as measured when the run was computed (a cached run keeps its timings).', '');
    L.push(
      ...table(
        ['system', 'documents', 'index ms', 'query ms p50', 'query ms p95', 'index stats'],
        ['l', 'r', 'r', 'r', 'r', 'l'],
        headlineRuns(data)
          .filter((r) => costs[r.id])
          .map((r) => {
            const c = costs[r.id]!;
            const stats = Object.entries(c.indexStats).filter(([k]) => k !== 'documents');
            return [cell(r.id), c.indexStats['documents'] === undefined ? '' : String(c.indexStats['documents']), fmtMs(c.indexMs), fmtMs(c.queryMsP50), fmtMs(c.queryMsP95), cell(stats.map(([k, v]) => `${k} ${v}`).join(', '))];
          }),
      ),
      '',
    );
  }
  if (data.examples && data.examples.queries.length > 0) {
    const ex = data.examples;
    const doc = (d: { docId: string; text?: string; sensitive?: boolean }) => (d.text === undefined ? `${d.docId}${d.sensitive ? ' (sensitive: text withheld)' : ''}` : `${d.docId}: ${d.text}`);
    L.push(`## Queries where ${cell(ex.system)} differs most from ${cell(ex.baseline)} (${ex.measure})`, '');
    for (const q of ex.queries) {
      L.push(
        `- **${q.kind}** in ${cell(q.stratum)}, \`${cell(q.queryId)}\` "${cell(q.text)}": ${cell(ex.baseline)} ${fmtMean(q.baselineValue)} -> ${cell(ex.system)} ${fmtMean(q.systemValue)}`,
        `  - ${cell(ex.baseline)}: ${q.baselineTop.map((d) => cell(doc(d))).join(' / ') || '(nothing retrieved)'}`,
        `  - ${cell(ex.system)}: ${q.systemTop.map((d) => cell(doc(d))).join(' / ') || '(nothing retrieved)'}`,
      );
    }
    L.push('');
  }
  return L;
}
