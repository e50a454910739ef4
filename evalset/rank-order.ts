/**
 * The one ranking convention of the workbench (docs/adr/0001-tie-order.md): documents sorted by score
 * descending, ties broken by docId descending in byte order — trec_eval's `comp_sim_docno`
 * (`strcmp(docno2, docno1)` on the UTF-8 bytes). Scores are IEEE doubles, as trec_eval ≥ 9.0.8 holds them.
 */

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
