import type { HumanLabelsInput } from '../decision/evidence-types.js';
import type { ReportEvalSet } from '../decision/types.js';

/**
 * Parts of a ReportInput for studies made up in code (the PPI and judge-validation tests feed per-query values
 * straight to buildReportData). The values are what those tests vary; the eval set around them and the way the
 * human labels pick the labelled queries' values are the same in each, so they are written here once.
 */

/** A query of a made-up study: its id and stratum. */
export interface MadeQuery {
  readonly id: string;
  readonly stratum: string;
}

/** The eval set of a made-up study over `queries`, graded by a judge (qrels version `v1`), strata counted from the queries. */
export function madeEvalset(queries: readonly MadeQuery[]): ReportEvalSet {
  const strata: Record<string, number> = {};
  for (const q of queries) strata[q.stratum] = (strata[q.stratum] ?? 0) + 1;
  return {
    name: 'made',
    format: 'memory',
    path: 'made',
    fingerprint: 'f',
    queries: queries.length,
    documents: 1,
    strata,
    notes: [],
    qrelsSource: 'judged',
    judge: { model: 'judge-m', prompt: 'umbrela-v1@0', qrelsVersion: 'v1' },
  };
}

/**
 * Human labels (a qrels file, version `v1`) on the `labelled` queries: `human` holds each run's nDCG@10 under the
 * human labels on every one of `queries`, in their order; the labels carry the labelled queries' values.
 */
export function madeHumanLabels(
  queries: readonly MadeQuery[],
  labelled: readonly string[],
  human: Readonly<Record<string, readonly number[]>>,
  more: Pick<HumanLabelsInput, 'incomplete' | 'pairs' | 'thresholds'>,
): HumanLabelsInput {
  const at = new Map(queries.map((q, i) => [q.id, i] as const));
  const pick = (v: readonly number[]) => labelled.map((q) => v[at.get(q) as number] as number);
  return {
    file: 'human.qrels',
    kind: 'qrels',
    qrelsVersion: 'v1',
    queries: labelled,
    incomplete: more.incomplete,
    perQuery: Object.fromEntries(Object.entries(human).map(([run, v]) => [run, { 'nDCG@10': pick(v) }])),
    pairs: more.pairs,
    thresholds: more.thresholds,
  };
}
