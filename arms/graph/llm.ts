/**
 * `concepts: llm`: open triple extraction (subject, relation, object) per document through the `openai` SDK,
 * with the versioned prompt below (HippoRAG's OpenIE step, without its separate NER pass), batched, each
 * answered batch cached; a batch whose answer does not parse is counted and its documents get no triples.
 * Subjects and objects are canonicalised by the lexical extractor, so LLM and lexical graphs name concepts
 * alike.
 */
import { z } from 'zod';
import type { JsonValue } from '../../evalset/types.js';
import { cacheKey, canonicalJson, sha256Hex, type ContentStore } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';

/** Bump with any change to the prompt text: it is hashed into every cache key anyway; this names it. */
export const TRIPLES_PROMPT_VERSION = 'triples-v1';

export const TRIPLES_PROMPT = `You extract knowledge triples from short texts.
For each numbered text, list every (subject, relation, object) triple it states. Subjects and objects are
short noun phrases or names as written in the text (resolve "I", "my", "he", "she" to the speaker or person's
name when the text gives it); relations are short verb phrases. Do not invent facts.
Answer with JSON only, exactly: {"triples": [[textNumber, "subject", "relation", "object"], ...]}`;

export const llmParamsSchema = z
  .object({
    /** Chat model (HippoRAG uses gpt-4o-mini). */
    model: z.string().default('gpt-4o-mini'),
    /** An OpenAI-compatible endpoint; absent: OpenAI's. Never part of a cache key or fingerprint. */
    baseURL: z.string().url().optional(),
    /** The environment variable holding the API key (its value is never printed or stored). */
    apiKeyEnv: z.string().default('OPENAI_API_KEY'),
    /** Documents per request. */
    batchSize: z.number().int().min(1).max(64).default(8),
  })
  .strict();
export type LlmParams = z.output<typeof llmParamsSchema>;

/** What decides the triples: model, prompt, batching (not the endpoint, not the key). */
export function llmIdentity(p: LlmParams): JsonValue {
  return { model: p.model, prompt: TRIPLES_PROMPT_VERSION, promptSha256: sha256Hex(TRIPLES_PROMPT), batchSize: p.batchSize };
}

export type Triple = readonly [string, string, string];

/** The triples of one answer, by text number (0-based), or a reason it does not parse. */
export function parseTriples(content: string, texts: number): Triple[][] | string {
  const body = content
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return 'the answer is not JSON';
  }
  const list = (json as { triples?: unknown })?.triples;
  if (!Array.isArray(list)) return 'the answer has no "triples" list';
  const out: Triple[][] = Array.from({ length: texts }, () => []);
  for (const t of list) {
    if (!Array.isArray(t) || t.length !== 4 || !Number.isInteger(t[0]) || t.slice(1).some((x) => typeof x !== 'string'))
      return 'a triple is not [textNumber, subject, relation, object]';
    const i = (t[0] as number) - 1;
    if (i < 0 || i >= texts) return `a triple names text ${t[0]} of ${texts}`;
    out[i]?.push([t[1], t[2], t[3]] as Triple);
  }
  return out;
}

export interface TripleStats {
  batches: number;
  parseFailures: number;
  cachedBatches: number;
}

/** Triples for every text, in order; answered batches are cached in the `index` namespace. */
export async function extractTriples(
  texts: readonly string[],
  p: LlmParams,
  ctx: { readonly cache: ContentStore; readonly log: Logger; readonly env: NodeJS.ProcessEnv },
): Promise<{ triples: Triple[][]; stats: TripleStats }> {
  const apiKey = ctx.env[p.apiKeyEnv];
  if (apiKey === undefined || apiKey === '')
    throw new HarnessError(`concepts: llm needs the environment variable ${p.apiKeyEnv}; set it, or use concepts: lexical`, { exitCode: 2 });
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ apiKey, ...(p.baseURL === undefined ? {} : { baseURL: p.baseURL }), maxRetries: 3 });
  const stats: TripleStats = { batches: 0, parseFailures: 0, cachedBatches: 0 };
  const triples: Triple[][] = [];
  const progress = ctx.log.progress('graph: extracting triples', texts.length);
  for (let b = 0; b < texts.length; b += p.batchSize) {
    const batch = texts.slice(b, b + p.batchSize);
    stats.batches++;
    const key = cacheKey('index', 1, { triples: llmIdentity(p), texts: sha256Hex(canonicalJson(batch)) });
    const hit = await ctx.cache.get('index', key);
    let parsed: Triple[][] | string | undefined;
    if (hit !== undefined) {
      parsed = parseTriples(hit.toString('utf8'), batch.length);
      if (typeof parsed === 'string') parsed = undefined;
      else stats.cachedBatches++;
    }
    if (parsed === undefined) {
      const user = batch.map((t, i) => `${i + 1}. ${t.replace(/\s+/g, ' ')}`).join('\n');
      const res = await client.chat.completions.create({
        model: p.model,
        temperature: 0,
        messages: [
          { role: 'system', content: TRIPLES_PROMPT },
          { role: 'user', content: user },
        ],
      });
      const content = res.choices?.[0]?.message?.content ?? '';
      parsed = parseTriples(content, batch.length);
      if (typeof parsed === 'string') {
        // Counted, shown in the index stats, not cached: a later run asks again.
        stats.parseFailures++;
        ctx.log.warn(`graph: triples of documents ${b + 1}-${b + batch.length} not used: ${parsed}`);
        parsed = batch.map(() => []);
      } else await ctx.cache.put('index', key, content);
    }
    triples.push(...(parsed as Triple[][]));
    progress.tick(batch.length);
  }
  progress.done();
  return { triples, stats };
}
