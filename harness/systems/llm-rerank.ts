import pLimit from 'p-limit';
import { z } from 'zod';
import { timeoutMsSchema } from '../../arms/remote/limits.js';
import { urlCredentialProblem } from '../util/redact.js';
import { redactUrl } from '../../evalset/datasets/download.js';
import type { Document, Query } from '../../evalset/types.js';
import { cacheKey, type ShapeCheck, sha256Hex } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import { classifyQuery, PROMPT_VERSION, parseRerankReply, rerankPrompt } from '../recipes/llm-rerank.js';
import { parseNodeParams, shownParams } from './node-params.js';
import type { NodeContext, NodeKind, ScopeResults, SystemInstance } from './types.js';

/** Bump when the mapping from LLM scores to the output run changes. */
const LLM_RERANK_VERSION = 1;

/** Keeps the input's order among memories the model scored equally: each gets this much less per rank. */
const RANK_TIEBREAK = 1e-3;

const llmSchema = z
  .object({
    /** An OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or a local server's /v1. */
    baseURL: z.string().url(),
    model: z.string().min(1),
    /** The environment variable holding the API key (its value is never printed, logged or cached). */
    apiKeyEnv: z.string().default('OPENAI_API_KEY'),
    temperature: z.number().min(0).max(2).default(0),
    timeoutMs: timeoutMsSchema().default(60_000),
    concurrency: z.number().int().positive().default(4),
  })
  .strict()
  .superRefine((l, ctx) => {
    // A credential in the URL would reach the fingerprint, the report's params and every message naming it.
    const credential = urlCredentialProblem(l.baseURL, `the key is read from ${l.apiKeyEnv}, so remove the credentials from the URL`);
    if (credential !== undefined) ctx.addIssue({ code: 'custom', path: ['baseURL'], message: credential });
  });

const params = z
  .object({
    /** Candidates read from the input and shown to the model (v1: 40). */
    fetch: z.number().int().positive().default(40),
    /** Candidates returned (v1: 20). */
    keep: z.number().int().positive().default(20),
    /** Replies that fail to parse before the query falls back to the input's order (v1: 3). */
    maxAttempts: z.number().int().positive().default(3),
    /** The model to ask; absent: no LLM is configured and every query keeps the input's order (v1's own fallback). */
    llm: llmSchema.optional(),
  })
  .strict()
  .refine((p) => p.keep <= p.fetch, { path: ['keep'], message: 'keep must not exceed fetch' });

type Params = z.output<typeof params>;

/** A cached reply must still be `[index, score]` pairs within the candidates, or it is evicted and asked again. */
function pairsCheck(n: number): ShapeCheck {
  return (v) =>
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((x) => Array.isArray(x) && x.length === 2 && Number.isInteger(x[0]) && x[0] >= 0 && x[0] < n && typeof x[1] === 'number' && x[1] >= 0 && x[1] <= 10)
      ? undefined
      : 'not [index, score] pairs';
}

/** A reply that never parsed: the query falls back; nothing is cached. */
class NoUsableReply extends Error {}

/**
 * `llm-rerank`: the v1 hybrid provider's reranker over one input (docs/adr/0024-reference-recipes.md). Per
 * query, the input's top `fetch` (40) are shown to an OpenAI-compatible chat model with a prompt chosen by the
 * query's type (7 regex-classified types); the reply, a JSON array of `{index, score 0-10}`, orders them and the
 * top `keep` (20) are returned, scored `llm score + 0.001 * (1 - rank / n)`. After `maxAttempts` (3) replies that
 * fail to parse, the query keeps the input's order. Parsed replies are cached by prompt version, model, endpoint
 * (credentials redacted), temperature and the prompt's text. Without `llm`, every query keeps the input's
 * order: the local substitute a report must name.
 */
export const llmRerankNode: NodeKind = {
  summary: 'v1 LLM rerank (7 regex query types, JSON {index, score}); 40 -> 20; input order after 3 failed parses or without an LLM',
  arity: { min: 1, max: 1 },
  params,
  bind({ params: raw }) {
    const r = parseNodeParams(params, raw);
    if ('problems' in r) return r;
    const p: Params = r.data;
    const endpoint = p.llm === undefined ? null : redactUrl(p.llm.baseURL);
    return {
      node: {
        kind: p.llm === undefined ? 'llm-rerank (no LLM: input order)' : 'llm-rerank',
        params: shownParams(p.llm === undefined ? p : { ...p, llm: { ...p.llm, baseURL: endpoint } }),
        fingerprint: {
          node: 'llm-rerank',
          v: LLM_RERANK_VERSION,
          prompt: PROMPT_VERSION,
          fetch: p.fetch,
          keep: p.keep,
          maxAttempts: p.maxAttempts,
          llm: p.llm === undefined ? null : { endpoint, model: p.llm.model, temperature: p.llm.temperature },
        },
        theoreticalMinScore: 0,
        sendsTextOffMachine: p.llm !== undefined,
        create: (ctx) => rerankInstance(p, endpoint, ctx),
      },
    };
  },
};

type Llm = NonNullable<Params['llm']>;
type Chat = import('openai').OpenAI;

/** What a scope's reranking counts, as its index statistics. */
type RerankStats = {
  llmQueries: number;
  llmFallbacks: number;
  llmAttempts: number;
};

/** The model's client, made on first use, so a missing key is an error only when a query is reranked. */
function lazyClient(llm: Llm | undefined, ctx: NodeContext): () => Promise<Chat | undefined> {
  let client: Chat | undefined;
  return async () => {
    if (client || !llm) return client;
    const key = ctx.env[llm.apiKeyEnv];
    if (key === undefined || key === '')
      throw new HarnessError(`llm-rerank needs the API key in ${llm.apiKeyEnv}; set it, or remove params.llm to keep the input's order`, {
        exitCode: 2,
      });
    const { OpenAI } = await import('openai');
    client = new OpenAI({ apiKey: key, baseURL: llm.baseURL, timeout: llm.timeoutMs, maxRetries: 2 });
    return client;
  };
}

