import type { Document, Qrels, Query, Run } from '../../evalset/types.js';
// The Map-based evaluate(), not the Library's (metrics/public.ts): the runner's Runs are checked where they are made.
import { evaluate } from '../metrics/evaluate.js';
import { measureOf } from '../metrics/measure.js';
import { rankDocIds } from '../metrics/ranking.js';
import type { QueryExample, RecallCurves, ReportCosts } from '../decision/types.js';
import type { SystemOutcome } from '../execution/outcome.js';

/**
 * What a memory engineer decides on beyond the means: recall at every depth, the cost of each system, and the
 * queries where two systems differ most with what each retrieved. Computed by the runner (it has the runs and
 * the texts) into report.json, so the report stays a pure rendering of its data.
 */

/** Cutoffs of the recall curves: the usual depths up to the runs' topK. */
export function curveCutoffs(topK: number): number[] {
  return [1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 1000].filter((k) => k <= topK);
}

/** Mean R@k per run and stratum (and overall), for k in `curveCutoffs(topK)`. */
export function recallCurves(
  qrels: Qrels,
  runs: ReadonlyMap<string, Run>,
  queries: readonly Query[],
  topK: number,
  opts: { readonly relevanceLevel: number; readonly units?: ReadonlyMap<string, string> },
): RecallCurves {
  const cutoffs = curveCutoffs(topK);
  // Built as values (the spelling `R@k` is what evaluate() keys them by), not as text read back.
  const measures = cutoffs.map((k) => measureOf('R', {}, k));
  const strata = [...new Set(queries.map((q) => q.stratum))];
  const groups: [string, readonly Query[]][] = [
    ...strata.map((s): [string, Query[]] => [s, queries.filter((q) => q.stratum === s)]),
    ...(strata.length > 1 ? [['all', queries] as [string, readonly Query[]]] : []),
  ];
  const means: Record<string, Record<string, number[]>> = {};
  for (const [id, run] of runs) {
    const ev = evaluate(qrels, run, measures, {
      queries: queries.map((q) => q.id),
      relevanceLevel: opts.relevanceLevel,
      ...(opts.units ? { units: opts.units } : {}),
    });
    means[id] = Object.fromEntries(
      groups.map(([s, qs]) => [s, cutoffs.map((k) => qs.reduce((sum: number, q: Query) => sum + (ev.perQuery.get(`R@${k}`)?.get(q.id) ?? 0), 0) / qs.length)]),
    );
  }
  return { cutoffs, means };
}

function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i] as number;
}

/** Index size, index time and per-query latency of each system (retrieve: search; fuse: fusion), from the run cache. */
export function costs(outcomes: ReadonlyMap<string, SystemOutcome>): ReportCosts {
  const out: Record<string, ReportCosts[string]> = {};
  for (const [id, o] of outcomes) {
    const lat = [...o.queryMs].sort((a, b) => a - b);
    out[id] = {
      indexMs: o.indexMs,
      searchMs: o.searchMs,
      queryMsP50: quantile(lat, 0.5),
      queryMsP95: quantile(lat, 0.95),
      indexStats: o.indexStats,
    };
  }
  return out;
}

/** Documents shown per side of an example. */
const TOP_DOCS = 3;
/** Largest gains and largest losses shown per stratum. */
const PER_SIDE = 3;

/**
 * Per stratum, the queries where `system` gains most and loses most against `baseline` on `measure`, with the
 * query text and the top documents of each side. A sensitive document is shown by id only, never its text.
 */
export function queryExamples(
  pair: { readonly baseline: string; readonly system: string; readonly measure: string },
  perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>,
  queries: readonly Query[],
  runs: ReadonlyMap<string, Run>,
  documents: readonly Document[],
): QueryExample[] {
  const base = perQuery[pair.baseline]?.[pair.measure];
  const sys = perQuery[pair.system]?.[pair.measure];
  if (!base || !sys) return [];
  const byId = new Map(documents.map((d) => [d.id, d] as const));
  const top = (run: string, qid: string) =>
    rankDocIds(runs.get(run)?.get(qid) ?? new Map())
      .slice(0, TOP_DOCS)
      .map((docId) => {
        const d = byId.get(docId);
        return d && !d.sensitive ? { docId, text: d.text.length > 160 ? `${d.text.slice(0, 157)}...` : d.text } : { docId, sensitive: d?.sensitive === true };
      });
  const out: QueryExample[] = [];
  for (const stratum of [...new Set(queries.map((q) => q.stratum))]) {
    const idx = queries.flatMap((q, i) => (q.stratum === stratum ? [i] : []));
    const delta = (i: number) => (sys[i] as number) - (base[i] as number);
    const ordered = [...idx].sort((a, b) => delta(b) - delta(a) || (queries[a]!.id < queries[b]!.id ? -1 : 1));
    const gains = ordered.filter((i) => delta(i) > 0).slice(0, PER_SIDE);
    const losses = ordered
      .filter((i) => delta(i) < 0)
      .reverse()
      .slice(0, PER_SIDE);
    for (const [kind, list] of [
      ['gain', gains],
      ['loss', losses],
    ] as const) {
      for (const i of list) {
        const q = queries[i]!;
        out.push({
          stratum,
          kind,
          queryId: q.id,
          text: q.text,
          baselineValue: base[i] as number,
          systemValue: sys[i] as number,
          baselineTop: top(pair.baseline, q.id),
          systemTop: top(pair.system, q.id),
        });
      }
    }
  }
  return out;
}
