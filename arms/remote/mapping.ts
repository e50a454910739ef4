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

/** Why `pattern` cannot map a plain-text answer, or undefined when it can. */
export function textPatternProblem(pattern: string): string | undefined {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'gm');
  } catch (err) {
    return `is not a regular expression: ${(err as Error).message}`;
  }
  if (!/\(\?<id>/.test(re.source)) return 'has no named group (?<id>...) for the docId (and may have (?<score>...))';
  return undefined;
}

/**
 * How a plain-text answer becomes a ranking: every match of `pattern` (a JavaScript regular expression, flags
 * g and m, so `^` and `$` are line ends) is one hit, in the order of the text; its named group `id` is the
 * docId and its group `score`, when the pattern has one, the score of every hit (without one: 1 / (1 + rank),
 * as for JSON without a score path).
 */
export const textMappingSchema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .superRefine((p, ctx) => {
        const problem = textPatternProblem(p);
        if (problem)
          ctx.addIssue({ code: 'custom', message: `${problem}; e.g. '^(?<id>\\S+)\\t(?<score>\\S+)$' (in YAML single quotes) for lines of id TAB score` });
      }),
  })
  .strict();
export type TextMapping = z.output<typeof textMappingSchema>;

/** The ranked hits of a plain-text answer; throws MappingError on a score that is not a finite number. */
export function mapTextResults(text: string, m: TextMapping): ScoredDoc[] {
  const out: ScoredDoc[] = [];
  // A pattern with a score group scores every hit by it: a hit without one would mix two scales.
  const scored = /\(\?<score>/.test(m.pattern);
  for (const match of text.matchAll(new RegExp(m.pattern, 'gm'))) {
    const id = match.groups?.['id'];
    if (id === undefined || id === '') continue;
    let score = 1 / (1 + out.length);
    const s = match.groups?.['score'];
    if (scored) {
      score = Number(s);
      if (s === undefined || s.trim() === '' || !Number.isFinite(score))
        throw new MappingError(`hit ${out.length + 1}: its score group is not a finite number`);
    }
    out.push({ docId: id, score });
  }
  return out;
}
