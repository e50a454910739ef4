import type { AnswerQuestion, AnswerRow } from './types.js';

/**
 * Which answer row answers which question. A row that names a question id takes that question; a row without
 * one (mem0's files) is matched by conversation and question text: among the questions of that conversation
 * whose normalised text is the row's, the k-th such row takes the k-th such question not yet taken (LoCoMo
 * repeats some questions word for word within a conversation, and mem0 keeps the dataset's order).
 *
 * Nothing is dropped silently: a row that takes no question (its question is not in the eval set, it came
 * twice, its conversation is out of range) is in `unmapped`, and a question no row takes is in `missing`.
 */
export interface AnswerRowMapping {
  /** Question id -> its row, in question order. */
  readonly byQuestion: ReadonlyMap<string, AnswerRow>;
  /** Rows that answer no question of the eval set, in file order. */
  readonly unmapped: readonly AnswerRow[];
  /** Ids of the questions no row answers, in question order. */
  readonly missing: readonly string[];
}

export interface MapAnswerRowsOptions {
  /** The 0-based conversation a question belongs to (LoCoMo's `metadata.conversationIndex`), or undefined. */
  readonly conversationOf: (q: AnswerQuestion) => number | undefined;
}

/**
 * A question's text as matching compares it: Unicode-compatible form (NFKC: full-width and ligature forms folded),
 * curly quotes made straight, lower case, runs of whitespace as one space, trimmed.
 */
export function normaliseQuestion(text: string): string {
  return text
    .normalize('NFKC')
    .replace(/[\u2018\u2019\u201B\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201F\u2033]/g, '"')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

/** The key text matching groups by: conversation and normalised question. */
const textKey = (conversation: number, question: string): string => `${conversation}\u0000${normaliseQuestion(question)}`;

export function mapAnswerRows(rows: readonly AnswerRow[], questions: readonly AnswerQuestion[], opts: MapAnswerRowsOptions): AnswerRowMapping {
  const taken = new Map<string, AnswerRow>();
  const mapped = new Set<AnswerRow>();
  mapById(rows, questions, taken, mapped);
  mapByText(rows, questions, opts, taken, mapped);
  const byQuestion = new Map<string, AnswerRow>();
  const missing: string[] = [];
  for (const q of questions) {
    const row = taken.get(q.id);
    if (row === undefined) missing.push(q.id);
    else byQuestion.set(q.id, row);
  }
  return { byQuestion, unmapped: rows.filter((r) => !mapped.has(r)), missing };
}

/** Rows that name a question id take it, the first such row only. */
function mapById(rows: readonly AnswerRow[], questions: readonly AnswerQuestion[], taken: Map<string, AnswerRow>, mapped: Set<AnswerRow>): void {
  const ids = new Set(questions.map((q) => q.id));
  for (const row of rows) {
    if (row.questionId === undefined || !ids.has(row.questionId) || taken.has(row.questionId)) continue;
    taken.set(row.questionId, row);
    mapped.add(row);
  }
}

/** Rows without a question id, matched by conversation and text, in order within each (conversation, text). */
function mapByText(
  rows: readonly AnswerRow[],
  questions: readonly AnswerQuestion[],
  opts: MapAnswerRowsOptions,
  taken: Map<string, AnswerRow>,
  mapped: Set<AnswerRow>,
): void {
  const open = new Map<string, AnswerQuestion[]>();
  for (const q of questions) {
    const conversation = opts.conversationOf(q);
    if (conversation === undefined || taken.has(q.id)) continue;
    const key = textKey(conversation, q.text);
    const list = open.get(key);
    if (list === undefined) open.set(key, [q]);
    else list.push(q);
  }
  for (const row of rows) {
    if (row.questionId !== undefined || row.conversationIndex === undefined || row.question === undefined) continue;
    // shift(): the next question of this text in dataset order, so repeated questions pair up by position.
    const q = open.get(textKey(row.conversationIndex, row.question))?.shift();
    if (q === undefined) continue;
    taken.set(q.id, row);
    mapped.add(row);
  }
}
