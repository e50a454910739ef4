import { createHash } from 'node:crypto';
import { token_set_ratio } from 'fuzzball';
import { z } from 'zod';
import { passageOf } from '../../evalset/passage.js';
import type { Corpus } from '../../evalset/types.js';

/**
 * Text mapping: what a remote system returns as text (a memory it rewrote, a fact it extracted) is matched to
 * the eval set's Documents, so the Qrels can grade it. Steps, first hit wins: the hit's docId when the Corpus
 * holds it; the normalised text equal to one Document's; contained in exactly one Document's; then the best
 * fuzzy match, fuzzball's `token_set_ratio` (the fuzzywuzzy/thefuzz score, ADR 0031) at or above `fuzzy`
 * when exactly one candidate reaches the best score. What maps to nothing becomes a Returned item with a
 * content-addressed id, which the judge grades.
 *
 * `token_set_ratio` scores 100 whenever one text's words are a subset of the other's, which is what mapping a
 * fact to its memory needs and also what a text holding a memory says about the memory: "It is false that
 * <memory>", or the memory inside a page of other words, would score as the memory itself. So a text is never
 * credited to a Document it is much longer than (`maxLengthRatio`), nor to one whose negations it does not
 * share, nor to one Document when it holds two whole Documents (a concatenation); and a quote is not credited
 * where the Document negates it just before (ADR 0031).
 */
export const textMatchSchema = z
  .object({
    /** The least fuzzball token_set_ratio (0-100) that maps a text to a Document; 101 turns fuzzy matching off. */
    fuzzy: z.number().min(50).max(101).default(90),
    /** Texts with fewer word tokens are mapped only when equal to a Document's (a 2-word fact is in too many). */
    minTokens: z.number().int().min(1).max(50).default(3),
    /**
     * A text with more than this many times a Document's words is not mapped to it by a fuzzy match: it says
     * more than the memory (a memory padded, negated or joined to another), and the judge reads it instead.
     */
    maxLengthRatio: z.number().min(1).max(100).default(1.5),
  })
  .strict();
export type TextMatch = z.output<typeof textMatchSchema>;
export const TEXT_MATCH_DEFAULT: TextMatch = { fuzzy: 90, minTokens: 3, maxLengthRatio: 1.5 };

/** The id prefix of a Returned item: text a system returned that no Document of the eval set holds. */
export const RETURNED_PREFIX = 'returned:';

/** True for the id of a Returned item, never a Document id an eval set could hold by mapping (ids win first). */
export function isReturnedId(docId: string): boolean {
  return docId.startsWith(RETURNED_PREFIX);
}

/** The Returned item id of a text: its normalised form's sha256, so the same text always judges once. */
export function returnedId(normalised: string): string {
  return `${RETURNED_PREFIX}${createHash('sha256').update(normalised).digest('hex').slice(0, 16)}`;
}

/** How one returned hit was mapped. */
export type MappedBy = 'id' | 'text' | 'fuzzy' | 'returned' | 'unknown-id';

/** Candidates scored with fuzzball per text: the Documents sharing the most distinct tokens with it. */
const FUZZY_CANDIDATES = 20;

/**
 * NFKC, lower case, every run of non-letters/digits one space, trimmed: a server that re-punctuates or
 * re-cases a memory still returns the same text.
 */
