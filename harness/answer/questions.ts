import { parseLongMemEvalDate } from '../../evalset/adapters/longmemeval.js';
import type { EvalSet, JsonValue, Query } from '../../evalset/types.js';
import type { AnswerProtocol, AnswerQuestion } from './types.js';

/**
 * The eval set's Questions: the queries with a gold answer, as the answer level sees them (CONTEXT.md, "Answer
 * evaluation"). The adapters put what the answer level reads into each query (its `answer`, and metadata keys
 * `abstention`, `answerOnly`, `questionDate`, `questionType`, `category`, `conversationIndex`); this module
 * only reads them back, so an eval set from any format gives its questions the same way.
 */

/** The protocol an eval set's questions come from: its format's (LoCoMo, LongMemEval), else generic. */
export function evalSetProtocol(es: EvalSet): AnswerProtocol {
  if (es.format === 'locomo') return 'locomo';
  if (es.format === 'longmemeval') return 'longmemeval';
  return 'generic';
}

/**
 * Every query with a gold answer as an AnswerQuestion, in eval-set order, and how many queries have none
 * (they count for retrieval only). `protocol` defaults to {@link evalSetProtocol}; under `longmemeval`, a
 * question id ending `_abs` is an abstention question even without `metadata.abstention`.
 */
export function answerQuestions(
  es: EvalSet,
  opts: { readonly protocol?: AnswerProtocol } = {},
): { readonly questions: readonly AnswerQuestion[]; readonly withoutAnswer: number } {
  const protocol = opts.protocol ?? evalSetProtocol(es);
  const questions: AnswerQuestion[] = [];
  let withoutAnswer = 0;
  for (const q of es.queries) {
    if (q.answer === undefined) withoutAnswer += 1;
    else questions.push(answerQuestion(q, q.answer, es, protocol));
  }
  return { questions, withoutAnswer };
}

function answerQuestion(q: Query, gold: string, es: EvalSet, protocol: AnswerProtocol): AnswerQuestion {
  const meta = q.metadata ?? {};
  const date = questionDate(meta);
  const questionType = meta['questionType'];
  const category = meta['category'];
  return {
    id: q.id,
    text: q.text,
    gold,
    stratum: q.stratum,
    ...(q.scope === undefined ? {} : { scope: q.scope }),
    ...(date === undefined ? {} : { date }),
    ...(typeof questionType === 'string' ? { questionType } : {}),
    ...(typeof category === 'number' ? { category } : {}),
    abstention: meta['abstention'] === true || (protocol === 'longmemeval' && q.id.endsWith('_abs')),
    evidence: evidenceOf(es, q.id),
  };
}

/**
 * When the question is asked, as ISO 8601: `metadata.date` or `metadata.timestamp` when they parse (the same
 * keys the recency priors read), else LongMemEval's `questionDate` ("2023/05/25 (Thu) 20:21") converted.
 */
function questionDate(meta: Readonly<Record<string, JsonValue>>): string | undefined {
  const own = meta['date'] ?? meta['timestamp'];
  if (typeof own === 'string' && !Number.isNaN(Date.parse(own))) return own;
  const asked = meta['questionDate'];
  if (typeof asked !== 'string') return undefined;
  return parseLongMemEvalDate(asked) ?? (Number.isNaN(Date.parse(asked)) ? undefined : asked);
}

/** The query's relevant documents (grade >= 1), in the order its qrels list them. */
function evidenceOf(es: EvalSet, queryId: string): string[] {
  const judged = es.qrels.get(queryId);
  if (judged === undefined) return [];
  return [...judged].filter(([, grade]) => grade >= 1).map(([docId]) => docId);
}

/**
 * Whether a query is kept for answer measures only (`metadata.answerOnly`: no judgments, e.g. a LoCoMo QA
 * without valid evidence, a LongMemEval `_abs` question): systems still retrieve for it, so a reader has a
 * context, but retrieval measures must not score it as a miss.
 */
export function isAnswerOnly(q: Query): boolean {
  return q.metadata?.['answerOnly'] === true;
}

/** The eval set without its answer-only queries: what retrieval measures score. The same object when it has none. */
export function withoutAnswerOnly(es: EvalSet): EvalSet {
  if (!es.queries.some(isAnswerOnly)) return es;
  return { ...es, queries: es.queries.filter((q) => !isAnswerOnly(q)) };
}

/** Query by id, per eval set, built on first use: answers files map many rows against one eval set. */
const queriesById = new WeakMap<EvalSet, ReadonlyMap<string, Query>>();

/**
 * The 0-based index in the source file of the LoCoMo conversation a question belongs to
 * (`metadata.conversationIndex`), the key mem0's evaluation files group questions by; undefined when the
 * eval set does not know it (other formats, or a question id not in `es`).
 */
export function conversationIndexOf(q: { readonly id: string }, es: EvalSet): number | undefined {
  let byId = queriesById.get(es);
  if (byId === undefined) {
    byId = new Map(es.queries.map((query) => [query.id, query]));
    queriesById.set(es, byId);
  }
  const index = byId.get(q.id)?.metadata?.['conversationIndex'];
  return typeof index === 'number' ? index : undefined;
}
