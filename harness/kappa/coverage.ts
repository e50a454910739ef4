import type { JudgmentRecord } from '../judge/store.js';

/** Which queries hand labels cover whole: every pair the judge graded for the query has a human grade. */
export interface QueryCoverage {
  /** Queries with every graded pair labelled, in the judgments' order. */
  readonly complete: readonly string[];
  /** Queries with some, not all, graded pairs labelled (a skip leaves its query here). */
  readonly incomplete: readonly string[];
}

/**
 * The queries a set of labelled pairs covers whole. A pair the judge did not grade (a parse failure, a sensitive
 * memory not sent) is a hole under the judge's qrels and under the human's alike, so it is not asked for.
 */
export function queryCoverage(labelled: readonly { queryId: string; docId: string }[], records: readonly JudgmentRecord[]): QueryCoverage {
  const graded = new Map<string, number>();
  for (const r of records) if (r.status === 'judged') graded.set(r.queryId, (graded.get(r.queryId) ?? 0) + 1);
  const seen = new Map<string, Set<string>>();
  for (const p of labelled) {
    let docs = seen.get(p.queryId);
    if (!docs) seen.set(p.queryId, (docs = new Set()));
    docs.add(p.docId);
  }
  const complete: string[] = [];
  const incomplete: string[] = [];
  for (const q of graded.keys()) {
    const n = seen.get(q)?.size ?? 0;
    if (n === 0) continue;
    (n >= (graded.get(q) as number) ? complete : incomplete).push(q);
  }
  return { complete, incomplete };
}
