import { z } from 'zod';
import type { Arm, ArmFactory, IndexStats, ScoredDoc } from '../types.js';
import type { Corpus, Document, Query } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import { createAnalyzer, type AnalyzerOptions } from './analyzer.js';
import { InvertedIndex, type Pruning } from './inverted-index.js';

/** Bump when a change to the analyzer or scoring changes any score for the same params. */
const ALGORITHM_VERSION = 1;

const params = z
  .object({
    /**
     * `lucene`: Lucene's EnglishAnalyzer as Anserini/Pyserini use it (UAX #29 tokenizer, possessive removal,
     * lower-case, Lucene's 33 English stop words, Porter stemmer). `simple`: runs of letters and digits,
     * lower-cased, nothing removed, no stemming.
     */
    preset: z.enum(['lucene', 'simple']).default('lucene'),
    /** Term-frequency saturation. Anserini's and Pyserini's BM25 default. */
    k1: z.number().finite().min(0).default(0.9),
    /** Document-length normalisation, 0 (none) to 1 (full). Anserini's and Pyserini's BM25 default. */
    b: z.number().min(0).max(1).default(0.4),
    /** Round document lengths through Lucene's one-byte norm as Lucene does; false scores exact lengths. */
    lossyNorms: z.boolean().default(true),
    /** `flat`: title and text as one field (BEIR "flat", Pyserini's BEIR baseline); `text`: the text only. */
    fields: z.enum(['flat', 'text']).default('flat'),
    /**
     * `keep`: Lucene's float scores; equal scores stay equal (the harness then orders ties by docId,
     * descending, as trec_eval does). `anserini`: the scores Pyserini writes to its run files, after Anserini's
     * ScoreTiesAdjusterReranker: rounded to 4 decimals, and within a run of equal scores each later document in
     * index order gets 1e-6 less, so tied documents keep Lucene's index order. NFCorpus has many duplicate
     * documents, and this order alone moves nDCG@10 by about 0.001 (ADR 0005).
     */
    scoreTies: z.enum(['keep', 'anserini']).default('keep'),
    /** Overrides the preset's stop-word list; `english-v1` is NLTK's 179 English stop words (english-stopwords.ts). */
    stopwords: z.enum(['lucene', 'english-v1', 'none']).optional(),
    /** Drop tokens shorter than this; absent: 1, none dropped (the v1 hybrid provider drops 1-character tokens: 2). */
    minTokenLength: z.number().int().min(1).optional(),
    /**
     * `none` (absent): raw BM25 scores. `query-max`: each query's scores divided by its best score, so the top hit scores
     * 1 and every score lies in (0, 1]: the v1 hybrid provider's normalisation before its 0.7/0.3 blend. The
     * ranking is unchanged.
     */
    scale: z.enum(['none', 'query-max']).optional(),
    /** Overrides the preset's stemmer. */
    stemmer: z.enum(['porter', 'none']).optional(),
    /**
     * How a query walks the postings: `none` scores them all, `wand` and `block-max-wand` skip documents that
     * provably cannot enter the top k. The hits and scores are identical (a test holds them equal); only the
     * time changes. ADR 0012.
     */
    pruning: z.enum(['none', 'wand', 'block-max-wand']).default('none'),
  })
  .strict();

export type Bm25Params = z.output<typeof params>;

function analyzerOptions(p: Bm25Params): AnalyzerOptions {
  const lucene = p.preset === 'lucene';
  return {
    tokenizer: lucene ? 'standard' : 'simple',
    possessive: lucene,
    stopwords: p.stopwords ?? (lucene ? 'lucene' : 'none'),
    stemmer: p.stemmer ?? (lucene ? 'porter' : 'none'),
    ...(p.minTokenLength === undefined ? {} : { minTokenLength: p.minTokenLength }),
  };
}

/** The indexed text of a document: BEIR's flat layout joins title and text with a separator. */
export function fieldText(doc: Document, fields: Bm25Params['fields']): string {
  return fields === 'flat' && doc.title !== undefined && doc.title !== '' ? `${doc.title}\n${doc.text}` : doc.text;
}

/**
 * Anserini's ScoreTiesAdjusterReranker over best-first scores, in Java float arithmetic: round each score to
 * 1e-4; when it is within 1e-4 of the previous (adjusted) score, subtract 1e-6 times its position in the run of
 * ties. The list's order is unchanged; only scores move, so that any later sort by score keeps it.
 */
