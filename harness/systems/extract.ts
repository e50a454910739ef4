import { join } from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { timeoutMsSchema } from '../../arms/remote/limits.js';
import { redactUrl } from '../../evalset/datasets/download.js';
import type { Document } from '../../evalset/types.js';
import { cacheKey, type ShapeCheck, sha256Hex } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import { EXTRACT_PROMPT_VERSION, type Extraction, extractionPrompt, memoryBlock, parseExtraction } from '../recipes/extract.js';
import { buildSessions, type Session } from '../recipes/session.js';
import { batchBlockSchema, chatEndpointOf, keyEnvOf, providerSchema } from '../config/llm-endpoint.js';
import { chatClient } from '../llm/client.js';
import type { ChatFn } from '../llm/types.js';
import type { NodeContext, ScopeData } from './types.js';

/**
 * v1's LLM extraction stage for the `chunk` node (`params.extract`): per session (30 minutes of inactivity, as
 * garbanzo splits them), an OpenAI-compatible chat model turns the messages into dated facts; the chunker then
 * cuts each session's fact block instead of the messages. Replies are cached in the `judge` namespace like the
 * judge's and the LLM reranker's, keyed by prompt version, endpoint (credentials redacted), model, temperature
 * and the prompt's hash, so a rerun sends nothing; a reply that never parses is not cached.
 */
export const extractSchema = z
  .object({
    /** `openai`: an OpenAI-compatible endpoint (absent baseURL: OpenAI's); `anthropic`: the Messages API. */
    provider: providerSchema,
    baseURL: z.string().url().optional(),
    /** v1: gpt-5-mini. */
    model: z.string().min(1),
    /** The environment variable holding the API key (its value is never printed, logged or cached); default the provider's. */
    apiKeyEnv: z.string().optional(),
    /** The endpoint runs on this machine or network and needs no key (a placeholder is sent). */
    local: z.boolean().default(false),
    /** Absent: not sent (v1's extractor is a reasoning model without temperature). */
    temperature: z.number().min(0).max(2).optional(),
    /** Absent: not sent to an OpenAI-compatible server; Anthropic, which requires one, gets 4096. */
    maxTokens: z.number().int().positive().optional(),
    timeoutMs: timeoutMsSchema().default(120_000),
    concurrency: z.number().int().positive().default(4),
    maxConcurrency: z.number().int().positive().optional(),
    /** `true` or the batch settings: sessions go through the provider's batch API (one ledger per scope). */
    batch: batchBlockSchema,
    /** v1: 5 retries with backoff; the SDK's, on connection errors, 429 and 5xx. */
    maxRetries: z.number().int().min(0).default(5),
    /** Replies that fail to parse before the session's messages are chunked as they are. */
    maxAttempts: z.number().int().positive().default(3),
    /** The inactivity that closes a session. */
    gapMinutes: z.number().positive().default(30),
  })
  .strict();

export type ExtractParams = z.output<typeof extractSchema>;

/** What decides the facts: prompt, model, temperature, sessions (never the endpoint's credentials or the key). */
export function extractIdentity(p: ExtractParams): Record<string, string | number | null> {
  return {
    prompt: EXTRACT_PROMPT_VERSION,
    endpoint: p.baseURL === undefined ? null : redactUrl(p.baseURL),
    model: p.model,
    temperature: p.temperature ?? null,
    gapMinutes: p.gapMinutes,
  };
}

/** One document the chunker cuts, and for a fact block, each fact's span and the messages it stands for. */
export interface Extracted {
  readonly doc: Document;
  readonly spans?: readonly { readonly start: number; readonly end: number; readonly sources: readonly string[] }[];
}

export interface ExtractStats {
  sessions: number;
  extractedSessions: number;
  extractionFallbacks: number;
  memories: number;
  entities: number;
  relationships: number;
}

/**
 * The chat client of one scope's extraction; a missing key is a usage error naming the variable, raised when a
 * scope first needs it. Each scope keeps its own batch ledger (scopes may run in parallel worker threads).
 */
async function client(p: ExtractParams, ctx: NodeContext, scope: string): Promise<ChatFn> {
  const apiKeyEnv = keyEnvOf(p);
  const key = ctx.env[apiKeyEnv];
  if ((key === undefined || key === '') && !p.local)
    throw new HarnessError(
      `chunk: params.extract needs the API key in ${apiKeyEnv}; set it, declare local: true for a local server, or remove params.extract`,
      {
        exitCode: 2,
      },
    );
  const ledger = join(ctx.workDir, 'batches', 'extract', sha256Hex(scope).slice(0, 16));
  const ep = chatEndpointOf(p, ctx.workDir, { stage: 'extract' });
  const endpoint = ep.batch === undefined ? ep : { ...ep, batch: { ...ep.batch, ledgerDir: ledger } };
  return chatClient(endpoint, ctx.env, 'chunk: params.extract', { log: ctx.log, label: `extract ${scope}`, who: 'chunk: params.extract' });
}

