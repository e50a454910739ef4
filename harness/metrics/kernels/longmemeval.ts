import type { JudgedRanking } from '../ranking.js';

/**
 * LongMemEval's DCG (xiaowu0162/LongMemEval src/retrieval/eval_utils.py) over a gain list, first `k` entries:
 * rel[0] + sum_{i>=1} rel[i] / log2(i + 1) with 0-based i. Unlike trec_eval (every rank r divided by
 * log2(r + 1)), ranks 1 and 2 are both undiscounted. Kept only to compare with published LongMemEval numbers.
 */
export function longMemEvalDcg(gains: ArrayLike<number>, k: number): number {
  const n = Math.min(k, gains.length);
  if (n === 0) return 0;
  let dcg = gains[0]!;
  for (let i = 1; i < n; i++) dcg += gains[i]! / Math.log2(i + 1);
  return dcg;
}

/**
 * LongMemEval's ndcg_any@k over a judged ranking: binary gains (grade >= `level`), their DCG of the top k over
 * their DCG of the ideal list (min(k, numRel) relevant items first; the ideal is built from all judged relevant
 * items, retrieved or not). 0 when nothing is relevant.
 */
export function longMemEvalNdcgAt(r: JudgedRanking, level: number, k: number): number {
  if (r.numRel === 0) return 0;
  const n = Math.min(k, r.numRet);
  const gains = new Float64Array(n);
  for (let i = 0; i < n; i++) gains[i] = r.rels[i]! >= level ? 1 : 0;
  const ideal = new Float64Array(Math.min(k, r.numRel)).fill(1);
  return longMemEvalDcg(gains, k) / longMemEvalDcg(ideal, k);
}
