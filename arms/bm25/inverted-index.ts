import type { Analyzer } from './analyzer.js';
import { lengthToNormByte, normByteToLength } from './small-float.js';
import { TermScanner } from './term-scanner.js';
import { ForwardBuffer } from './forward-buffer.js';
import { HarnessError } from '../../harness/errors.js';
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
/**
 * A posting is one uint32, `doc << TF_BITS | min(tf, TF_MAX)`; a tf of TF_MAX or more is kept exactly in a side
 * map (rare: a word repeated 255 times in one document). So documents number at most 2^24.
 */
const TF_BITS = 8;
const TF_MAX = (1 << TF_BITS) - 1;
const MAX_DOCS = 2 ** (32 - TF_BITS) - 1;

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
  /** Per posting `doc << TF_BITS | min(tf, TF_MAX)`, the postings of each term in document order. */
  private readonly postingDocTf: Uint32Array;
  /** Exact tf of the postings whose tf field is TF_MAX. */
  private readonly bigTf: ReadonlyMap<number, number>;
  /** Per document, `1 / (k1 (1 - b + b dl / avgdl))` in float32: a posting's `x` is `float32(tf * normInverse)`. */
  private readonly normInverse: Float32Array;
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
    const scanner = new TermScanner(analyzer);
    const forward = collect(texts, scanner);
    const { nDocs, lengths, df } = forward;
    const nTerms = scanner.vocabulary.size;

    let docCount = 0;
    let tokens = 0;
    for (let d = 0; d < nDocs; d++) {
      tokens += lengths[d]!;
      if (lengths[d]! > 0) docCount++;
    }
    const k1 = f(scoring.k1);
    const b = f(scoring.b);
    const avgdl = f(docCount === 0 ? 0 : tokens / docCount);
    const normInverse = new Float32Array(nDocs);
    for (let d = 0; d < nDocs; d++) {
      const dl = scoring.lossyNorms ? normByteToLength(lengthToNormByte(lengths[d]!)) : lengths[d]!;
      normInverse[d] = f(1 / f(k1 * f(f(1 - b) + f(f(b * dl) / avgdl))));
    }

    const termStart = new Int32Array(nTerms + 1);
    const termBlock = new Int32Array(nTerms + 1);
    for (let t = 0; t < nTerms; t++) {
      termStart[t + 1] = termStart[t]! + df[t]!;
      termBlock[t + 1] = termBlock[t]! + ((df[t]! + (1 << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT);
    }
    const { postingDocTf, bigTf } = invert(forward, termStart);
    const bounds = blockBounds(postingDocTf, bigTf, normInverse, termStart, termBlock);

    const idf = new Float32Array(nTerms);
    for (let t = 0; t < nTerms; t++) idf[t] = Math.log(1 + (docCount - df[t]! + 0.5) / (df[t]! + 0.5));

    this.documents = nDocs;
    this.vocabulary = scanner.vocabulary;
    this.tokens = tokens;
    this.docCount = docCount;
    this.termStart = termStart;
    this.postingDocTf = postingDocTf;
    this.bigTf = bigTf;
    this.normInverse = normInverse;
    this.idf = idf;
    this.termBlock = termBlock;
    this.blockLast = bounds.blockLast;
    this.blockMaxX = bounds.blockMaxX;
    this.termMaxX = bounds.termMaxX;
  }

  /** `x = float32(tf * normInverse(d))` of the posting at `p`, whose packed value is `v`: its score's query-independent part. */
  private x(p: number, v: number): number {
    const tf = v & TF_MAX;
    return f((tf === TF_MAX ? this.bigTf.get(p)! : tf) * this.normInverse[v >>> TF_BITS]!);
  }

  get postings(): number {
    return this.postingDocTf.length;
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
    const { acc, mark, touched, postingDocTf } = this;
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
      for (let i = 0; i < n; i++) if (pos[i]! < end[i]! && postingDocTf[pos[i]!]! >>> TF_BITS < base) base = postingDocTf[pos[i]!]! >>> TF_BITS;
      if (base === NO_DOC) return scored;
      const limit = base + WINDOW;
      let nTouched = 0;
      for (let i = 0; i < n; i++) {
        const w = weights[i]!;
        let p = pos[i]!;
        for (const e = end[i]!; p < e; p++) {
          const v = postingDocTf[p]!;
          const d = v >>> TF_BITS;
          if (d >= limit) break;
          const j = d - base;
          if (mark[j] === 0) {
            mark[j] = 1;
            touched[nTouched++] = j;
          }
          acc[j]! += termScore(w, this.x(p, v));
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

  /** One cursor per query term at its first posting, with its term's score bound; `order` is by cursor. */
  private cursors(ids: readonly number[], weights: Float64Array): WandCursors {
    const { postingDocTf, termBlock, termStart, termMaxX } = this;
    const n = ids.length;
    const c: WandCursors = {
      pos: new Int32Array(n),
      end: new Int32Array(n),
      first: new Int32Array(n),
      blockBase: new Int32Array(n),
      cur: new Int32Array(n),
      ub: new Float64Array(n),
      order: new Int32Array(n),
      lastBlock: new Int32Array(n),
      shallow: new Int32Array(n).fill(-1),
      shallowBound: new Float64Array(n),
    };
    for (let i = 0; i < n; i++) {
      const t = ids[i]!;
      c.pos[i] = c.first[i] = termStart[t]!;
      c.end[i] = termStart[t + 1]!;
      c.blockBase[i] = termBlock[t]!;
      c.cur[i] = postingDocTf[c.pos[i]!]! >>> TF_BITS;
      c.ub[i] = termScore(weights[i]!, termMaxX[t]!);
      c.order[i] = i;
      c.lastBlock[i] = termBlock[t + 1]! - 1;
    }
    return c;
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
    const { postingDocTf, blockLast, blockMaxX } = this;
    const n = ids.length;
    const slack = 1 + n * 2 ** -48;
    const cursors = this.cursors(ids, weights);
    const { pos, end, first, blockBase, cur, ub, order, lastBlock, shallow, shallowBound } = cursors;
    const blockOf = (i: number, p: number) => blockBase[i]! + ((p - first[i]!) >> BLOCK_SHIFT);
    const advance = (i: number, target: number) => advanceCursor(cursors, i, target, blockLast, postingDocTf);
    const next = (i: number) => {
      const p = ++pos[i]!;
      cur[i] = p < end[i]! ? postingDocTf[p]! >>> TF_BITS : NO_DOC;
    };
    let scored = 0;
    for (;;) {
      sortByDoc(order, cur);
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
        for (let i = 0; i < n; i++) if (cur[i] === pivotDoc) s += termScore(weights[i]!, this.x(pos[i]!, postingDocTf[pos[i]!]!));
        top.offer(f(s), pivotDoc);
        scored++;
        for (let i = 0; i < n; i++) if (cur[i] === pivotDoc) next(i);
      } else {
        for (let a = 0; a < pivot; a++) advance(order[a]!, pivotDoc);
      }
    }
  }
}

/** WAND's per-cursor state, one entry per distinct query term (see {@link InvertedIndex.cursors}). */
interface WandCursors {
  /** Current posting, one past the last, and the first posting of the cursor's term. */
  readonly pos: Int32Array;
  readonly end: Int32Array;
  readonly first: Int32Array;
  /** The term's first and last block. */
  readonly blockBase: Int32Array;
  readonly lastBlock: Int32Array;
  /** Current document, NO_DOC once exhausted. */
  readonly cur: Int32Array;
  /** The term's score bound over all its postings. */
  readonly ub: Float64Array;
  /** Cursor indices, sorted by current document before each pivot search. */
  readonly order: Int32Array;
  /** The block last bounded for block-max (-1: none yet) and its score bound. */
  readonly shallow: Int32Array;
  readonly shallowBound: Float64Array;
}

/** Moves cursor i to its first posting at or after `target`, skipping whole blocks by their last doc. */
function advanceCursor(c: WandCursors, i: number, target: number, blockLast: Int32Array, postingDocTf: Uint32Array): void {
  const { pos, end, first, blockBase, cur } = c;
  if (cur[i]! >= target) return;
  const e = end[i]!;
  let blk = blockBase[i]! + ((pos[i]! - first[i]!) >> BLOCK_SHIFT);
  const lastBlk = c.lastBlock[i]!;
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
    if (postingDocTf[mid]! >>> TF_BITS < target) lo = mid + 1;
    else hi = mid;
  }
  pos[i] = lo;
  cur[i] = postingDocTf[lo]! >>> TF_BITS;
}

/** Insertion sort of `order` by current document: between pivots only a few cursors move, so it is nearly sorted. */
function sortByDoc(order: Int32Array, cur: Int32Array): void {
  for (let a = 1; a < order.length; a++) {
    const c = order[a]!;
    const d = cur[c]!;
    let b = a - 1;
    for (; b >= 0 && cur[order[b]!]! > d; b--) order[b + 1] = order[b]!;
    order[b + 1] = c;
  }
}

/** What the first pass over the texts leaves: forward postings, per document its length and distinct terms, per term its df. */
interface Collected {
  readonly postings: ForwardBuffer;
  readonly nDocs: number;
  /** Indexed tokens per document (its dl), `nDocs` of them. */
  readonly lengths: Int32Array;
  /** Distinct terms per document: its number of forward postings. */
  readonly distinct: Int32Array;
  /** Documents per term (df), one per vocabulary entry at least. */
  readonly df: Int32Array;
}

/** Tokenizes and analyses every text once, counting each document's terms into forward postings. */
function collect(texts: Iterable<string>, scanner: TermScanner): Collected {
  const postings = new ForwardBuffer();
  let lengths = new Int32Array(1024);
  let distinct = new Int32Array(1024);
  let counts = new Int32Array(1024);
  let df = new Int32Array(1024);
  let seen = new Int32Array(1024);
  let nDocs = 0;
  for (const text of texts) {
    if (nDocs === lengths.length) {
      lengths = grow(lengths, lengths.length * 2);
      distinct = grow(distinct, distinct.length * 2);
    }
    const docLength = scanner.scan(text);
    const ids = scanner.ids;
    const nTerms = scanner.vocabulary.size;
    if (nTerms > counts.length) {
      const size = Math.max(nTerms, counts.length * 2);
      counts = grow(counts, size);
      df = grow(df, size);
      seen = grow(seen, size);
    }
    let nSeen = 0;
    for (let k = 0; k < docLength; k++) {
      const id = ids[k]!;
      const c = counts[id]!;
      if (c === 0) seen[nSeen++] = id;
      counts[id] = c + 1;
    }
    for (let k = 0; k < nSeen; k++) {
      const id = seen[k]!;
      postings.push(id, counts[id]!);
      counts[id] = 0;
      df[id]!++;
    }
    lengths[nDocs] = docLength;
    distinct[nDocs++] = nSeen;
  }
  if (nDocs > MAX_DOCS) throw new HarnessError(`bm25: ${nDocs} documents; this index holds at most ${MAX_DOCS}: split the corpus`);
  return { postings, nDocs, lengths, distinct, df };
}

/** Lays the forward postings out by term (CSR at `termStart`), each term's in document order; reads them once. */
function invert(forward: Collected, termStart: Int32Array): { postingDocTf: Uint32Array; bigTf: Map<number, number> } {
  const { postings, nDocs, distinct } = forward;
  const postingDocTf = new Uint32Array(postings.length);
  const bigTf = new Map<number, number>();
  const fill = termStart.slice(0, termStart.length - 1);
  const reader = postings.reader();
  for (let d = 0; d < nDocs; d++) {
    for (let k = distinct[d]!; k > 0; k--) {
      reader.next();
      const tf = reader.tf;
      const slot = fill[reader.term]!++;
      postingDocTf[slot] = (d << TF_BITS) | (tf < TF_MAX ? tf : TF_MAX);
      if (tf >= TF_MAX) bigTf.set(slot, tf);
    }
  }
  reader.close();
  return { postingDocTf, bigTf };
}

/**
 * Per block of 128 postings its last document and largest `x`, per term its largest `x`: the bounds of WAND and
 * block-max WAND, in the same float32 arithmetic as the scores they bound.
 */
function blockBounds(postingDocTf: Uint32Array, bigTf: ReadonlyMap<number, number>, normInverse: Float32Array, termStart: Int32Array, termBlock: Int32Array) {
  const nTerms = termStart.length - 1;
  const nBlocks = termBlock[nTerms]!;
  const blockLast = new Int32Array(nBlocks);
  const blockMaxX = new Float32Array(nBlocks);
  const termMaxX = new Float32Array(nTerms);
  for (let t = 0; t < nTerms; t++) {
    let termMax = 0;
    for (let blk = termBlock[t]!, p = termStart[t]!, end = termStart[t + 1]!; p < end; blk++) {
      const stop = Math.min(end, p + (1 << BLOCK_SHIFT));
      let max = 0;
      for (; p < stop; p++) {
        const v = postingDocTf[p]!;
        const tf = v & TF_MAX;
        const x = f((tf === TF_MAX ? bigTf.get(p)! : tf) * normInverse[v >>> TF_BITS]!);
        if (x > max) max = x;
      }
      blockLast[blk] = postingDocTf[stop - 1]! >>> TF_BITS;
      blockMaxX[blk] = max;
      if (max > termMax) termMax = max;
    }
    termMaxX[t] = termMax;
  }
  return { blockLast, blockMaxX, termMaxX };
}

function grow(a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(size);
  out.set(a);
  return out;
}