export function anseriniTieAdjusted(scores: readonly number[]): number[] {
  const f = Math.fround;
  const scale = f(1e4);
  const eps = f(1e-6);
  const gap = f(1e-4);
  const out: number[] = [];
  let dup = 0;
  for (let i = 0; i < scores.length; i++) {
    // Java's Math.round(float) rounds half up.
    let s = f(Math.floor(f(scores[i]! * scale) + 0.5) / scale);
    if (i === 0 || f(out[i - 1]! - s) > gap) dup = 0;
    else {
      dup++;
      s = f(s - f(eps * dup));
    }
    out.push(s);
  }
  return out;
}

/**
 * In-process BM25 over an inverted index in typed arrays, exact top-k. With the defaults it reproduces
 * Pyserini's BM25 "flat" BEIR baselines (Lucene BM25Similarity k1=0.9 b=0.4, EnglishAnalyzer); see
 * docs/adr/0005-lexical-arms.md for the measured NFCorpus figures, and docs/adr/0012-bm25-scaling.md for
 * the index layout and dynamic pruning that keep queries linear in the postings read.
 */
export const bm25Arm: ArmFactory<typeof params> = {
  kind: 'bm25',
  summary: 'in-process BM25 (Lucene-compatible analyzer and scoring), exact top-k, optional WAND / block-max WAND',
  params,
  // pruning changes the time a query takes, never its hits, so it stays out of the fingerprint.
  fingerprint: (p) => {
    const { minTokenLength: _, ...analysis } = analyzerOptions(p);
    return {
      kind: 'bm25',
      v: ALGORITHM_VERSION,
      k1: p.k1,
      b: p.b,
      lossyNorms: p.lossyNorms,
      fields: p.fields,
      scoreTies: p.scoreTies,
      ...analysis,
      // Added after runs were cached: at their defaults they leave every earlier fingerprint as it was.
      ...(p.minTokenLength === undefined || p.minTokenLength === 1 ? {} : { minTokenLength: p.minTokenLength }),
      ...(p.scale === undefined || p.scale === 'none' ? {} : { scale: p.scale }),
    };
  },
  theoreticalMinScore: () => 0,
  sendsTextOffMachine: () => false,
  create: (id, p) => createBm25(id, p),
};

/** The bm25 arm with what a benchmark needs beyond the Arm interface. */
export interface Bm25Arm extends Arm {
  /** As {@link Arm.search}; `pruning` overrides the param for this query (the hits are the same). */
  search(query: Query, topK: number, pruning?: Pruning): Promise<readonly ScoredDoc[]>;
  /** Postings of the query's analysed terms (repeats once each): what exhaustive scoring reads. 0 before index. */
  postingsRead(query: Query): number;
}

export function createBm25(id: string, p: Bm25Params): Bm25Arm {
  const analyze = createAnalyzer(analyzerOptions(p));
  let index: InvertedIndex | undefined;
  let docIds: readonly string[] = [];
  return {
    id,
    async index(corpus: Corpus): Promise<IndexStats> {
      docIds = corpus.map((d) => d.id);
      // Texts one at a time: a title + text concatenation is garbage once indexed, not held for the whole corpus.
      index = new InvertedIndex(
        (function* texts() {
          for (const d of corpus) yield fieldText(d, p.fields);
        })(),
        analyze,
        { k1: p.k1, b: p.b, lossyNorms: p.lossyNorms },
      );
      return { documents: index.documents, terms: index.vocabulary.size, postings: index.postings, tokens: index.tokens };
    },
    async search(query: Query, topK: number, pruning: Pruning = p.pruning): Promise<readonly ScoredDoc[]> {
      if (index === undefined) throw new HarnessError(`arm '${id}': search called before index`);
      const hits = index.search(analyze.terms(query.text), topK, pruning);
      let scores = p.scoreTies === 'anserini' ? anseriniTieAdjusted(hits.map((h) => h.score)) : hits.map((h) => h.score);
      const top = scores[0];
      if (p.scale === 'query-max' && top !== undefined && top > 0) scores = scores.map((s) => s / top);
      return hits.map((h, i) => ({ docId: docIds[h.doc]!, score: scores[i]! }));
    },
    postingsRead(query: Query): number {
      return index === undefined ? 0 : index.postingsOf([...new Set(analyze.terms(query.text))]);
    },
    async close() {
      // The index is the arm's memory; a closed arm (like a closed FTS5 database) lets it go.
      index = undefined;
      docIds = [];
    },
  };
}
