/**
 * LongMemEval's own retrieval measures (xiaowu0162/LongMemEval src/retrieval/eval_utils.py), reproduced only to
 * compare with published numbers; our reported measures stay trec_eval's. All functions are pure and take the
 * ranked doc ids (best first) and the set of relevant ids. `k` is the cutoff.
 *
 * Differences from trec_eval worth knowing:
 * - `recallAll` of a question with no relevant id is 1 (Python's `all([])`), `recallAny` is 0.
 * - Their DCG does not discount ranks 1 and 2: DCG = rel_1 + sum_{r>=2} rel_r / log2(r), i.e. with 0-based i,
 *   rel[0] + sum_{i>=1} rel[i] / log2(i + 1); trec_eval divides every rank r by log2(r + 1).
 * - Gains are binary (relevant or not), and the ideal list is all relevant corpus items first, cut at k.
 *
 * Their averages (run_retrieval.py) leave out `_abs` questions and questions with no user turn marked
 * `has_answer`; the adapter (longmemeval.ts) leaves both out of the eval set, so a report's means are theirs.
 */

/** recall_any@k: 1 when at least one relevant id is in the top k, else 0. */
export function recallAny(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number {
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) if (relevant.has(ranked[i]!)) return 1;
  return 0;
}

/** recall_all@k: 1 when every relevant id is in the top k (1 when there is none), else 0. */
export function recallAll(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): number {
  const top = new Set(ranked.slice(0, k));
  for (const r of relevant) if (!top.has(r)) return 0;
  return 1;
}

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
 * ndcg_any@k: their DCG of the ranking over their DCG of the ideal ranking; 0 when nothing is relevant.
 * `relevantInCorpus` is how many corpus items are relevant (the official ideal list is built from the whole
 * corpus, so a relevant id missing from a truncated run still counts); it defaults to `relevant.size`.
 */
export function ndcgAny(ranked: readonly string[], relevant: ReadonlySet<string>, k: number, relevantInCorpus = relevant.size): number {
  const n = Math.min(k, ranked.length);
  const gains = new Float64Array(n);
  for (let i = 0; i < n; i++) gains[i] = relevant.has(ranked[i]!) ? 1 : 0;
  const ideal = new Float64Array(Math.min(k, relevantInCorpus)).fill(1);
  const idcg = longMemEvalDcg(ideal, k);
  return idcg === 0 ? 0 : longMemEvalDcg(gains, k) / idcg;
}

/**
 * Their turn-to-session evaluation (`evaluate_retrieval_turn2session`): map every turn id to its session, widen
 * the cutoff until the top `k'` turns cover k distinct sessions (or the ranking ends), then score the mapped
 * list at `k'`, duplicates included, exactly as their code does. `corpusSessions` lists the session of every
 * corpus turn (duplicates included), from which the ideal list is built.
 *
 * Their numbers come out only when `sessionOf` makes their `noans` split (a turn of an answer session without
 * `has_answer` belongs to another, non-relevant session); a plain turn -> session map does not, and
 * {@link officialTurnToSession} (the `*-T2S@k` measures) makes it from the turns' relevance.
 */
export function turnToSession(
  rankedTurns: readonly string[],
  sessionOf: (turnId: string) => string,
  relevantSessions: ReadonlySet<string>,
  corpusSessions: readonly string[],
  k: number,
): { recallAny: number; recallAll: number; ndcgAny: number; effectiveK: number } {
  const mapped = rankedTurns.map(sessionOf);
  let effectiveK = k;
  const distinct = (kk: number) => new Set(mapped.slice(0, kk)).size;
  while (effectiveK <= corpusSessions.length && distinct(effectiveK) < k) effectiveK += 1;
  const relevantInCorpus = corpusSessions.filter((s) => relevantSessions.has(s)).length;
  return {
    recallAny: recallAny(mapped, relevantSessions, effectiveK),
    recallAll: recallAll(mapped, relevantSessions, effectiveK),
    ndcgAny: ndcgAny(mapped, relevantSessions, effectiveK, relevantInCorpus),
    effectiveK,
  };
}

/** One retrieved turn as their turn mode sees it: its session, and whether it is relevant (`has_answer`). */
export interface RankedTurn {
  readonly session: string;
  readonly relevant: boolean;
}

/** Their turn-to-session values of one question, and the widened cutoff (Infinity: past the ranking's end). */
export interface TurnToSessionValues {
  readonly recallAny: number;
  readonly recallAll: number;
  readonly ndcgAny: number;
  readonly effectiveK: number;
}

/**
 * `evaluate_retrieval_turn2session` of LongMemEval's turn mode (src/retrieval/run_retrieval.py, eval_utils.py),
 * from the ranked turns' sessions and relevance. Their turn mode names a turn of an answer session without
 * `has_answer` with `answer` replaced by `noans`, so `strip_turn_id` sends it to a session of its own that is
 * never relevant: an answer session splits in two, and the split is what widening counts (`k'` = the first
 * cutoff >= k whose top turns hold k distinct such sessions) and what the gains read (one per relevant turn,
 * duplicates included). Since only relevant turns keep the answer session's id, a turn's official session is
 * (its session, its relevance), whatever the session's name.
 *
 * `relevantSessions`: the sessions holding a relevant turn of the haystack (their correct_docs, stripped);
 * `relevantTurns`: how many relevant turns the haystack holds (their ideal list). A ranking shorter than the
 * haystack gives what their code gives for that shorter `rankings` list (Python slices it): when it ends before
 * k distinct sessions, `k'` runs past it (their loop ends at len(corpus) + 1), reported as Infinity.
 */
export function officialTurnToSession(
  ranked: readonly RankedTurn[],
  relevantSessions: ReadonlySet<string>,
  relevantTurns: number,
  k: number,
): TurnToSessionValues {
  const mapped = ranked.map((t) => `${t.relevant ? 'answer' : 'noans'}\u0000${t.session}`);
  const distinct = new Set<string>();
  let effectiveK = Number.POSITIVE_INFINITY;
  for (let i = 0; i < mapped.length; i++) {
    distinct.add(mapped[i]!);
    if (i + 1 >= k && distinct.size >= k) {
      effectiveK = i + 1;
      break;
    }
  }
  const relevant = new Set([...relevantSessions].map((s) => `answer\u0000${s}`));
  return {
    recallAny: recallAny(mapped, relevant, effectiveK),
    recallAll: recallAll(mapped, relevant, effectiveK),
    ndcgAny: ndcgAny(mapped, relevant, effectiveK, relevantTurns),
    effectiveK,
  };
}
