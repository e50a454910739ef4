import type { Analyzer } from './analyzer.js';
import { lengthToNormByte, normByteToLength } from './small-float.js';

export interface Bm25Scoring {
  readonly k1: number;
  readonly b: number;
  /** Score with document lengths rounded through Lucene's one-byte norm (see small-float.ts). */
  readonly lossyNorms: boolean;
}

export interface Hit {
  /** Position of the document in the indexed corpus. */
  readonly doc: number;
  readonly score: number;
}

/**
 * A frequency-only inverted index in flat typed arrays (CSR layout: the postings of term t are
 * `postingDocs/postingTfs[termStart[t] .. termStart[t+1])`, in document order), scored with Lucene's
 * `BM25Similarity` (Lucene >= 8) in its float32 arithmetic:
 *
 *   score(q, d) = sum over distinct query terms t of  w_t - w_t / (1 + tf(t,d) * normInverse(d))
 *   w_t = count of t in the query * idf(t),  idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))
 *   normInverse(d) = 1 / (k1 * ((1 - b) + b * dl(d) / avgdl))
 *
 * which equals w_t * tf / (tf + k1 * (1 - b + b * dl / avgdl)): classic BM25 without the (k1 + 1) factor that
 * Lucene 8 dropped (it does not change the ranking). N is the number of documents with at least one term,
 * n_t the number containing t, dl the number of indexed tokens (stop words excluded), avgdl the mean dl over
 * those N documents. Each step is rounded to float32 as Java does, so scores, and hence ties, equal Lucene's;
 * per-term scores are summed in double and rounded once, as Lucene's disjunction scorers do. A term repeated
 * in the query counts once per repetition (Lucene merges duplicate SHOULD clauses by summing their boosts).
 * Robertson et al., "Okapi at TREC-3", 1994; Lucene `BM25Similarity`, `SmallFloat`.
 */
export class InvertedIndex {
  readonly documents: number;
  readonly vocabulary: ReadonlyMap<string, number>;
  readonly tokens: number;
  /** Documents with at least one indexed term (Lucene's docCount, the N of idf). */
  readonly docCount: number;
  private readonly termStart: Int32Array;
  private readonly postingDocs: Int32Array;
  private readonly postingTfs: Int32Array;
  private readonly normInverse: Float32Array;
  private readonly idf: Float32Array;
  private readonly acc: Float64Array;
  private readonly touched: Int32Array;

  constructor(texts: Iterable<string>, analyzer: Analyzer, scoring: Bm25Scoring) {
    const vocab = new Map<string, number>();
    let fwdTerms = new Int32Array(1 << 16);
    let fwdTfs = new Int32Array(1 << 16);
    let fwdLen = 0;
    let docStart = new Int32Array(1024);
    let lengths = new Int32Array(1024);
    let counts = new Int32Array(1024);
    let df = new Int32Array(1024);
    const seen: number[] = [];
    let nDocs = 0;
    let tokens = 0;
    // Surface token -> term id (-1: filtered out): one hash lookup per token once a token has been seen.
    const tokenIds = new Map<string, number>();
    let docLength = 0;
    let text = '';
    const add = (start: number, end: number) => {
      const token = text.slice(start, end);
      let id = tokenIds.get(token);
      if (id === undefined) {
        const term = analyzer.term(token);
        if (term === null) id = -1;
        else {
          id = vocab.get(term);
          if (id === undefined) {
            id = vocab.size;
            vocab.set(term, id);
            if (id >= counts.length) {
              counts = grow(counts, counts.length * 2);
              df = grow(df, df.length * 2);
            }
          }
        }
        tokenIds.set(token, id);
      }
      if (id < 0) return;
      docLength++;
      const c = counts[id]!;
      if (c === 0) seen.push(id);
      counts[id] = c + 1;
    };
    for (const t of texts) {
      text = t;
      if (nDocs + 1 >= docStart.length) {
        docStart = grow(docStart, docStart.length * 2);
        lengths = grow(lengths, lengths.length * 2);
      }
      docStart[nDocs] = fwdLen;
      docLength = 0;
      analyzer.tokenize(text, add);
      if (fwdLen + seen.length > fwdTerms.length) {
        const size = Math.max(fwdTerms.length * 2, fwdLen + seen.length);
        fwdTerms = grow(fwdTerms, size);
        fwdTfs = grow(fwdTfs, size);
      }
      for (const id of seen) {
        fwdTerms[fwdLen] = id;
        fwdTfs[fwdLen++] = counts[id]!;
        counts[id] = 0;
        df[id] = df[id]! + 1;
      }
      seen.length = 0;
      lengths[nDocs] = docLength;
      tokens += docLength;
      nDocs++;
    }
    docStart[nDocs] = fwdLen;

    const nTerms = vocab.size;
    const termStart = new Int32Array(nTerms + 1);
    for (let t = 0; t < nTerms; t++) termStart[t + 1] = termStart[t]! + df[t]!;
    const fill = termStart.slice(0, nTerms);
    const postingDocs = new Int32Array(fwdLen);
    const postingTfs = new Int32Array(fwdLen);
    for (let d = 0; d < nDocs; d++) {
      for (let p = docStart[d]!, end = docStart[d + 1]!; p < end; p++) {
        const slot = fill[fwdTerms[p]!]!++;
        postingDocs[slot] = d;
        postingTfs[slot] = fwdTfs[p]!;
      }
    }

    let docCount = 0;
    for (let d = 0; d < nDocs; d++) if (lengths[d]! > 0) docCount++;
    const f = Math.fround;
    const k1 = f(scoring.k1);
    const b = f(scoring.b);
    const avgdl = f(docCount === 0 ? 0 : tokens / docCount);
    const normInverse = new Float32Array(nDocs);
    for (let d = 0; d < nDocs; d++) {
      const dl = scoring.lossyNorms ? normByteToLength(lengthToNormByte(lengths[d]!)) : lengths[d]!;
      normInverse[d] = f(1 / f(k1 * f(f(1 - b) + f(f(b * dl) / avgdl))));
    }
    const idf = new Float32Array(nTerms);
    for (let t = 0; t < nTerms; t++) idf[t] = Math.log(1 + (docCount - df[t]! + 0.5) / (df[t]! + 0.5));

    this.documents = nDocs;
    this.vocabulary = vocab;
    this.tokens = tokens;
    this.docCount = docCount;
    this.termStart = termStart;
    this.postingDocs = postingDocs;
    this.postingTfs = postingTfs;
    this.normInverse = normInverse;
    this.idf = idf;
    this.acc = new Float64Array(nDocs);
    this.touched = new Int32Array(nDocs);
  }

