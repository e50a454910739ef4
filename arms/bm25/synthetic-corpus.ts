import type { Document, Query } from '../../evalset/types.js';
import { createRng } from '../../harness/stats/rng.js';

/**
 * Frequency ranks 0..32 are Lucene's English stop words in rough English order; the other words are invented
 * from syllables, so no stemmer conflates two of them by accident of English morphology.
 */
const STOP_FIRST: readonly string[] = [
  'the',
  'of',
  'and',
  'to',
  'a',
  'in',
  'is',
  'that',
  'for',
  'it',
  'as',
  'was',
  'with',
  'be',
  'by',
  'on',
  'not',
  'this',
  'are',
  'at',
  'or',
  'an',
  'but',
  'they',
  'there',
  'their',
  'no',
  'if',
  'into',
  'such',
  'then',
  'these',
  'will',
];

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
  const alias = zipfAlias(vocab);
  const docRng = createRng(seed, 1);
  const draw = (): number => {
    const u = docRng.nextFloat() * vocab;
    const i = Math.floor(u);
    return u - i < alias.prob[i]! ? i : alias.alias[i]!;
  };
  const docs: Document[] = new Array<Document>(opts.documents);
  const parts: string[] = [];
  for (let d = 0; d < opts.documents; d++) {
    const len = 100 + Math.floor(docRng.nextFloat() * 101);
    parts.length = 0;
    for (let i = 0; i < len; i++) parts.push(words[draw()]!);
    // The period joins the last word before join(), so the text is one flat string: a concatenation would be
    // a rope that V8 flattens (copies) on first read, inside whichever engine reads it first.
    parts[len - 1] += '.';
    docs[d] = { id: `syn-${d}`, text: parts.join(' ') };
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

/**
 * Walker's alias table (Vose's construction) for Zipf (s = 1) over `n` ranks: one uniform draw picks a rank in
 * constant time, where a binary search over the CDF costs log n per word of a million-document corpus.
 * Vose, IEEE TSE 17(9), 1991, doi:10.1109/32.92917.
 */
function zipfAlias(n: number): { prob: Float64Array; alias: Int32Array } {
  let total = 0;
  for (let r = 0; r < n; r++) total += 1 / (r + 1);
  const prob = new Float64Array(n);
  const alias = new Int32Array(n);
  const small: number[] = [];
  const large: number[] = [];
  for (let r = 0; r < n; r++) {
    prob[r] = n / (r + 1) / total;
    (prob[r]! < 1 ? small : large).push(r);
  }
  while (small.length > 0 && large.length > 0) {
    const s = small.pop()!;
    const l = large[large.length - 1]!;
    alias[s] = l;
    prob[l] = prob[l]! + prob[s]! - 1;
    if (prob[l]! < 1) small.push(large.pop()!);
  }
  // Leftovers are 1 up to rounding: they keep their own rank.
  for (const r of [...small, ...large]) prob[r] = 1;
  return { prob, alias };
}
