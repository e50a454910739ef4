import type { AnswerProtocol, AnswerQuestion, ContextItem } from './types.js';

/**
 * Characters per token in the workbench's token estimate. No tokenizer is loaded for a budget (the reader may
 * be any model behind any server), so a budget counts ceil(characters / 4): the usual rule of thumb for English
 * text under the GPT tokenizers, the same estimate the e2e loopback servers report as usage.
 */
export const CHARS_PER_TOKEN = 4;

/** The estimated tokens of `text`: ceil(characters / {@link CHARS_PER_TOKEN}). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export interface ContextOptions {
  /** The question's date, written after the history (as LongMemEval's reader shows the current date). */
  readonly questionDate?: string;
  /** The most tokens (estimated, {@link estimateTokens}) the whole text may take, date line included. */
  readonly budgetTokens: number;
  readonly protocol: AnswerProtocol;
}

/** A context as a reader sees it, and which items made it in. */
export interface FormattedContext {
  readonly text: string;
  /** Ids of the items in the text, in rank order (the order they came in). */
  readonly included: readonly string[];
  /** Items left out for the budget. */
  readonly truncated: number;
}

/** Marks the end of an item's text cut to fit the budget, so a reader can tell it saw only its start. */
const CUT_MARK = ' [...]';
const SEPARATOR = '\n\n';

/**
 * The protocol a question comes from, as far as the question says: a LongMemEval question type, a LoCoMo
 * category, else generic. The reader formats its context by it (AnswerQuestion carries no protocol itself).
 */
export function protocolOf(q: AnswerQuestion): AnswerProtocol {
  if (q.questionType !== undefined) return 'longmemeval';
  if (q.category !== undefined) return 'locomo';
  return 'generic';
}

/** One item's block in display position `n` (1-based). `text` is passed apart so a cut item renders the same way. */
function renderItem(protocol: AnswerProtocol, item: ContextItem, text: string, n: number): string {
  const date = item.timestamp?.trim() || 'undated';
  const title = item.title === undefined || item.title === '' ? '' : ` ${item.title}`;
  switch (protocol) {
    // Each item is a session: a heading with its date, then its turns.
    case 'longmemeval':
      return `### Session ${n}, ${date}${title}\n${text}`;
    // Each item is a memory or turn of a conversation: one dated line (mem0's memories are listed so).
    case 'locomo':
      return `- (${date})${title} ${text}`;
    case 'generic':
      return `[${n}] ${date}${title}\n${text}`;
  }
}

/** The line after the history that dates the question. */
function dateLine(questionDate: string | undefined): string {
  return questionDate === undefined || questionDate.trim() === '' ? '' : `${SEPARATOR}Current date: ${questionDate.trim()}`;
}

/** Milliseconds of a timestamp for sorting, or undefined when it has none or cannot be read (those go last). */
function timeOf(item: ContextItem): number | undefined {
  if (item.timestamp === undefined) return undefined;
  const ms = Date.parse(item.timestamp);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The items in date order, oldest first; undated (or unreadable dates) last; ties keep their rank order. */
function byDate(items: readonly ContextItem[]): ContextItem[] {
  const keyed = items.map((item, rank) => ({ item, rank, t: timeOf(item) }));
  keyed.sort((a, b) => {
    if (a.t === undefined || b.t === undefined) return a.t === b.t ? a.rank - b.rank : a.t === undefined ? 1 : -1;
    return a.t - b.t || a.rank - b.rank;
  });
  return keyed.map((k) => k.item);
}

/**
 * The items kept under a budget of `room` characters: the longest rank-order prefix whose blocks fit, so a
 * lower-ranked item is never shown while a higher-ranked one is left out. Blocks are sized at the widest
 * display number, so numbering them after the date sort can only make the text shorter than reckoned.
 */
function keepByRank(protocol: AnswerProtocol, items: readonly ContextItem[], room: number): ContextItem[] {
  const widest = Math.max(1, items.length);
  const kept: ContextItem[] = [];
  let used = 0;
  for (const item of items) {
    const size = renderItem(protocol, item, item.text, widest).length + (kept.length === 0 ? 0 : SEPARATOR.length);
    if (used + size > room) break;
    kept.push(item);
    used += size;
  }
  if (kept.length > 0 || items.length === 0) return kept;
  // Not even the top item fits whole: its start is better for the reader than an empty history.
  const top = items[0] as ContextItem;
  const head = renderItem(protocol, top, '', widest).length + CUT_MARK.length;
  const left = room - head;
  return left <= 0 ? kept : [{ ...top, text: `${top.text.slice(0, left).trimEnd()}${CUT_MARK}` }];
}

/**
 * The items {@link formatContext} shows under `opts`, in rank order, the top one cut when it alone is over the
 * budget: what a reader that does not read the formatted text (the extractive one) searches.
 */
export function itemsWithin(items: readonly ContextItem[], opts: ContextOptions): ContextItem[] {
  if (!(opts.budgetTokens > 0)) throw new RangeError(`formatContext: budgetTokens must be positive, got ${opts.budgetTokens}`);
  return keepByRank(opts.protocol, items, opts.budgetTokens * CHARS_PER_TOKEN - dateLine(opts.questionDate).length);
}

/**
 * The history a reader sees: the most relevant items (the input order is rank order) that fit `budgetTokens`,
 * shown oldest first with their dates, undated items last, then the question's date. Whenever an item is
 * shown, the whole text, headers and date line included, is at most `budgetTokens` by {@link estimateTokens}.
 * When not even the top item fits, its text is cut to fit (ending `[...]`) rather than showing nothing. With
 * nothing shown (no items, or a budget too small for a header) the history reads `(no history)`.
 */
export function formatContext(items: readonly ContextItem[], opts: ContextOptions): FormattedContext {
  const tail = dateLine(opts.questionDate);
  const kept = itemsWithin(items, opts);
  const shown = byDate(kept).map((item, i) => renderItem(opts.protocol, item, item.text, i + 1));
  const history = shown.length === 0 ? '(no history)' : shown.join(SEPARATOR);
  return { text: `${history}${tail}`, included: kept.map((i) => i.id), truncated: items.length - kept.length };
}
