import { JSONPath } from 'jsonpath-plus';
import { z } from 'zod';
import type { ScoredDoc } from '../types.js';

/**
 * How a remote answer becomes a ranking: `results` is a JSONPath (jsonpath-plus, Goessner's syntax) selecting
 * the hits in the answer, `docId` and `score` are JSONPaths inside one hit. Without `score`, hits are scored by
 * rank, 1 / (1 + rank), so the server's order is kept and the theoretical minimum is 0.
 */
export const mappingSchema = z
  .object({
    results: z.string().min(1).default('$[*]'),
    docId: z.string().min(1).default('$.id'),
    score: z.string().min(1).optional(),
  })
  .strict();
export type Mapping = z.output<typeof mappingSchema>;

/** An answer that does not have the shape the mapping names. Carries no part of the answer (it may quote documents). */
export class MappingError extends Error {}

function select(path: string, json: unknown): unknown[] {
  return JSONPath({ path, json: json as object, wrap: true, eval: 'safe' }) as unknown[];
}

/** The ranked hits of one answer, best first, in the server's order; throws MappingError on a malformed answer. */
export function mapResults(answer: unknown, m: Mapping): ScoredDoc[] {
  let hits: unknown[];
  try {
    hits = select(m.results, answer);
  } catch (err) {
    throw new MappingError(`results path ${m.results} failed: ${(err as Error).message}`);
  }
  // `$.hits` selecting one array, rather than `$.hits[*]` selecting its items, means the same thing.
  if (hits.length === 1 && Array.isArray(hits[0])) hits = hits[0] as unknown[];
  return hits.map((hit, rank) => {
    const id = select(m.docId, hit)[0];
    if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id)))
      throw new MappingError(`hit ${rank + 1} has no string docId at ${m.docId} (found ${id === undefined ? 'nothing' : typeof id})`);
    let score = 1 / (1 + rank);
    if (m.score !== undefined) {
      const s = select(m.score, hit)[0];
      const n = typeof s === 'string' && s.trim() !== '' ? Number(s) : s;
      if (typeof n !== 'number' || !Number.isFinite(n))
        throw new MappingError(`hit ${rank + 1} has no finite number at ${m.score} (found ${s === undefined ? 'nothing' : typeof s})`);
      score = n;
    }
    return { docId: String(id), score };
  });
}