  get postings(): number {
    return this.postingDocs.length;
  }

  /**
   * The `topK` best documents for the analysed query terms (duplicates count once each), best first; among
   * equal scores the earlier-indexed document wins a place in the top k, as in Lucene. Documents matching no
   * term are never returned.
   */
  search(queryTerms: readonly string[], topK: number): Hit[] {
    const weights = new Map<number, number>();
    for (const term of queryTerms) {
      const id = this.vocabulary.get(term);
      if (id !== undefined) weights.set(id, (weights.get(id) ?? 0) + 1);
    }
    if (weights.size === 0 || topK <= 0) return [];
    const f = Math.fround;
    const { acc, touched, postingDocs, postingTfs, normInverse } = this;
    let nTouched = 0;
    for (const [id, count] of weights) {
      const w = f(count * this.idf[id]!);
      for (let p = this.termStart[id]!, end = this.termStart[id + 1]!; p < end; p++) {
        const d = postingDocs[p]!;
        if (acc[d] === 0) touched[nTouched++] = d;
        acc[d]! += f(w - f(w / f(1 + f(postingTfs[p]! * normInverse[d]!))));
      }
    }
    const hits = selectTop(acc, touched, nTouched, topK);
    for (let i = 0; i < nTouched; i++) acc[touched[i]!] = 0;
    return hits;
  }
}

/**
 * Exact top-k over the touched documents with a binary min-heap keyed by (score, earlier document wins).
 * A touched document always has a positive score: idf > 0 and tf >= 1 make every term contribution positive.
 */
function selectTop(acc: Float64Array, touched: Int32Array, nTouched: number, topK: number): Hit[] {
  const k = Math.min(topK, nTouched);
  const heapDoc = new Int32Array(k);
  const heapScore = new Float64Array(k);
  let size = 0;
  // "a ranks below b": lower score, or equal score and later document.
  const below = (sa: number, da: number, sb: number, db: number) => sa < sb || (sa === sb && da > db);
  const siftDown = (i: number) => {
    const s = heapScore[i]!;
    const d = heapDoc[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      const c = r < size && below(heapScore[r]!, heapDoc[r]!, heapScore[l]!, heapDoc[l]!) ? r : l;
      if (!below(heapScore[c]!, heapDoc[c]!, s, d)) break;
      heapScore[i] = heapScore[c]!;
      heapDoc[i] = heapDoc[c]!;
      i = c;
    }
    heapScore[i] = s;
    heapDoc[i] = d;
  };
  for (let t = 0; t < nTouched; t++) {
    const d = touched[t]!;
    const s = Math.fround(acc[d]!);
    if (size < k) {
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!below(s, d, heapScore[parent]!, heapDoc[parent]!)) break;
        heapScore[i] = heapScore[parent]!;
        heapDoc[i] = heapDoc[parent]!;
        i = parent;
      }
      heapScore[i] = s;
      heapDoc[i] = d;
    } else if (below(heapScore[0]!, heapDoc[0]!, s, d)) {
      heapScore[0] = s;
      heapDoc[0] = d;
      siftDown(0);
    }
  }
  const hits: Hit[] = new Array<Hit>(size);
  for (let i = 0; i < size; i++) hits[i] = { doc: heapDoc[i]!, score: heapScore[i]! };
  hits.sort((x, y) => y.score - x.score || x.doc - y.doc);
  return hits;
}

function grow(a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(size);
  out.set(a);
  return out;
}
