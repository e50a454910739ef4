import type { Document, Query } from '../../evalset/types.js';
import { createRng } from '../../harness/stats/rng.js';

/**
 * Frequency ranks 0..32 are Lucene's English stop words in rough English order; the other words are invented
 * from syllables, so no stemmer conflates two of them by accident of English morphology.
 */
export const STOP_FIRST: readonly string[] = ['the', 'of', 'and', 'to', 'a', 'in', 'is', 'that', 'for', 'it', 'as', 'was', 'with', 'be', 'by', 'on', 'not', 'this', 'are', 'at', 'or', 'an', 'but', 'they', 'there', 'their', 'no', 'if', 'into', 'such', 'then', 'these', 'will'];

export interface SyntheticOptions {
  readonly documents: number;
  readonly queries: number;
  /** Vocabulary size; word frequency follows Zipf (s = 1) over ranks. */
  readonly vocabulary?: number;
  readonly seed?: number;
}

export interface SyntheticCorpus {
  readonly docs: Document[];
  /** 2-5 content words each, log-uniform over frequency ranks 50..20,000 (topical words, rarely the commonest). */
  readonly queries: Query[];
  /** The same queries with one of the 8 commonest stop words added in front. */
  readonly stopQueries: Query[];
}

/**
 * A seeded Zipfian corpus for benchmarks and ranking-identity tests: documents of 100-200 words drawn from a
 * Zipf (s = 1) vocabulary. Documents and queries come from separate streams of the same seed, so a larger
 * corpus keeps the smaller one as its prefix and is searched with the same queries: growth from one size to
 * the next is then growth of the corpus alone.
 */
export function syntheticCorpus(opts: SyntheticOptions): SyntheticCorpus {
  const seed = opts.seed ?? 20_260_422;
  const vocab = opts.vocabulary ?? 50_000;
  const wordRng = createRng(seed, 0);
  const syllables = ['ka', 'lo', 'mi', 'ten', 'ra', 'so', 'vel', 'dor', 'an', 'ex', 'ul', 'pri', 'ston', 'ge', 'bar', 'ni', 'que', 'tor', 'hal', 'ment'];
  const words: string[] = [...STOP_FIRST];
  const seen = new Set(words);
  while (words.length < vocab) {
    let w = '';
    const n = 2 + Math.floor(wordRng.nextFloat() * 3);
    for (let i = 0; i < n; i++) w += syllables[Math.floor(wordRng.nextFloat() * syllables.length)]!;
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  const cdf = new Float64Array(vocab);
  let total = 0;
  for (let r = 0; r < vocab; r++) cdf[r] = total += 1 / (r + 1);
  const docRng = createRng(seed, 1);
  const draw = (): number => {
    const u = docRng.nextFloat() * total;
    let lo = 0;
    let hi = vocab - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const docs: Document[] = new Array<Document>(opts.documents);
  const parts: string[] = [];
  for (let d = 0; d < opts.documents; d++) {
    const len = 100 + Math.floor(docRng.nextFloat() * 101);
    parts.length = 0;
    for (let i = 0; i < len; i++) parts.push(words[draw()]!);
    docs[d] = { id: `syn-${d}`, text: `${parts.join(' ')}.` };
  }
  const queryRng = createRng(seed, 2);
  const rand = () => queryRng.nextFloat();
  const queries: Query[] = [];
  const stopQueries: Query[] = [];
  const top = Math.min(20_000, vocab);
  for (let q = 0; q < opts.queries; q++) {
    const n = 2 + Math.floor(rand() * 4);
    const terms: string[] = [];
    while (terms.length < n) terms.push(words[Math.min(top - 1, Math.floor(50 * (top / 50) ** rand()))]!);
    queries.push({ id: `q${q}`, text: terms.join(' '), stratum: 'content' });
    const stop = STOP_FIRST[Math.floor(rand() * 8)]!;
    stopQueries.push({ id: `s${q}`, text: [stop, ...terms].join(' '), stratum: 'stop' });
  }
  return { docs, queries, stopQueries };
}