export function normaliseText(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const tokensOf = (normalised: string): string[] => (normalised === '' ? [] : normalised.split(' '));

/** Words that negate, in normalised form (apostrophes are spaces, so "isn't" is "isn t": see negations). */
const NEGATIONS = new Set(
  'not no never none nobody nothing nowhere neither nor cannot false untrue incorrect dont doesnt didnt isnt wasnt arent werent cant wont couldnt shouldnt wouldnt hasnt havent hadnt aint'.split(
    ' ',
  ),
);

/**
 * How many negations `tokens` holds: the words of NEGATIONS, and a "t" after a word ending in n ("isn t"); "no"
 * before a number is an abbreviation ("passport no. 5488"), not a negation.
 */
export function negations(tokens: readonly string[]): number {
  let n = 0;
  tokens.forEach((t, i) => {
    const numbered = t === 'no' && /^\p{N}/u.test(tokens[i + 1] ?? '');
    if ((NEGATIONS.has(t) && !numbered) || (t === 't' && (tokens[i - 1] ?? '').endsWith('n'))) n++;
  });
  return n;
}

/** Words before a quote in its Document that, holding a negation, make the quote say the opposite ("isn t" is two). */
const NEGATION_WINDOW = 4;

/** The Documents of one Corpus, indexed for mapping returned text; built per Scope, asked per hit. */
export class TextMatcher {
  readonly #ids: ReadonlySet<string>;
  readonly #exact = new Map<string, string>();
  readonly #normalised: string[] = [];
  /** Per Document: its words and negations, for the length and negation checks. */
  readonly #words: number[] = [];
  readonly #negations: number[] = [];
  readonly #docIds: string[] = [];
  /** token -> positions of the Documents holding it, each once. */
  readonly #postings = new Map<string, number[]>();
  readonly #memo = new Map<string, { docId: string; by: MappedBy }>();

  constructor(
    corpus: Corpus,
    readonly settings: TextMatch,
  ) {
    this.#ids = new Set(corpus.map((d) => d.id));
    corpus.forEach((d, i) => {
      const n = normaliseText(passageOf(d));
      this.#normalised.push(n);
      this.#words.push(tokensOf(n).length);
      this.#negations.push(negations(tokensOf(n)));
      this.#docIds.push(d.id);
      for (const key of new Set([n, normaliseText(d.text)])) if (!this.#exact.has(key)) this.#exact.set(key, d.id);
      for (const t of new Set(tokensOf(n))) {
        let p = this.#postings.get(t);
        if (p === undefined) this.#postings.set(t, (p = []));
        p.push(i);
      }
    });
  }

  /** The Document a hit maps to, or its Returned item id; `unknown-id` keeps an id with no text as it came. */
  map(hit: { readonly docId?: string; readonly text?: string }): { docId: string; by: MappedBy } {
    if (hit.docId !== undefined && this.#ids.has(hit.docId)) return { docId: hit.docId, by: 'id' };
    if (hit.text === undefined || normaliseText(hit.text) === '') return { docId: hit.docId ?? '', by: 'unknown-id' };
    const n = normaliseText(hit.text);
    let m = this.#memo.get(n);
    if (m === undefined) {
      m = this.#byText(n);
      this.#memo.set(n, m);
    }
    return m;
  }

  #byText(n: string): { docId: string; by: MappedBy } {
    const exact = this.#exact.get(n);
    if (exact !== undefined) return { docId: exact, by: 'text' };
    const words = tokensOf(n);
    const tokens = [...new Set(words)];
    if (tokens.length < this.settings.minTokens) return { docId: returnedId(n), by: 'returned' };
    const contained = this.#containing(n, tokens);
    if (contained.length === 1) {
      const i = contained[0] as number;
      return this.#negatedBefore(n, i) ? { docId: returnedId(n), by: 'returned' } : { docId: this.#docIds[i] as string, by: 'text' };
    }
    const fuzzy = contained.length > 1 ? undefined : this.#fuzzy(n, words, tokens);
    if (fuzzy !== undefined) return { docId: fuzzy, by: 'fuzzy' };
    return { docId: returnedId(n), by: 'returned' };
  }

  /** Positions of the Documents whose normalised text holds `n` as whole words, from the rarest token's list. */
  #containing(n: string, tokens: readonly string[]): number[] {
    let rarest: number[] | undefined;
    for (const t of tokens) {
      const p = this.#postings.get(t);
      if (p === undefined) return [];
      if (rarest === undefined || p.length < rarest.length) rarest = p;
    }
    const needle = ` ${n} `;
    return (rarest ?? []).filter((i) => ` ${this.#normalised[i]} `.includes(needle));
  }

  /** True when Document `i` negates the quote `n` just before it ("not" + the quote): the quote says the opposite. */
  #negatedBefore(n: string, i: number): boolean {
    const doc = ` ${this.#normalised[i]} `;
    for (let at = doc.indexOf(` ${n} `); at >= 0; at = doc.indexOf(` ${n} `, at + 1)) {
      // The quote's first word goes along so that "no" before a number is read as it is; its own negations are not the window's.
      const first = tokensOf(n).slice(0, 1);
      const window = tokensOf(doc.slice(0, at).trim()).slice(-NEGATION_WINDOW);
      if (negations([...window, ...first]) - negations(first) > 0) return true;
    }
    return false;
  }

  /**
   * The one Document with the best token_set_ratio at or above the threshold among the candidates, if any. A
   * candidate the text is much longer than, or whose negations it does not share, is not scored; a text that
   * holds two whole Documents maps to neither.
   */
  #fuzzy(n: string, words: readonly string[], tokens: readonly string[]): string | undefined {
    if (this.settings.fuzzy > 100) return undefined;
    const shared = new Map<number, number>();
    for (const t of tokens) for (const i of this.#postings.get(t) ?? []) shared.set(i, (shared.get(i) ?? 0) + 1);
    const candidates = [...shared].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, FUZZY_CANDIDATES);
    if (this.#holdsTwo(n, candidates)) return undefined;
    const negated = negations(words);
    let best = -1;
    let winners: number[] = [];
    for (const [i] of candidates) {
      if (words.length > this.settings.maxLengthRatio * (this.#words[i] as number) || negated !== this.#negations[i]) continue;
      const r = token_set_ratio(n, this.#normalised[i] as string, { full_process: false });
      if (r > best) {
        best = r;
        winners = [i];
      } else if (r === best) winners.push(i);
    }
    // Two Documents equally close: mapping to either would be a guess, so the judge reads the text instead.
    return best >= this.settings.fuzzy && winners.length === 1 ? this.#docIds[winners[0] as number] : undefined;
  }

  /** True when `n` holds two candidates' whole texts (of at least minTokens words): two memories joined. */
  #holdsTwo(n: string, candidates: readonly (readonly [number, number])[]): boolean {
    const hay = ` ${n} `;
    let held = 0;
    for (const [i] of candidates)
      if ((this.#words[i] as number) >= this.settings.minTokens && hay.includes(` ${this.#normalised[i]} `) && ++held === 2) return true;
    return false;
  }
}

/** Hits mapped by each step since the counts were last taken; what the report shows as a System's mapping shares. */
export interface MappingCounts {
  byId: number;
  byText: number;
  byFuzzy: number;
  returned: number;
}
