/**
 * A tiny in-memory keyword memory, the retriever behind the example MCP server (examples/mcp-memory-server.ts):
 * documents stored per scope, searched by Okapi BM25 over lower-cased runs of letters and digits, no stemming,
 * no stop words. It stands in for "the memory system you already run".
 *
 * score(q, d) = sum over distinct query terms t in d of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl)),
 * idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (Robertson & Zaragoza 2009, doi:10.1561/1500000019; Lucene's idf).
 */
export interface MemoryHit {
  readonly id: string;
  readonly score: number;
}

interface Entry {
  readonly id: string;
  readonly tf: Map<string, number>;
  readonly length: number;
}

export function terms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export class KeywordMemory {
  private readonly scopes = new Map<string, Map<string, Entry>>();
  constructor(
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {}

  /** Stores (or replaces) one document in `scope`. */
  store(scope: string, id: string, text: string): void {
    const tf = new Map<string, number>();
    const ts = terms(text);
    for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
    let docs = this.scopes.get(scope);
    if (!docs) {
      docs = new Map();
      this.scopes.set(scope, docs);
    }
    docs.set(id, { id, tf, length: ts.length });
  }

  size(scope: string): number {
    return this.scopes.get(scope)?.size ?? 0;
  }

  /** The best `topK` documents of `scope` for `query`, score descending then id descending; 0-score documents left out. */
  search(scope: string, query: string, topK: number): MemoryHit[] {
    const docs = [...(this.scopes.get(scope)?.values() ?? [])];
    if (docs.length === 0) return [];
    const avgdl = docs.reduce((a, d) => a + d.length, 0) / docs.length;
    const q = [...new Set(terms(query))];
    const idf = new Map(q.map((t) => [t, docs.filter((d) => d.tf.has(t)).length] as const));
    const hits: MemoryHit[] = [];
    for (const d of docs) {
      let score = 0;
      for (const t of q) {
        const tf = d.tf.get(t);
        if (tf === undefined) continue;
        const df = idf.get(t) as number;
        const w = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
        score += (w * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * d.length) / avgdl));
      }
      if (score > 0) hits.push({ id: d.id, score });
    }
    hits.sort((x, y) => y.score - x.score || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0));
    return hits.slice(0, topK);
  }
}