/** A cached extraction must still hold facts citing messages of the session, or it is evicted and asked again. */
function extractionCheck(messages: number): ShapeCheck {
  return (v) => {
    const x = v as Extraction;
    const ok =
      Array.isArray(x?.memories) &&
      x.memories.length > 0 &&
      x.memories.every(
        (m) =>
          typeof m.text === 'string' &&
          Array.isArray(m.cites) &&
          (m.cites as unknown[]).every((i) => typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < messages),
      );
    return ok ? undefined : 'not an extraction of this session';
  };
}

class NoUsableReply extends Error {}

/**
 * Every session of the scope as a fact block (or, when no reply parsed after `maxAttempts`, as its messages),
 * with the counts the node reports in its index statistics.
 */
export async function extractScope(scope: ScopeData, p: ExtractParams, ctx: NodeContext): Promise<{ docs: Extracted[]; stats: ExtractStats }> {
  const sessions = buildSessions(scope.documents, p.gapMinutes, scope.scope ?? 'all');
  const stats: ExtractStats = { sessions: sessions.length, extractedSessions: 0, extractionFallbacks: 0, memories: 0, entities: 0, relationships: 0 };
  let chat: Promise<ChatFn> | undefined;
  const ask = () => (chat ??= client(p, ctx, scope.scope ?? 'all'));
  // Batched, every session is asked at once (a batch's worth); one by one, the rate limiter's ceiling.
  const limit = pLimit(p.batch === false ? Math.max(p.concurrency, p.maxConcurrency ?? p.concurrency) : Number.POSITIVE_INFINITY);
  const parts = await Promise.all(
    sessions.map((s) =>
      limit(async (): Promise<Extracted[]> => {
        const got = await sessionExtraction(s, p, ctx, ask);
        if (got === undefined) {
          stats.extractionFallbacks++;
          return s.messages.map((doc) => ({ doc }));
        }
        stats.extractedSessions++;
        stats.memories += got.memories.length;
        stats.entities += got.entities;
        stats.relationships += got.relationships;
        return [memoryBlock(s, got)];
      }),
    ),
  );
  if (stats.extractionFallbacks > 0)
    ctx.log.warn(`chunk: ${stats.extractionFallbacks} of ${sessions.length} sessions kept their messages after ${p.maxAttempts} unusable extraction replies`);
  return { docs: parts.flat(), stats };
}

/** One session's extraction, from the cache or the model; undefined when no reply parsed. */
async function sessionExtraction(s: Session, p: ExtractParams, ctx: NodeContext, chat: () => Promise<ChatFn>): Promise<Extraction | undefined> {
  const prompt = extractionPrompt(s);
  const key = cacheKey('judge', 1, { ...extractIdentity(p), text: sha256Hex(prompt) });
  try {
    return await ctx.cache.json<Extraction>('judge', key, () => askUntilParsed(s, p, ctx, chat, prompt), extractionCheck(s.messages.length));
  } catch (err) {
    if (err instanceof NoUsableReply) return undefined;
    throw err;
  }
}

async function askUntilParsed(s: Session, p: ExtractParams, ctx: NodeContext, chat: () => Promise<ChatFn>, prompt: string): Promise<Extraction> {
  const c = await chat();
  const decoding = { ...(p.temperature === undefined ? {} : { temperature: p.temperature }), ...(p.maxTokens === undefined ? {} : { maxTokens: p.maxTokens }) };
  for (let attempt = 1; attempt <= p.maxAttempts; attempt++) {
    let reply: string;
    try {
      // The attempt tags the request: at temperature 0 a batch would otherwise fold the re-ask into the first ask.
      reply = (await c(prompt, decoding, `a${attempt}`)).content;
    } catch (err) {
      const where = p.baseURL === undefined ? `the ${p.provider === 'anthropic' ? 'Anthropic' : 'OpenAI'} API` : redactUrl(p.baseURL);
      const denied = err instanceof Error && /HTTP 40[13]\b/.test(err.message);
      throw new HarnessError(`chunk: extraction with model ${p.model} at ${where} failed: ${err instanceof Error ? err.message : String(err)}`, {
        exitCode: denied ? 2 : 1,
        hint: denied ? `check ${keyEnvOf(p)}` : 'check that the server is up and the model name is right',
        cause: err,
      });
    }
    const parsed = parseExtraction(reply, s.messages.length);
    if (parsed) return parsed;
    ctx.log.warn(`chunk: session ${s.id}, attempt ${attempt}: the extraction reply has no <memories> section of dated facts`);
  }
  throw new NoUsableReply();
}
