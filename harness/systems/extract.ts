import pLimit from 'p-limit';
import { z } from 'zod';
import { timeoutMsSchema } from '../../arms/remote/limits.js';
import { redactUrl } from '../../evalset/datasets/download.js';
import type { Document } from '../../evalset/types.js';
import { cacheKey, type ShapeCheck, sha256Hex } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import { EXTRACT_PROMPT_VERSION, type Extraction, extractionPrompt, memoryBlock, parseExtraction } from '../recipes/extract.js';
import { buildSessions, type Session } from '../recipes/session.js';
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
    /** An OpenAI-compatible endpoint; absent: OpenAI's. */
    baseURL: z.string().url().optional(),
    /** v1: gpt-5-mini. */
    model: z.string().min(1),
    /** The environment variable holding the API key (its value is never printed, logged or cached). */
    apiKeyEnv: z.string().default('OPENAI_API_KEY'),
    /** The endpoint runs on this machine or network and needs no key (a placeholder is sent). */
    local: z.boolean().default(false),
    /** Absent: not sent (v1's extractor is a reasoning model without temperature). */
    temperature: z.number().min(0).max(2).optional(),
    timeoutMs: timeoutMsSchema().default(120_000),
    concurrency: z.number().int().positive().default(4),
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

type Chat = import('openai').OpenAI;

/** The SDK client; a missing key is a usage error naming the variable, raised when a scope first needs it. */
async function client(p: ExtractParams, env: NodeJS.ProcessEnv): Promise<Chat> {
  const key = env[p.apiKeyEnv];
  if ((key === undefined || key === '') && !p.local)
    throw new HarnessError(
      `chunk: params.extract needs the API key in ${p.apiKeyEnv}; set it, declare local: true for a local server, or remove params.extract`,
      {
        exitCode: 2,
      },
    );
  const { OpenAI } = await import('openai');
  return new OpenAI({
    apiKey: key === undefined || key === '' ? 'no-key-local-server' : key,
    ...(p.baseURL === undefined ? {} : { baseURL: p.baseURL }),
    timeout: p.timeoutMs,
    maxRetries: p.maxRetries,
  });
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
  let chat: Chat | undefined;
  const limit = pLimit(p.concurrency);
  const parts = await Promise.all(
    sessions.map((s) =>
      limit(async (): Promise<Extracted[]> => {
        const got = await sessionExtraction(s, p, ctx, async () => (chat ??= await client(p, ctx.env)));
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
async function sessionExtraction(s: Session, p: ExtractParams, ctx: NodeContext, chat: () => Promise<Chat>): Promise<Extraction | undefined> {
  const prompt = extractionPrompt(s);
  const key = cacheKey('judge', 1, { ...extractIdentity(p), text: sha256Hex(prompt) });
  try {
    return await ctx.cache.json<Extraction>('judge', key, () => askUntilParsed(s, p, ctx, chat, prompt), extractionCheck(s.messages.length));
  } catch (err) {
    if (err instanceof NoUsableReply) return undefined;
    throw err;
  }
}

async function askUntilParsed(s: Session, p: ExtractParams, ctx: NodeContext, chat: () => Promise<Chat>, prompt: string): Promise<Extraction> {
  const c = await chat();
  for (let attempt = 1; attempt <= p.maxAttempts; attempt++) {
    let reply: string;
    try {
      const res = await c.chat.completions.create({
        model: p.model,
        messages: [{ role: 'user', content: prompt }],
        ...(p.temperature === undefined ? {} : { temperature: p.temperature }),
      });
      reply = res.choices?.[0]?.message?.content ?? '';
    } catch (err) {
      const status = (err as { status?: number }).status;
      const where = p.baseURL === undefined ? 'the OpenAI API' : redactUrl(p.baseURL);
      throw new HarnessError(`chunk: extraction with model ${p.model} at ${where} failed${status === undefined ? '' : ` with HTTP ${status}`}`, {
        exitCode: status === 401 || status === 403 ? 2 : 1,
        hint: status === 401 || status === 403 ? `check ${p.apiKeyEnv}` : 'check that the server is up and the model name is right',
        cause: err,
      });
    }
    const parsed = parseExtraction(reply, s.messages.length);
    if (parsed) return parsed;
    ctx.log.warn(`chunk: session ${s.id}, attempt ${attempt}: the extraction reply has no <memories> section of dated facts`);
  }
  throw new NoUsableReply();
}
