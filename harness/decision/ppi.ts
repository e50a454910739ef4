import type { Comparison } from '../compare/types.js';
import { MIN_PPI_LABELS, type PpiSample, ppiMean, stratifiedPpiMean } from '../stats/ppi.js';
import type { ReportCore } from './select.js';
import { OVERALL } from './types.js';
import type { HumanLabelsInput, PpiEstimate, PpiRow } from './evidence-types.js';

type Core = Pick<ReportCore, 'comparisons' | 'families' | 'queries' | 'perQuery' | 'compare' | 'strata'> & { readonly humanLabels?: HumanLabelsInput };

/** Per-query differences `system − baseline` on `measure`, over every query of the report. */
function deltas(perQuery: Core['perQuery'], c: Pick<Comparison, 'system' | 'baseline' | 'measure'>): number[] {
  const s = perQuery[c.system]?.[c.measure] ?? [];
  const b = perQuery[c.baseline]?.[c.measure] ?? [];
  return s.map((x, i) => x - (b[i] as number));
}

/**
 * The alpha of a comparison's PPI interval: its family's alpha divided by the family's size (Bonferroni). The
 * plain tests are Holm-stepped on p-values; an interval has no p to step, and alpha/m is what Holm's first step
 * uses, so the gate's PPI decision is at least as strict as the plain one would be at the same evidence.
 */
function alphaOf(data: Core, c: Comparison): number {
  const f = data.families.find((x) => x.id === c.family);
  return f === undefined || f.correction === 'none' ? data.compare.alpha : data.compare.alpha / Math.max(1, f.size);
}

/** The PPI sample of one stratum: the human deltas on its labelled queries, the judge's on them and on the rest. */
function sampleOf(indices: readonly number[], data: Core, judge: readonly number[], human: readonly number[] | undefined): PpiSample {
  const at = new Map((data.humanLabels?.queries ?? []).map((q, k) => [q, k] as const));
  const s = { human: [] as number[], judgeOnLabelled: [] as number[], judgeOnUnlabelled: [] as number[] };
  for (const i of indices) {
    const k = at.get(data.queries[i]?.id as string);
    if (k === undefined || human === undefined) s.judgeOnUnlabelled.push(judge[i] as number);
    else {
      s.human.push(human[k] as number);
      s.judgeOnLabelled.push(judge[i] as number);
    }
  }
  return s;
}

/**
 * Why a stratum's sample gives no PPI interval, or undefined when it does. Below MIN_PPI_LABELS labelled queries
 * the interval's coverage is not shown (docs/adr/0038, addendum), so the row has none and the gate cannot decide on it.
 */
function tooThin(stratum: string, s: PpiSample): string | undefined {
  const n = s.human.length;
  if (n < MIN_PPI_LABELS) {
    return `${n} human-labelled ${n === 1 ? 'query' : 'queries'} in ${stratum}; the PPI interval needs at least ${MIN_PPI_LABELS} per stratum`;
  }
  if (s.judgeOnUnlabelled.length < 2)
    return `${s.judgeOnUnlabelled.length} queries of ${stratum} without human labels; PPI needs at least 2 (with none, the human delta needs no correction)`;
  return undefined;
}

/**
 * Every comparison's PPI-corrected delta beside its plain one (docs/adr/0038): per stratum, PPI++ on the per-query
 * paired difference (judge-based on every query, human-based on the labelled ones, `ppiMean`, classic lambda 1); the overall row of several strata is the stratified estimate (`stratifiedPpiMean`, weights the strata's
 * shares of the queries). Empty without human labels.
 */
export function ppiRows(data: Core): PpiRow[] {
  const labels = data.humanLabels;
  if (labels === undefined) return [];
  const members = new Map<string, number[]>();
  data.queries.forEach((q, i) => members.set(q.stratum, [...(members.get(q.stratum) ?? []), i]));
  const pooled = data.strata.some((s) => s.overall);
  return data.comparisons.map((c) => {
    const judge = deltas(data.perQuery, c);
    const human = deltas(labels.perQuery, c);
    const overall = pooled && c.stratum === OVERALL;
    const indices = overall ? data.queries.map((_, i) => i) : (members.get(c.stratum) ?? []);
    const plainDelta = indices.reduce((t, i) => t + (judge[i] as number), 0) / indices.length;
    const row = { stratum: c.stratum, measure: c.measure, baseline: c.baseline, system: c.system, role: c.role, plainDelta };
    const samples = (overall ? [...members.keys()] : [c.stratum]).map((s) => [s, sampleOf(members.get(s) ?? [], data, judge, human)] as const);
    const why = samples.map(([s, x]) => tooThin(s, x)).find((w) => w !== undefined);
    if (why !== undefined) return { ...row, unavailable: why };
    const alpha = alphaOf(data, c);
    const r = overall
      ? stratifiedPpiMean(
          samples.map(([, sample]) => ({ sample })),
          { alpha },
        )
      : ppiMean((samples[0] as (typeof samples)[number])[1], { alpha });
    const ppi: PpiEstimate = {
      estimate: r.estimate,
      ci: [r.ci[0], r.ci[1]],
      se: r.se,
      df: r.df,
      lambda: r.lambda,
      n: r.n,
      N: r.N,
      level: 1 - alpha,
      significant: r.ci[0] > 0 || r.ci[1] < 0,
    };
    return { ...row, ppi };
  });
}
