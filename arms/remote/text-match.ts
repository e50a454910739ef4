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
 */
export const textMatchSchema = z
  .object({
    /** The least fuzzball token_set_ratio (0-100) that maps a text to a Document; 101 turns fuzzy matching off. */
    fuzzy: z.number().min(50).max(101).default(90),
    /** Texts with fewer word tokens are mapped only when equal to a Document's (a 2-word fact is in too many). */
    minTokens: z.number().int().min(1).max(50).default(3),
  })
  .strict();
export type TextMatch = z.output<typeof textMatchSchema>;
export const TEXT_MATCH_DEFAULT: TextMatch = { fuzzy: 90, minTokens: 3 };

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

/** The Documents of one Corpus, indexed for mapping returned text; built per Scope, asked per hit. */
export class TextMatcher {
  readonly #ids: ReadonlySet<string>;
  readonly #exact = new Map<string, string>();
  readonly #normalised: string[] = [];
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
    const tokens = [...new Set(tokensOf(n))];
    if (tokens.length < this.settings.minTokens) return { docId: returnedId(n), by: 'returned' };
    const contained = this.#containing(n, tokens);
    if (contained.length === 1) return { docId: this.#docIds[contained[0] as number] as string, by: 'text' };
    const fuzzy = contained.length > 1 ? undefined : this.#fuzzy(n, tokens);
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

  /** The one Document with the best token_set_ratio at or above the threshold among the candidates, if any. */
  #fuzzy(n: string, tokens: readonly string[]): string | undefined {
    if (this.settings.fuzzy > 100) return undefined;
    const shared = new Map<number, number>();
    for (const t of tokens) for (const i of this.#postings.get(t) ?? []) shared.set(i, (shared.get(i) ?? 0) + 1);
    const candidates = [...shared].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, FUZZY_CANDIDATES);
    let best = -1;
    let winners: number[] = [];
    for (const [i] of candidates) {
      const r = token_set_ratio(n, this.#normalised[i] as string, { full_process: false });
      if (r > best) {
        best = r;
        winners = [i];
      } else if (r === best) winners.push(i);
    }
    // Two Documents equally close: mapping to either would be a guess, so the judge reads the text instead.
    return best >= this.settings.fuzzy && winners.length === 1 ? this.#docIds[winners[0] as number] : undefined;
  }
}

/** Hits mapped by each step since the counts were last taken; what the report shows as a System's mapping shares. */
export interface MappingCounts {
  byId: number;
  byText: number;
  byFuzzy: number;
  returned: number;
}
