import { stemmer } from 'stemmer';
import { ENGLISH_V1_STOP_WORDS } from '../../arms/bm25/english-stopwords.js';
import { itemsWithin, protocolOf } from './context.js';
import type { Reader } from './reader.js';
import type { AnswerQuestion, ContextItem, ReaderOutcome } from './types.js';

/** The extractive reader's answer when no sentence shares a content word with the question. */
export const EXTRACTIVE_DONT_KNOW = "I don't know.";

/**
 * The content words of a text as Porter stems: lower-cased letter-and-digit tokens (apostrophes dropped, so
 * "Alex's" is "alexs" as the stop list expects), NLTK's English stop words left out.
 */
export function contentStems(text: string): Set<string> {
  const tokens =
    text
      .toLowerCase()
      .replace(/['\u2019]/g, '')
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(tokens.filter((t) => !ENGLISH_V1_STOP_WORDS.has(t)).map((t) => stemmer(t)));
}

/** The sentences of a text: its lines, each split after `.`, `!` or `?` followed by a space; blanks dropped. */
export function sentencesOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The sentence of the context that shares the most distinct content stems with the question. */
export interface ExtractedSpan {
  readonly text: string;
  readonly itemId: string;
  /** Distinct question stems in the sentence. */
  readonly overlap: number;
}

/**
 * The sentence that best overlaps the question's content stems, or undefined when none shares any. Items are
 * searched in rank order and a sentence must beat the best so far, so a tie goes to the higher-ranked item,
 * then to the earlier sentence.
 */
export function bestSentence(question: string, items: readonly ContextItem[]): ExtractedSpan | undefined {
  const wanted = contentStems(question);
  let best: ExtractedSpan | undefined;
  for (const item of items) {
    for (const sentence of sentencesOf(item.text)) {
      const stems = contentStems(sentence);
      const overlap = [...wanted].filter((w) => stems.has(w)).length;
      if (overlap > (best?.overlap ?? 0)) best = { text: sentence, itemId: item.id, overlap };
    }
  }
  return best;
}

/**
 * The offline baseline reader (no LLM, deterministic): it answers with the one sentence of its context that
 * shares the most content words with the question, and says it does not know when none shares any. It sees
 * the items a chat reader with the same budget would (`itemsWithin`). It exists so answer measures run without
 * a key (the bundled example); its accuracy is a floor for what retrieval alone puts in front of a reader, not
 * an estimate of an LLM reader's.
 */
export function extractiveReader(opts: { readonly budgetTokens: number }): Reader {
  return {
    id: 'extractive',
    local: true,
    model: 'extractive',
    fingerprint: `extractive-v1:${opts.budgetTokens}`,
    answer(q: AnswerQuestion, context: readonly ContextItem[]): Promise<ReaderOutcome> {
      const items = itemsWithin(context, { budgetTokens: opts.budgetTokens, protocol: protocolOf(q) });
      const span = bestSentence(q.text, items);
      return Promise.resolve({
        status: 'answered',
        text: span?.text ?? EXTRACTIVE_DONT_KNOW,
        tokens: { prompt: 0, completion: 0 },
        model: 'extractive',
        context: items.map((i) => i.id),
      });
    },
  };
}