function rerankInstance(p: Params, endpoint: string | null, ctx: NodeContext): SystemInstance {
  const openai = lazyClient(p.llm, ctx);
  return {
    async runScope(scope, inputs, topK) {
      const t0 = performance.now();
      const input = inputs[0]?.results ?? {};
      const limit = pLimit(p.llm?.concurrency ?? 1);
      const stats: RerankStats = { llmQueries: 0, llmFallbacks: 0, llmAttempts: 0 };
      const rerank = queryReranker(p, endpoint, ctx, openai, scope.documents, stats);
      const results: ScopeResults = {};
      const queryMs: Record<string, number> = {};
      await Promise.all(
        scope.queries.map((q) =>
          limit(async () => {
            const tq = performance.now();
            results[q.id] = await rerank(q, input[q.id] ?? [], topK);
            queryMs[q.id] = performance.now() - tq;
          }),
        ),
      );
      if (stats.llmFallbacks > 0)
        ctx.log.warn(`llm-rerank: ${stats.llmFallbacks} of ${stats.llmQueries} queries kept the input's order after ${p.maxAttempts} failed replies`);
      return { indexStats: stats, indexMs: 0, searchMs: performance.now() - t0, queryMs, results };
    },
  };
}

/**
 * One query's reranking over a scope: its top `fetch` candidates scored by the model (none when it has no LLM,
 * no candidate or no usable reply), the input's order breaking ties, cut to `keep`.
 */
function queryReranker(
  p: Params,
  endpoint: string | null,
  ctx: NodeContext,
  openai: () => Promise<Chat | undefined>,
  documents: readonly Document[],
  stats: RerankStats,
): (q: Query, candidates: readonly [string, number][], topK: number) => Promise<[string, number][]> {
  const byId = new Map(documents.map((d) => [d.id, d] as const));
  return async (q, candidates, topK) => {
    const hits = candidates.slice(0, p.fetch);
    const n = hits.length;
    let llmScores: Map<number, number> | undefined;
    const c = await openai();
    if (c && p.llm && n > 0) {
      stats.llmQueries++;
      const prompt = rerankPrompt(
        q.text,
        classifyQuery(q.text),
        hits.map(([id]) => byId.get(id)?.text ?? ''),
      );
      llmScores = await modelScores({ client: c, llm: p.llm, endpoint, maxAttempts: p.maxAttempts, ctx, stats }, q.id, prompt, n);
    }
    return hits
      .map(([id], rank): [string, number] => [id, (llmScores?.get(rank) ?? 0) + RANK_TIEBREAK * (1 - rank / n)])
      .sort((a, b) => b[1] - a[1])
      .slice(0, Math.min(p.keep, topK));
  };
}

/** The model and what asking it needs: the redacted endpoint for messages, the attempts allowed, the counts. */
interface RerankLlm {
  readonly client: Chat;
  readonly llm: Llm;
  readonly endpoint: string | null;
  readonly maxAttempts: number;
  readonly ctx: NodeContext;
  readonly stats: RerankStats;
}

/** The model's scores by candidate position, cached by prompt; undefined when no reply parsed (the query falls back). */
async function modelScores(ask: RerankLlm, qid: string, prompt: string, n: number): Promise<Map<number, number> | undefined> {
  const { llm, endpoint, ctx } = ask;
  const key = cacheKey('judge', 1, {
    prompt: PROMPT_VERSION,
    endpoint,
    model: llm.model,
    temperature: llm.temperature,
    text: sha256Hex(prompt),
  });
  try {
    const got = await ctx.cache.json<[number, number][]>('judge', key, () => parsedReply(ask, qid, prompt, n), pairsCheck(n));
    return new Map(got);
  } catch (err) {
    if (!(err instanceof NoUsableReply)) throw err;
    ask.stats.llmFallbacks++;
    return undefined;
  }
}

/** Asks up to `maxAttempts` times for a reply that parses; throws NoUsableReply when none does. */
async function parsedReply(ask: RerankLlm, qid: string, prompt: string, n: number): Promise<[number, number][]> {
  for (let attempt = 0; attempt < ask.maxAttempts; attempt++) {
    ask.stats.llmAttempts++;
    const reply = await oneReply(ask, qid, prompt, attempt);
    if (reply === undefined) continue;
    const parsed = parseRerankReply(reply, n);
    if (parsed) return [...parsed];
    ask.ctx.log.warn(`llm-rerank: query ${qid}, attempt ${attempt + 1}: the reply is not a JSON array of {index, score 0-10}`);
  }
  throw new NoUsableReply();
}

/** One reply's text; undefined after a failed call worth another attempt. A refused key ends the ablation. */
async function oneReply(ask: RerankLlm, qid: string, prompt: string, attempt: number): Promise<string | undefined> {
  const { llm } = ask;
  try {
    const res = await ask.client.chat.completions.create({
      model: llm.model,
      temperature: llm.temperature,
      messages: [{ role: 'user', content: prompt }],
    });
    return res.choices[0]?.message?.content ?? '';
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401 || status === 403)
      throw new HarnessError(`llm-rerank: ${ask.endpoint} refused the key in ${llm.apiKeyEnv} (HTTP ${status}); check it`, {
        exitCode: 2,
      });
    ask.ctx.log.warn(`llm-rerank: query ${qid}, attempt ${attempt + 1}: ${(err as Error).message}`);
    return undefined;
  }
}
