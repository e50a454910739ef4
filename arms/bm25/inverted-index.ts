import type { Analyzer } from './analyzer.js';
import { lengthToNormByte, normByteToLength } from './small-float.js';
import { TokenTable } from './token-table.js';
import { TopK, type Hit } from './top-k.js';

export interface Bm25Scoring {
  readonly k1: number;
  readonly b: number;
  /** Score with document lengths rounded through Lucene's one-byte norm (see small-float.ts). */
  readonly lossyNorms: boolean;
}

/**
 * How a query walks the postings. `none` scores every posting of every query term; `wand` (Broder et al.,
 * CIKM 2003, doi:10.1145/956863.956944) skips documents whose summed per-term score bounds cannot enter the
 * top k; `block-max-wand` (Ding & Suel, SIGIR 2011, doi:10.1145/2009916.2010048) also bounds each block of
 * 128 postings. All three return the same hits with the same scores (ADR 0012 gives the argument).
 */
export type Pruning = 'none' | 'wand' | 'block-max-wand';

/** Work counters a caller may pass to {@link InvertedIndex.search}; each search adds to them. */
export interface SearchCounter {
  /** Documents whose full score was computed (exhaustive: every document matching a query term). */
  scored: number;
}

/** Postings per block of the block-max bounds, as in Lucene and PISA. */
const BLOCK_SHIFT = 7;
/** A doc id past every real one: an exhausted cursor. */
const NO_DOC = 0x7fffffff;
/**
 * Documents per accumulator window of exhaustive scoring: 4,096 doubles (32 KB) stay in L1/L2 however large
 * the corpus, where one accumulator per document (8 MB at a million) misses the cache on every posting.
 * Lucene's BooleanScorer windows by 2,048 for the same reason.
 */
const WINDOW = 4096;
/** Forward-buffer chunk length: growth by chunks never copies, so the buffer costs what it holds. */
const CHUNK_SHIFT = 20;
const CHUNK = 1 << CHUNK_SHIFT;
/**
 * A forward posting is buffered as one int32, `termId << TF_BITS | tf`; a term id of 2^23 or more or a tf of 255
 * or more is buffered as ESCAPED and kept exactly in a side map (rare: a vocabulary of 8 million terms, a word
 * repeated 255 times in one document).
 */
const TF_BITS = 8;
const TF_MAX = (1 << TF_BITS) - 1;
const TERM_MAX = 1 << (31 - TF_BITS);
const ESCAPED = -1;

const f = Math.fround;

/**
 * One query term's score in a document, in Lucene's float32 steps: `w - w / (1 + x)` with `x = tf * normInverse`
 * (see {@link InvertedIndex}). Non-decreasing in `x` for `w > 0`: each step is monotone and rounding to
 * float32 is monotone, so the value at a block's (or a term's) largest `x` bounds every posting under it,
 * exactly, in the same arithmetic.
 */
function termScore(w: number, x: number): number {
  return f(w - f(w / f(1 + x)));
}

