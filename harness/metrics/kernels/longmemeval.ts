import { longMemEvalDcg } from '../../../evalset/adapters/longmemeval-metrics.js';
import type { JudgedRanking } from '../ranking.js';

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
