import { stemmer } from 'stemmer';
import { HarnessError } from '../errors.js';
import type { AnswerMeasureName } from './measure.js';

/**
 * The lexical Answer measures: an answer's text against its gold, as three public evaluations score it, each
 * under its own name because they give different numbers (docs/adr/0046-answer-measures-and-stemmer.md):
 *
 * - `F1-LoCoMo`: LoCoMo's official F1 (snap-research/locomo, task_eval/evaluation.py): Porter-stemmed tokens,
 *   multiset overlap, with per-category rules;
 * - `F1-set`: mem0's evaluation F1 (mem0ai/mem0, evaluation/metrics/utils.py): overlap of word sets;
 * - `EM`: exact match after SQuAD's normalisation.
 *
 * The text rules are Python's, kept exactly where JavaScript differs: `str.split()` splits on Python's
 * whitespace, and a dropped word must stand between non-word characters as the `regex` module's `\b` sees them.
 * The one difference left is the stemmer: `stemmer` is Porter's own revision of his algorithm, NLTK's default
 * adds extensions (the ADR measures what that changes).
 */

/** The lexical Answer measures, by canonical name. */
export type LexicalMeasureName = Exclude<AnswerMeasureName, 'Acc'>;

/** One answer's lexical measures. */
export type LexicalScores = Readonly<Record<LexicalMeasureName, number>>;

/** The characters Python's `str.isspace()` accepts, which `str.split()` splits on (JavaScript's `\s` differs). */
const PYTHON_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** Python's `string.punctuation`: ASCII only, so curly quotes and dashes stay in the tokens. */
const ASCII_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/**
 * A word character for the `regex` module's `\b` (Alphabetic, marks, decimal digits, connector punctuation,
 * joiners). JavaScript's own `\b` knows ASCII letters only: it would drop the `a` of `éa`.
 */
const WORD_CHARACTER = '[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]';

/** Whole words `words` as `\b(...)\b` matches them, to replace by a space. */
function wholeWords(words: readonly string[]): RegExp {
  return new RegExp(`(?<!${WORD_CHARACTER})(?:${words.join('|')})(?!${WORD_CHARACTER})`, 'gu');
}

/** LoCoMo drops `and` with the articles. */
const LOCOMO_DROPPED = wholeWords(['a', 'an', 'the', 'and']);
const SQUAD_ARTICLES = wholeWords(['a', 'an', 'the']);

/** The 0-or-1 phrases LoCoMo's category 5 (adversarial) rewards, looked for in the lower-cased answer. */
const NOT_MENTIONED = ['no information available', 'not mentioned'] as const;

function pythonSplit(text: string): string[] {
  return text.split(PYTHON_WHITESPACE).filter((t) => t !== '');
}

/** Lower case, punctuation removed, the `dropped` words removed as whole words, split on whitespace. */
function normalisedTokens(text: string, dropped: RegExp): string[] {
  return pythonSplit(text.toLowerCase().replace(ASCII_PUNCTUATION, '').replace(dropped, ' '));
}

/** F1 of two token multisets, as LoCoMo's `f1_score` does the arithmetic: 0 when nothing is shared. */
function multisetF1(prediction: readonly string[], gold: readonly string[]): number {
  const left = new Map<string, number>();
  for (const t of gold) left.set(t, (left.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of prediction) {
    const n = left.get(t) ?? 0;
    if (n > 0) {
      same++;
      left.set(t, n - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / prediction.length;
  const recall = same / gold.length;
  return (2 * precision * recall) / (precision + recall);
}

function stemmedTokens(text: string): string[] {
  return normalisedTokens(text, LOCOMO_DROPPED).map((t) => stemmer(t));
}

/** LoCoMo's single-answer F1 (its categories 2, 3 and 4). */
function stemmedF1(prediction: string, gold: string): number {
  return multisetF1(stemmedTokens(prediction), stemmedTokens(gold));
}

/** LoCoMo's multi-hop F1: each comma-separated gold part scored by its best prediction part, averaged. */
function multiAnswerF1(prediction: string, gold: string): number {
  const predictions = prediction.split(',').map(stemmedTokens);
  const golds = gold.split(',').map(stemmedTokens);
  let sum = 0;
  for (const g of golds) sum += Math.max(...predictions.map((p) => multisetF1(p, g)));
  return sum / golds.length;
}

/**
 * LoCoMo's official per-question F1 (`eval_question_answering`): category 1 (multi-hop) by comma-separated
 * parts, 2 (temporal) and 4 (single-hop) plain, 3 (open-domain) against the gold before its first `;`, and
 * 5 (adversarial) 1 when the answer says the information is not mentioned or available, else 0, whatever
 * the gold (a blanket refusal scores 1: the rule is gameable). A numeric gold is scored as its decimal text,
 * as LoCoMo's `str(answer)` gives it: pass `String(2022)`.
 */
export function locomoF1(prediction: string, gold: string, category: number): number {
  switch (category) {
    case 1:
      return multiAnswerF1(prediction, gold);
    case 2:
    case 4:
      return stemmedF1(prediction, gold);
    case 3:
      return stemmedF1(prediction, gold.split(';')[0]!);
    case 5: {
      const lower = prediction.toLowerCase();
      return NOT_MENTIONED.some((phrase) => lower.includes(phrase)) ? 1 : 0;
    }
    default:
      throw new HarnessError(`locomoF1: category ${String(category)} is not a LoCoMo category; LoCoMo's categories are 1 to 5`);
  }
}

/** mem0's words: lower case, `.`, `,`, `!` and `?` made spaces, split on whitespace (other punctuation stays). */
function wordSet(text: string): Set<string> {
  return new Set(pythonSplit(text.toLowerCase().replace(/[.,!?]/g, ' ')));
}

/** mem0's evaluation F1 over the sets of words of answer and gold; 0 when either is empty. */
export function setF1(prediction: string, gold: string): number {
  const p = wordSet(prediction);
  const g = wordSet(gold);
  if (p.size === 0 || g.size === 0) return 0;
  let same = 0;
  for (const w of p) if (g.has(w)) same++;
  const precision = same / p.size;
  const recall = same / g.size;
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}

/** 1 when answer and gold are equal after SQuAD's normalisation (lower case, no punctuation, no a/an/the), else 0. */
export function exactMatch(prediction: string, gold: string): number {
  const p = normalisedTokens(prediction, SQUAD_ARTICLES);
  const g = normalisedTokens(gold, SQUAD_ARTICLES);
  return p.length === g.length && p.every((t, i) => t === g[i]) ? 1 : 0;
}

/**
 * An answer's lexical measures. `category` is the question's LoCoMo category; without one (a question from
 * another protocol) `F1-LoCoMo` is LoCoMo's single-answer rule, as for its categories 2 and 4.
 */
export function lexicalScores(prediction: string, gold: string, category?: number): LexicalScores {
  return {
    'F1-LoCoMo': category === undefined ? stemmedF1(prediction, gold) : locomoF1(prediction, gold, category),
    'F1-set': setF1(prediction, gold),
    EM: exactMatch(prediction, gold),
  };
}
