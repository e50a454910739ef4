/**
 * The one ranking convention of the workbench (docs/adr/0001-tie-order.md): documents sorted by score
 * descending, ties broken by docId descending in byte order — trec_eval's `comp_sim_docno`
 * (`strcmp(docno2, docno1)` on the UTF-8 bytes). Scores are IEEE doubles, as trec_eval ≥ 9.0.8 holds them.
 */

/** Relevance value of a retrieved document that has no qrels entry (trec_eval RELVALUE_NONPOOL). */
export const REL_NONPOOL = -1;
/** Relevance value of a retrieved document whose qrels grade is negative (trec_eval RELVALUE_UNJUDGED). */
export const REL_UNJUDGED = -2;

/**
 * Compares two ids in UTF-8 byte order (= Unicode code point order), as C `strcmp` does on UTF-8 text.
 * JS `<` compares UTF-16 code units, which disagrees for astral characters against U+E000..U+FFFF.
 */
export function compareIds(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) {
      if (ca >= 0xd800 && cb >= 0xd800) return codePointRank(ca) - codePointRank(cb);
      return ca - cb;
    }
  }
  return a.length - b.length;
}

// Surrogates (astral code points) sort after U+E000..U+FFFF in code point order.
function codePointRank(c: number): number {
  return c >= 0xe000 ? c - 0x800 : c >= 0xd800 ? c + 0x2000 : c;
}

/** The trec_eval order: score descending, then docId descending. Negative when `a` ranks first. */
export function compareRanked(aScore: number, aId: string, bScore: number, bId: string): number {
  if (aScore > bScore) return -1;
  if (aScore < bScore) return 1;
  return compareIds(bId, aId);
}

/** The docIds of one query's run entries in rank order (trec_eval order). Does not modify `docs`. */
export function rankDocIds(docs: ReadonlyMap<string, number>): string[] {
  const ids = [...docs.keys()];
  ids.sort((a, b) => compareRanked(docs.get(a)!, a, docs.get(b)!, b));
  return ids;
}

/**
 * One query's ranking joined with its judgments, the input of every kernel (trec_eval's RES_RELS).
 * `rels[i]` is the qrels grade of the document at rank i+1, REL_NONPOOL if it has no qrels entry and
 * REL_UNJUDGED if its grade is negative. Counts that depend on the relevance level use the level the
 * structure was built with.
 */
export interface JudgedRanking {
  readonly rels: Int32Array;
  readonly numRet: number;
  /** Retrieved documents with grade >= relevance level. */
  readonly numRelRet: number;
  readonly numNonpool: number;
  readonly numUnjudged: number;
  /** Judged documents (retrieved or not) with grade >= relevance level. */
  readonly numRel: number;
  /** relLevels[g] = number of judged documents with grade g (g >= 0), retrieved or not. */
  readonly relLevels: Int32Array;
  /** 1 + the highest grade g with relLevels[g] > 0; 0 when no document has a grade >= 0. */
  readonly numRelLevels: number;
}

/**
 * Builds one query's JudgedRanking from its ranking values in rank order (`rankedGrades[i]`: the grade at
 * rank i+1, REL_UNJUDGED for a negative grade, REL_NONPOOL without an entry) and the per-grade counts of its
 * qrels. `maxDocs` truncates the ranking (trec_eval -M); `judgedOnly` drops documents without a grade >= 0,
 * keeping rank order (trec_eval -J).
 */
export function judgeRankingWithLevels(
  rankedGrades: Int32Array,
  relLevels: Int32Array,
  relevanceLevel: number,
  opts: { maxDocs?: number; judgedOnly?: boolean } = {},
): JudgedRanking {
  let n = rankedGrades.length;
  if (opts.maxDocs !== undefined && n > opts.maxDocs) n = Math.max(0, opts.maxDocs);
  let rels: Int32Array;
  let numRelRet = 0;
  let numNonpool = 0;
  let numUnjudged = 0;
  if (opts.judgedOnly) {
    let k = 0;
    for (let i = 0; i < n; i++) if (rankedGrades[i]! >= 0) k++;
    rels = new Int32Array(k);
    k = 0;
    for (let i = 0; i < n; i++) {
      const g = rankedGrades[i]!;
      if (g < 0) continue;
      rels[k++] = g;
      if (g >= relevanceLevel) numRelRet++;
    }
  } else {
    rels = n === rankedGrades.length ? rankedGrades : rankedGrades.subarray(0, n);
    for (let i = 0; i < n; i++) {
      const g = rels[i]!;
      if (g === REL_NONPOOL) numNonpool++;
      else if (g === REL_UNJUDGED) numUnjudged++;
      else if (g >= relevanceLevel) numRelRet++;
    }
  }
  let numRel = 0;
  let numRelLevels = 0;
  for (let g = 0; g < relLevels.length; g++) {
    if (relLevels[g]! > 0) {
      numRelLevels = g + 1;
      if (g >= relevanceLevel) numRel += relLevels[g]!;
    }
  }
  return { rels, numRet: rels.length, numRelRet, numNonpool, numUnjudged, numRel, relLevels, numRelLevels };
}
