import { sha256Hex } from '../cache/index.js';
import { ConfigError } from '../errors.js';
import { tokensOf } from '../llm/price.js';
import { type ChatFn, openaiChat } from '../llm/openai.js';
import { loadPrompt, type PromptTemplate, renderPrompt } from '../judge/prompt.js';
import { formatContext, protocolOf } from './context.js';
import { checkPlaceholders, type PromptSlots, promptFile } from './judges.js';
import type { AnswerQuestion, ContextItem, ReaderOutcome } from './types.js';

/** Something that answers a question from a context: an LLM behind an OpenAI-compatible server, or the extractive baseline. */
export interface Reader {
  readonly id: string;
  /** May receive sensitive memories. */
  readonly local: boolean;
  readonly model: string;
  /** sha256 over everything of the reader's that changes an answer (model, decoding, budget, prompt): for cache keys. */
  readonly fingerprint?: string;
  answer(q: AnswerQuestion, context: readonly ContextItem[]): Promise<ReaderOutcome>;
}

/** A chat reader's endpoint, decoding, budget and prompt. */
export interface ChatReaderConfig {
  readonly model: string;
  /** Default: the OpenAI API; any OpenAI-compatible server works. */
  readonly baseURL?: string;
  readonly apiKeyEnv: string;
  /** Declared by the user: the server runs on this machine or network, so sensitive memories may go to it. */
  readonly local: boolean;
  readonly temperature: number;
  readonly maxTokens: number;
  /** The most tokens of context (estimated as characters / 4) the reader is shown. */
  readonly budgetTokens: number;
  /** A prompt file that replaces the built-in `harness/answer/prompts/reader.md`; the path as given (the caller resolves it). */
  readonly promptFile?: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
}

/** What a reader over any chat function needs of the config: the rest is how to reach the server. */
export type ReaderSettings = Pick<ChatReaderConfig, 'model' | 'local' | 'temperature' | 'maxTokens' | 'budgetTokens'>;

/** The reader prompt's placeholders: the history and the question must be there; the question's date may. */
export const READER_SLOTS: PromptSlots = { required: ['history', 'question'], optional: ['date'] };

/** What `{{date}}` shows when the question has no date. */
const NO_DATE = 'not given';

/** The reader's prompt: the user's file, checked, or the built-in one. */
export async function readerPrompt(file: string | undefined): Promise<PromptTemplate> {
  if (file !== undefined) return promptFile(file, READER_SLOTS);
  const t = loadPrompt('answer', 'reader');
  checkPlaceholders(t, READER_SLOTS, 'harness/answer/prompts/reader.md');
  return t;
}

/** The fingerprint of a chat reader: the server is left out, as for the relevance judge, so a moved server keeps its answers. */
function chatFingerprint(cfg: ReaderSettings, prompt: PromptTemplate): string {
  const { model, temperature, maxTokens, budgetTokens } = cfg;
  return sha256Hex(JSON.stringify({ kind: 'chat', model, temperature, maxTokens, budgetTokens, prompt: prompt.sha256 }));
}

/**
 * A reader over a chat function (the OpenAI-compatible one of {@link chatReader}, or any ChatFn a test or
 * another client gives). The context is trimmed to the budget by {@link formatContext} (the question's date
 * goes into `{{date}}`, not the history). A failed request or an empty reply is a failed outcome with its
 * reason (the chat client's reasons name no key), never a throw: one question's failure is counted, not fatal.
 */
export function readerOver(chat: ChatFn, cfg: ReaderSettings, prompt: PromptTemplate): Reader {
  const decoding = { temperature: cfg.temperature, maxTokens: cfg.maxTokens };
  return {
    id: `chat:${cfg.model}`,
    local: cfg.local,
    model: cfg.model,
    fingerprint: chatFingerprint(cfg, prompt),
    async answer(q, context) {
      const ctx = formatContext(context, { budgetTokens: cfg.budgetTokens, protocol: protocolOf(q) });
      const text = renderPrompt(prompt, { history: ctx.text, date: q.date?.trim() || NO_DATE, question: q.text });
      try {
        const reply = await chat(text, decoding);
        const tokens = tokensOf(reply);
        if (reply.content.trim() === '') return { status: 'failed', reason: 'the reader replied with no text', tokens };
        return { status: 'answered', text: reply.content.trim(), tokens, model: reply.model ?? cfg.model, context: ctx.included };
      } catch (err) {
        return { status: 'failed', reason: err instanceof Error ? err.message : String(err), tokens: { prompt: 0, completion: 0 } };
      }
    },
  };
}

/**
 * An LLM reader behind a chat endpoint: `chat` when the caller built the client (one shared by every budget of
 * a sweep, so their batches share a ledger), else an OpenAI-compatible client of `cfg` (retries, deadlines,
 * reasons without secrets). The prompt file, when given, is read and checked now, so a mistake stops the run
 * before any request. A missing key for a server not declared local is a config error of `source` naming the
 * variable.
 */
export async function chatReader(cfg: ChatReaderConfig, env: NodeJS.ProcessEnv, source: string, chat?: ChatFn): Promise<Reader> {
  const key = env[cfg.apiKeyEnv];
  if ((key === undefined || key === '') && !cfg.local) {
    throw new ConfigError(source, [`answer reader: ${cfg.apiKeyEnv} is not set; set it, or point baseURL at a local server and declare local: true`]);
  }
  const prompt = await readerPrompt(cfg.promptFile);
  const endpoint = {
    provider: 'openai' as const,
    model: cfg.model,
    ...(cfg.baseURL === undefined ? {} : { baseURL: cfg.baseURL }),
    apiKeyEnv: cfg.apiKeyEnv,
    local: cfg.local,
    maxRetries: cfg.maxRetries,
    timeoutMs: cfg.timeoutMs,
    concurrency: 4,
    maxConcurrency: 4,
  };
  return readerOver(chat ?? (await openaiChat(endpoint, env, source, { who: 'answer reader' })), cfg, prompt);
}
