export interface Hit {
  /** Position of the document in the indexed corpus. */
  readonly doc: number;
  readonly score: number;
}

/**
 * Exact top-k selection with a binary min-heap over typed arrays, keyed by (score, earlier document wins):
 * the root is the hit that ranks last. Offering the same hits in any order keeps the same k, as Lucene's
 * TopScoreDocCollector does for documents collected in increasing order.
 */
export class TopK {
  private readonly heapDoc: Int32Array;
  private readonly heapScore: Float64Array;
  private size = 0;

  constructor(private readonly k: number) {
    this.heapDoc = new Int32Array(k);
    this.heapScore = new Float64Array(k);
  }

  /**
   * The score a document later than every one offered so far must exceed to enter; -Infinity until k hits
   * are held.
   */
  threshold(): number {
    return this.size < this.k ? -Infinity : this.heapScore[0]!;
  }

  offer(score: number, doc: number): void {
    const { heapDoc, heapScore } = this;
    if (this.size < this.k) {
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!below(score, doc, heapScore[parent]!, heapDoc[parent]!)) break;
        heapScore[i] = heapScore[parent]!;
        heapDoc[i] = heapDoc[parent]!;
        i = parent;
      }
      heapScore[i] = score;
      heapDoc[i] = doc;
      return;
    }
    if (this.k === 0 || !below(heapScore[0]!, heapDoc[0]!, score, doc)) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.size) break;
      const r = l + 1;
      const c = r < this.size && below(heapScore[r]!, heapDoc[r]!, heapScore[l]!, heapDoc[l]!) ? r : l;
      if (!below(heapScore[c]!, heapDoc[c]!, score, doc)) break;
      heapScore[i] = heapScore[c]!;
      heapDoc[i] = heapDoc[c]!;
      i = c;
    }
    heapScore[i] = score;
    heapDoc[i] = doc;
  }

  /** The hits held, best first (score descending, then earlier document). */
  hits(): Hit[] {
    const out: Hit[] = new Array<Hit>(this.size);
    for (let i = 0; i < this.size; i++) out[i] = { doc: this.heapDoc[i]!, score: this.heapScore[i]! };
    return out.sort((x, y) => y.score - x.score || x.doc - y.doc);
  }
}

/** "a ranks below b": lower score, or equal score and later document. */
function below(sa: number, da: number, sb: number, db: number): boolean {
  return sa < sb || (sa === sb && da > db);
}
