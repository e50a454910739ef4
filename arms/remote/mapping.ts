import { JSONPath } from 'jsonpath-plus';
import { z } from 'zod';
import type { Corpus, JsonValue } from '../../evalset/types.js';
import type { ScoredDoc } from '../types.js';
import { type MappingCounts, TEXT_MATCH_DEFAULT, type TextMatch, TextMatcher, textMatchSchema } from './text-match.js';

/**
 * How a remote answer becomes a ranking: `results` is a JSONPath (jsonpath-plus, Goessner's syntax) selecting
 * the hits in the answer, `docId`, `text` and `score` are JSONPaths inside one hit. Without `score`, hits are
 * scored by rank, 1 / (1 + rank), so the server's order is kept and the theoretical minimum is 0. With `text`,
 * a hit whose docId the eval set does not hold (or that has none) is mapped by its text (text-match.ts).
 */
export const mappingSchema = z
  .object({
    results: z.string().min(1).default('$[*]'),
    docId: z.string().min(1).default('$.id'),
    score: z.string().min(1).optional(),
    text: z.string().min(1).optional(),
    /** How hits are mapped by their text (see text-match.ts); read only with `text` or a `(?<text>...)` group. */
    match: textMatchSchema.optional(),
  })
  .strict();
export type Mapping = z.output<typeof mappingSchema>;

/** One hit of a remote answer: a docId, a text, or both (at least one), and its score. */
export interface RemoteHit {
  readonly docId?: string;
  readonly text?: string;
  readonly score: number;
}

/** An answer that does not have the shape the mapping names. Carries no part of the answer (it may quote documents). */
export class MappingError extends Error {}

function select(path: string, json: unknown): unknown[] {
  return JSONPath({ path, json: json as object, wrap: true, eval: 'safe' }) as unknown[];
}

/** The ranked hits of one answer, best first, in the server's order; throws MappingError on a malformed answer. */
export function mapResults(answer: unknown, m: Mapping): RemoteHit[] {
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
    const hasId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
    const text = m.text === undefined ? undefined : select(m.text, hit)[0];
    if (m.text !== undefined && text !== undefined && typeof text !== 'string')
      throw new MappingError(`hit ${rank + 1} has a ${typeof text} at ${m.text}, not text`);
    if (!hasId && typeof text !== 'string') {
      const also = m.text === undefined ? '' : ` nor text at ${m.text}`;
      throw new MappingError(`hit ${rank + 1} has no string docId at ${m.docId}${also} (found ${id === undefined ? 'nothing' : typeof id})`);
    }
    return { ...(hasId ? { docId: String(id) } : {}), ...(typeof text === 'string' ? { text } : {}), score: hitScore(m, hit, rank) };
  });
}

function hitScore(m: Mapping, hit: unknown, rank: number): number {
  if (m.score === undefined) return 1 / (1 + rank);
  const s = select(m.score, hit)[0];
  const n = typeof s === 'string' && s.trim() !== '' ? Number(s) : s;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw new MappingError(`hit ${rank + 1} has no finite number at ${m.score} (found ${s === undefined ? 'nothing' : typeof s})`);
  return n;
}

/**
 * A ranking from mapped hits. Without a matcher (the arm reads no text) each hit keeps its docId. With one,
 * each hit maps to a Document or a Returned item (counted in `counts`); a hit that maps to a Document already
 * ranked higher is dropped (two facts of one memory are one result, at the better rank), and only a Returned
 * item carries its text, for the judge.
 */
export function rankHits(hits: readonly RemoteHit[], matcher: TextMatcher | undefined, counts: MappingCounts): ScoredDoc[] {
  if (matcher === undefined) return hits.map((h) => ({ docId: h.docId ?? '', score: h.score }));
  const seen = new Set<string>();
  const out: ScoredDoc[] = [];
  for (const h of hits) {
    const { docId, by } = matcher.map(h);
    if (seen.has(docId)) continue;
    seen.add(docId);
    if (by === 'id') counts.byId++;
    else if (by === 'text') counts.byText++;
    else if (by === 'fuzzy') counts.byFuzzy++;
    else if (by === 'returned') counts.returned++;
    out.push(by === 'returned' ? { docId, score: h.score, text: h.text as string } : { docId, score: h.score });
  }
  return out;
}