/**
 * A frequency-only inverted index in flat typed arrays (CSR layout: the postings of term t are
 * `postingDocs/postingX[termStart[t] .. termStart[t+1])`, in document order), scored with Lucene's
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
 * per-term scores are summed in double in query-term order and rounded once, as Lucene's disjunction scorers
 * do. A term repeated in the query counts once per repetition (Lucene merges duplicate SHOULD clauses by
 * summing their boosts). Each posting stores `x = float32(tf * normInverse(d))` (the query-independent part of
 * its score), and each block of 128 postings and each term its largest `x`, the bounds of dynamic pruning.
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
  private readonly postingX: Float32Array;
  private readonly idf: Float32Array;
  /** Blocks of term t: `termBlock[t] .. termBlock[t+1]`; block i covers postings from termStart[t] + 128 (i - termBlock[t]). */
  private readonly termBlock: Int32Array;
  private readonly blockLast: Int32Array;
  private readonly blockMaxX: Float32Array;
  private readonly termMaxX: Float32Array;
  private readonly acc = new Float64Array(WINDOW);
  private readonly mark = new Uint8Array(WINDOW);
  private readonly touched = new Int32Array(WINDOW);

  constructor(texts: Iterable<string>, analyzer: Analyzer, scoring: Bm25Scoring) {
    const vocab = new Map<string, number>();
    // Forward postings (term id, tf) per document, in chunks; turned into the CSR arrays once df is known.
    const chunks: Int32Array[] = [];
    const escaped = new Map<number, readonly [term: number, tf: number]>();
    let fwdLen = 0;
    let docStart = new Int32Array(1024);
    let lengths = new Int32Array(1024);
    let counts = new Int32Array(1024);
    let df = new Int32Array(1024);
    const seen: number[] = [];
    let nDocs = 0;
    let tokens = 0;
    // Surface token -> term id (-1: filtered out): one hash lookup per token once a token has been seen.
    const tokenIds = new TokenTable();
    let docLength = 0;
    let text = '';
    const add = (start: number, end: number) => {
      let id = tokenIds.get(text, start, end);
      if (id === undefined) {
        const term = analyzer.term(text.slice(start, end));
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
        tokenIds.set(text, start, end, id);
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
      for (const id of seen) {
        const slot = fwdLen & (CHUNK - 1);
        if (slot === 0) chunks.push(new Int32Array(CHUNK));
        const tf = counts[id]!;
        if (tf < TF_MAX && id < TERM_MAX) chunks[chunks.length - 1]![slot] = (id << TF_BITS) | tf;
        else {
          chunks[chunks.length - 1]![slot] = ESCAPED;
          escaped.set(fwdLen, [id, tf]);
        }
        fwdLen++;
        counts[id] = 0;
        df[id] = df[id]! + 1;
      }
      seen.length = 0;
      lengths[nDocs] = docLength;
      tokens += docLength;
      nDocs++;
    }
    docStart[nDocs] = fwdLen;

    let docCount = 0;
    for (let d = 0; d < nDocs; d++) if (lengths[d]! > 0) docCount++;
    const k1 = f(scoring.k1);
    const b = f(scoring.b);
    const avgdl = f(docCount === 0 ? 0 : tokens / docCount);
    const normInverse = new Float32Array(nDocs);
    for (let d = 0; d < nDocs; d++) {
      const dl = scoring.lossyNorms ? normByteToLength(lengthToNormByte(lengths[d]!)) : lengths[d]!;
      normInverse[d] = f(1 / f(k1 * f(f(1 - b) + f(f(b * dl) / avgdl))));
    }

    const nTerms = vocab.size;
    const termStart = new Int32Array(nTerms + 1);
    const termBlock = new Int32Array(nTerms + 1);
    for (let t = 0; t < nTerms; t++) {
      termStart[t + 1] = termStart[t]! + df[t]!;
      termBlock[t + 1] = termBlock[t]! + ((df[t]! + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT);
    }
    const fill = termStart.slice(0, nTerms);
    const postingDocs = new Int32Array(fwdLen);
    const postingX = new Float32Array(fwdLen);
    for (let d = 0; d < nDocs; d++) {
      const ni = normInverse[d]!;
      for (let p = docStart[d]!, end = docStart[d + 1]!; p < end; p++) {
        const packed = chunks[p >>> CHUNK_SHIFT]![p & (CHUNK - 1)]!;
        const big = packed === ESCAPED ? escaped.get(p)! : undefined;
        const tf = big === undefined ? packed & TF_MAX : big[1];
        const slot = fill[big === undefined ? packed >>> TF_BITS : big[0]]!++;
        postingDocs[slot] = d;
        postingX[slot] = f(tf * ni);
      }
    }

    const nBlocks = termBlock[nTerms]!;
    const blockLast = new Int32Array(nBlocks);
    const blockMaxX = new Float32Array(nBlocks);
    const termMaxX = new Float32Array(nTerms);
    for (let t = 0; t < nTerms; t++) {
      let termMax = 0;
      for (let blk = termBlock[t]!, p = termStart[t]!, end = termStart[t + 1]!; p < end; blk++) {
        const stop = Math.min(end, p + (1 << BLOCK_SHIFT));
        let max = 0;
        for (; p < stop; p++) if (postingX[p]! > max) max = postingX[p]!;
        blockLast[blk] = postingDocs[stop - 1]!;
        blockMaxX[blk] = max;
        if (max > termMax) termMax = max;
      }
      termMaxX[t] = termMax;
    }

    const idf = new Float32Array(nTerms);
    for (let t = 0; t < nTerms; t++) idf[t] = Math.log(1 + (docCount - df[t]! + 0.5) / (df[t]! + 0.5));

    this.documents = nDocs;
    this.vocabulary = vocab;
    this.tokens = tokens;
    this.docCount = docCount;
    this.termStart = termStart;
    this.postingDocs = postingDocs;
    this.postingX = postingX;
    this.idf = idf;
    this.termBlock = termBlock;
    this.blockLast = blockLast;
    this.blockMaxX = blockMaxX;
    this.termMaxX = termMaxX;
  }

  get postings(): number {
    return this.postingDocs.length;
  }

  /** Number of postings of the analysed query terms: the work of exhaustive scoring. */
  postingsOf(queryTerms: readonly string[]): number {
    let n = 0;
    for (const term of queryTerms) {
      const id = this.vocabulary.get(term);
      if (id !== undefined) n += this.termStart[id + 1]! - this.termStart[id]!;
    }
    return n;
  }

  /**
   * The `topK` best documents for the analysed query terms (duplicates count once each), best first; among
   * equal scores the earlier-indexed document wins a place in the top k, as in Lucene. Documents matching no
   * term are never returned. `pruning` changes only how many documents are scored, never the hits.
   */
  search(queryTerms: readonly string[], topK: number, pruning: Pruning = 'none', counter?: SearchCounter): Hit[] {
    const ids: number[] = [];
    const counts: number[] = [];
    for (const term of queryTerms) {
      const id = this.vocabulary.get(term);
      if (id === undefined) continue;
      const i = ids.indexOf(id);
      if (i < 0) {
        ids.push(id);
        counts.push(1);
      } else counts[i]!++;
    }
    if (ids.length === 0 || topK <= 0) return [];
    const weights = new Float64Array(ids.length);
    for (let i = 0; i < ids.length; i++) weights[i] = f(counts[i]! * this.idf[ids[i]!]!);
    const top = new TopK(Math.min(topK, this.documents));
    const scored = pruning === 'none' ? this.exhaustive(ids, weights, top) : this.wand(ids, weights, top, pruning === 'block-max-wand');
    if (counter !== undefined) counter.scored += scored;
    return top.hits();
  }

  /**
   * Term-at-a-time over windows of {@link WINDOW} documents: every posting is read once, in order, and adds into
   * a window-sized accumulator, so the cost is linear in the postings read whatever the corpus size.
   */
  private exhaustive(ids: readonly number[], weights: Float64Array, top: TopK): number {
    const { acc, mark, touched, postingDocs, postingX } = this;
    const n = ids.length;
    const pos = new Int32Array(n);
    const end = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      pos[i] = this.termStart[ids[i]!]!;
      end[i] = this.termStart[ids[i]! + 1]!;
    }
    let scored = 0;
    for (;;) {
      let base = NO_DOC;
      for (let i = 0; i < n; i++) if (pos[i]! < end[i]! && postingDocs[pos[i]!]! < base) base = postingDocs[pos[i]!]!;
      if (base === NO_DOC) return scored;
      const limit = base + WINDOW;
      let nTouched = 0;
      for (let i = 0; i < n; i++) {
        const w = weights[i]!;
        let p = pos[i]!;
        for (const e = end[i]!; p < e; p++) {
          const d = postingDocs[p]!;
          if (d >= limit) break;
          const j = d - base;
          if (mark[j] === 0) {
            mark[j] = 1;
            touched[nTouched++] = j;
          }
          acc[j]! += termScore(w, postingX[p]!);
        }
        pos[i] = p;
      }
      scored += nTouched;
      for (let t = 0; t < nTouched; t++) {
        const j = touched[t]!;
        top.offer(f(acc[j]!), base + j);
        acc[j] = 0;
        mark[j] = 0;
      }
    }
  }

  /**
   * Document-at-a-time WAND, optionally block-max. Cursors are kept sorted by current document; the pivot is
   * the first cursor at which the summed upper bounds could beat the k-th score θ. Documents are visited in
   * increasing order, so a new document enters the top k only with a score strictly above θ (at equal score
   * the earlier document already there wins): a document whose bound is at most θ is skipped, exactly.
   * Bounds are summed in double in another order than the scores they bound, so they are inflated by
   * `slack` = 1 + n 2^-48, above the worst relative error, (1 + n u) / (1 - n u) with u = 2^-53, of two n-term
   * double sums of the same non-negative values.
   */
  private wand(ids: readonly number[], weights: Float64Array, top: TopK, blockMax: boolean): number {
    const { postingDocs, postingX, blockLast, blockMaxX, termBlock, termStart } = this;
    const n = ids.length;
    const slack = 1 + n * 2 ** -48;
    const pos = new Int32Array(n);
    const end = new Int32Array(n);
    const first = new Int32Array(n);
    const blockBase = new Int32Array(n);
    const cur = new Int32Array(n);
    const ub = new Float64Array(n);
    const order = new Int32Array(n);
    const lastBlock = new Int32Array(n);
    // Per cursor, the block last bounded for block-max and its score bound.
    const shallow = new Int32Array(n).fill(-1);
    const shallowBound = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t = ids[i]!;
      pos[i] = first[i] = termStart[t]!;
      end[i] = termStart[t + 1]!;
      blockBase[i] = termBlock[t]!;
      cur[i] = postingDocs[pos[i]!]!;
      ub[i] = termScore(weights[i]!, this.termMaxX[t]!);
      order[i] = i;
      lastBlock[i] = termBlock[t + 1]! - 1;
    }
    const blockOf = (i: number, p: number) => blockBase[i]! + ((p - first[i]!) >> BLOCK_SHIFT);
    /** Moves cursor i to its first posting at or after `target`, skipping whole blocks by their last doc. */
    const advance = (i: number, target: number) => {
      if (cur[i]! >= target) return;
      const e = end[i]!;
      let blk = blockOf(i, pos[i]!);
      const lastBlk = lastBlock[i]!;
      while (blk < lastBlk && blockLast[blk]! < target) blk++;
      if (blockLast[blk]! < target) {
        pos[i] = e;
        cur[i] = NO_DOC;
        return;
      }
      let lo = Math.max(pos[i]!, first[i]! + ((blk - blockBase[i]!) << BLOCK_SHIFT));
      let hi = Math.min(e - 1, lo + (1 << BLOCK_SHIFT) - 1);
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (postingDocs[mid]! < target) lo = mid + 1;
        else hi = mid;
      }
      pos[i] = lo;
      cur[i] = postingDocs[lo]!;
    };
    const next = (i: number) => {
      const p = ++pos[i]!;
      cur[i] = p < end[i]! ? postingDocs[p]! : NO_DOC;
    };
    let scored = 0;
    for (;;) {
      for (let a = 1; a < n; a++) {
        const c = order[a]!;
        const d = cur[c]!;
        let b = a - 1;
        for (; b >= 0 && cur[order[b]!]! > d; b--) order[b + 1] = order[b]!;
        order[b + 1] = c;
      }
      const theta = top.threshold();
      let pivot = -1;
      let sum = 0;
      for (let a = 0; a < n; a++) {
        const c = order[a]!;
        if (cur[c] === NO_DOC) break;
        sum += ub[c]!;
        if (sum * slack > theta) {
          pivot = a;
          break;
        }
      }
      if (pivot < 0) return scored;
      const pivotDoc = cur[order[pivot]!]!;
      let last = pivot;
      while (last + 1 < n && cur[order[last + 1]!] === pivotDoc) last++;
      if (blockMax) {
        // Docs in [pivotDoc, upto) can only hold terms of cursors 0..last, each bounded by its block there.
        let upto = last + 1 < n ? cur[order[last + 1]!]! : NO_DOC;
        let bound = 0;
        for (let a = 0; a <= last; a++) {
          const c = order[a]!;
          // Pivot documents never decrease, so the block found last time is never past the one sought now.
          let blk = Math.max(shallow[c]!, blockOf(c, pos[c]!));
          const lastBlk = lastBlock[c]!;
          while (blk < lastBlk && blockLast[blk]! < pivotDoc) blk++;
          if (blockLast[blk]! < pivotDoc) continue;
          if (blk !== shallow[c]) {
            shallow[c] = blk;
            shallowBound[c] = termScore(weights[c]!, blockMaxX[blk]!);
          }
          bound += shallowBound[c]!;
          if (blockLast[blk]! + 1 < upto) upto = blockLast[blk]! + 1;
        }
        if (bound * slack <= theta) {
          for (let a = 0; a <= last; a++) advance(order[a]!, upto);
          continue;
        }
      }
      if (cur[order[0]!] === pivotDoc) {
        let s = 0;
        for (let i = 0; i < n; i++) if (cur[i] === pivotDoc) s += termScore(weights[i]!, postingX[pos[i]!]!);
        top.offer(f(s), pivotDoc);
        scored++;
        for (let i = 0; i < n; i++) if (cur[i] === pivotDoc) next(i);
      } else {
        for (let a = 0; a < pivot; a++) advance(order[a]!, pivotDoc);
      }
    }
  }
}

function grow(a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(size);
  out.set(a);
  return out;
}
