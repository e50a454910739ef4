import type { Document, EvalSet } from '../../evalset/types.js';
import type { ReturnedText, ScopeResults } from '../systems/types.js';
import type { AnswerRowMapping } from './map-rows.js';
import type { AnswerQuestion, ContextItem } from './types.js';

/**
 * Where each answered system's answers come from (docs/adr/0045-answer-level-evaluation.md): a system with a
 * run is answered by the reader from its own top-k; a `full-context` system by the reader from the whole
 * history of the question's scope; an `answers-file` system by the rows of its file. A context carries, beside
 * what the reader sees, which of its items are sensitive, so the egress guard can refuse to send it.
 */

/** A context for one question: the items in the order the reader ranks them, and which are sensitive. */
export interface QuestionContext {
  readonly items: readonly ContextItem[];
  /** Ids of the items that hold (or restate) a Sensitive Document. */
  readonly sensitive: ReadonlySet<string>;
}

/** An answered system, as the answer stage asks it. */
export type AnswerSource =
  | { readonly kind: 'reader'; readonly id: string; readonly contextOf: (q: AnswerQuestion) => QuestionContext }
  | { readonly kind: 'full-context'; readonly id: string; readonly budgetTokens: number; readonly contextOf: (q: AnswerQuestion) => QuestionContext }
  | {
      readonly kind: 'answers-file';
      readonly id: string;
      readonly mapping: AnswerRowMapping;
      /** Who graded the rows that record a grade: `recorded:<format>`, or the judge the file names. */
      readonly recordedJudge: string;
    };

/** A Document as a context item: its text, date and title. */
export function documentItem(d: Document): ContextItem {
  return { id: d.id, text: d.text, ...(d.timestamp === undefined ? {} : { timestamp: d.timestamp }), ...(d.title === undefined ? {} : { title: d.title }) };
}

/**
 * The reader's context from a system's results (best first): its top `topK` items, each a Document or a
 * Returned item's text (a rewriting memory server). An id that is neither is left out: a system that returns
 * ids the eval set lacks is flagged by the Result check, and a reader cannot read an id.
 */
export function topKContext(
  results: ScopeResults,
  returned: Readonly<Record<string, ReturnedText>> | undefined,
  documents: ReadonlyMap<string, Document>,
  topK: number,
): (q: AnswerQuestion) => QuestionContext {
  return (q) => {
    const items: ContextItem[] = [];
    const sensitive = new Set<string>();
    for (const [docId] of results[q.id] ?? []) {
      if (items.length >= topK) break;
      const doc = documents.get(docId);
      const text = returned?.[docId];
      if (doc !== undefined) {
        items.push(documentItem(doc));
        if (doc.sensitive === true) sensitive.add(doc.id);
      } else if (text !== undefined) {
        items.push({ id: docId, text: text.text });
        if (text.sensitive === true) sensitive.add(docId);
      }
    }
    return { items, sensitive };
  };
}

/** Milliseconds of a document's date, or -Infinity when it has none (undated ones rank last). */
function timeOf(d: Document): number {
  const t = d.timestamp === undefined ? Number.NaN : Date.parse(d.timestamp);
  return Number.isFinite(t) ? t : Number.NEGATIVE_INFINITY;
}

/**
 * The whole history a `full-context` system answers from: every document of the question's scope (the whole
 * corpus for a question without one), newest first, so that when it exceeds the budget the most recent part is
 * what the reader keeps (the context shows what it keeps oldest first). Ties keep corpus order.
 */
export function fullHistory(es: Pick<EvalSet, 'documents' | 'scopes'>): (q: AnswerQuestion) => QuestionContext {
  const byId = new Map(es.documents.map((d) => [d.id, d] as const));
  const memo = new Map<string, QuestionContext>();
  const build = (scope: string | undefined): QuestionContext => {
    const ids = scope === undefined ? undefined : es.scopes?.get(scope);
    const docs = ids === undefined ? [...es.documents] : ids.flatMap((id) => byId.get(id) ?? []);
    const order = docs.map((d, i) => ({ d, i, t: timeOf(d) })).sort((a, b) => b.t - a.t || a.i - b.i);
    return { items: order.map((o) => documentItem(o.d)), sensitive: new Set(docs.filter((d) => d.sensitive === true).map((d) => d.id)) };
  };
  return (q) => {
    const key = q.scope ?? '\u0000all';
    let ctx = memo.get(key);
    if (ctx === undefined) {
      ctx = build(q.scope);
      memo.set(key, ctx);
    }
    return ctx;
  };
}

/**
 * Whether any evidence document of the question is among the ids the reader saw; undefined when the question
 * has no evidence ids (nothing to attribute) or the context is unknown (an answers file).
 */
export function evidenceInContext(q: AnswerQuestion, seen: readonly string[] | undefined): boolean | undefined {
  if (q.evidence.length === 0 || seen === undefined) return undefined;
  const ids = new Set(seen);
  return q.evidence.some((e) => ids.has(e));
}