/** Why `pattern` cannot map a plain-text answer, or undefined when it can. */
export function textPatternProblem(pattern: string): string | undefined {
  let re: RegExp;
  try {
    re = new RegExp(pattern, 'gm');
  } catch (err) {
    return `is not a regular expression: ${(err as Error).message}`;
  }
  if (!/\(\?<(id|text)>/.test(re.source)) return 'has no named group (?<id>...) for the docId or (?<text>...) for the text (and may have (?<score>...))';
  return undefined;
}

/** A JavaScript regular expression, checked when the config loads. */
export const regexSchema = z
  .string()
  .min(1)
  .superRefine((p, ctx) => {
    try {
      new RegExp(p);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `is not a regular expression: ${(err as Error).message}` });
    }
  });

/**
 * How a plain-text answer becomes a ranking: every match of `pattern` (a JavaScript regular expression, flags
 * g and m, so `^` and `$` are line ends) is one hit, in the order of the text; its named group `id` is the
 * docId, `text` the hit's text (mapped as `response.text` is), and `score`, when the pattern has one, the score
 * of every hit (without one: 1 / (1 + rank), as for JSON without a score path).
 */
export const patternSchema = z
  .string()
  .min(1)
  .superRefine((p, ctx) => {
    const problem = textPatternProblem(p);
    if (problem)
      ctx.addIssue({ code: 'custom', message: `${problem}; e.g. '^(?<id>\\S+)\\t(?<score>\\S+)$' (in YAML single quotes) for lines of id TAB score` });
  });

/** The ranked hits of a plain-text answer; throws MappingError on a score that is not a finite number. */
export function mapTextResults(body: string, pattern: string): RemoteHit[] {
  const out: RemoteHit[] = [];
  // A pattern with a score group scores every hit by it: a hit without one would mix two scales.
  const scored = /\(\?<score>/.test(pattern);
  for (const match of body.matchAll(new RegExp(pattern, 'gm'))) {
    const id = match.groups?.['id'];
    const text = match.groups?.['text'];
    const hasId = id !== undefined && id !== '';
    const hasText = text !== undefined && text.trim() !== '';
    if (!hasId && !hasText) continue;
    let score = 1 / (1 + out.length);
    const s = match.groups?.['score'];
    if (scored) {
      score = Number(s);
      if (s === undefined || s.trim() === '' || !Number.isFinite(score))
        throw new MappingError(`hit ${out.length + 1}: its score group is not a finite number`);
    }
    out.push({ ...(hasId ? { docId: id } : {}), ...(hasText ? { text } : {}), score });
  }
  return out;
}

/** The text-match settings when hits are mapped by their text (a `text` path, or a pattern with a `(?<text>...)` group). */
export function textMatchOf(m: Mapping & { readonly pattern?: string | undefined }): TextMatch | undefined {
  return m.text !== undefined || (m.pattern !== undefined && /\(\?<text>/.test(m.pattern)) ? (m.match ?? TEXT_MATCH_DEFAULT) : undefined;
}

/** The response mapping as the fingerprint records it: the text-match settings only where text is mapped. */
export function responseIdentity<M extends Mapping & { readonly pattern?: string | undefined }>(m: M): JsonValue {
  const { match: _given, ...rest } = m;
  const match = textMatchOf(m);
  return (match === undefined ? rest : { ...rest, match }) as unknown as JsonValue;
}

/**
 * A remote arm's hits made into rankings, one Scope at a time: `index` builds the Scope's text matcher (only
 * when the arm maps text), `rank` maps one answer's hits, and `stats` gives the mapping counts since the last
 * `reset` (the arm resets after its store check, so only the queries' hits count).
 */
export class HitRanker {
  #matcher: TextMatcher | undefined;
  #counts: MappingCounts = { byId: 0, byText: 0, byFuzzy: 0, returned: 0 };

  /** `match` undefined: the arm maps no text, every hit keeps its docId. */
  constructor(private readonly match: TextMatch | undefined) {}

  index(corpus: Corpus): void {
    this.#matcher = this.match === undefined ? undefined : new TextMatcher(corpus, this.match);
    this.reset();
  }

  rank(hits: readonly RemoteHit[]): ScoredDoc[] {
    return rankHits(hits, this.#matcher, this.#counts);
  }

  reset(): void {
    this.#counts = { byId: 0, byText: 0, byFuzzy: 0, returned: 0 };
  }

  /** Index stats of the mapping: absent for an arm that maps no text, so its reports are unchanged. */
  stats(): Record<string, number> | undefined {
    if (this.#matcher === undefined) return undefined;
    const c = this.#counts;
    return { mappedById: c.byId, mappedByText: c.byText, mappedByFuzzy: c.byFuzzy, returnedItems: c.returned };
  }
}
