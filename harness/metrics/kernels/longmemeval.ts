import { HarnessError } from '../../errors.js';
import { longMemEvalDcg, officialTurnToSession, type TurnToSessionValues } from '../../../evalset/adapters/longmemeval-metrics.js';
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

/**
 * LongMemEval's turn-to-session values of a judged turn ranking (their `evaluate_retrieval_turn2session`; see
 * officialTurnToSession): a turn is relevant at grade >= `level`, a session is relevant when it holds a judged
 * relevant turn, and their ideal list has one entry per judged relevant turn (`numRel`).
 */
export function longMemEvalTurnToSessionAt(r: JudgedRanking, level: number, k: number): TurnToSessionValues {
  const t = r.turnSessions;
  // evaluate() sets it whenever a turn-to-session measure is asked for; a kernel called otherwise is a bug.
  if (t === undefined) throw new HarnessError('a turn-to-session measure was scored without the sessions of the turns');
  const ranked = Array.from({ length: r.numRet }, (_, i) => ({ session: t.ranked[i]!, relevant: r.rels[i]! >= level }));
  const sessions = new Set(t.judged.filter(([, grade]) => grade >= level).map(([session]) => session));
  return officialTurnToSession(ranked, sessions, r.numRel, k);
}
