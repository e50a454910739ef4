import { z } from 'zod';
import { timeoutMsSchema } from '../../arms/remote/limits.js';
import { urlCredentialProblem } from '../util/redact.js';
import { endpointShape, keyEnvOf, priceSchema } from './llm-endpoint.js';

/**
 * The `judge:` block of an ablation config (every field also a `harness judge` flag). Validated by the config
 * loader at load time, so a typo fails before any run. Not part of the config hash: how the judging was done
 * is recorded with the judgments (provenance and the qrels version), and a report prints that version.
 */
export const judgeConfigSchema = z
  .object({
    /** The judge model, as the server names it. Must differ from the model that generated the queries. */
    model: z.string().min(1),
    /**
     * `openai`: an OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (llama.cpp), http://127.0.0.1:11434/v1
     * (Ollama); `anthropic`: the server's root (the SDK adds /v1/messages).
     */
    baseURL: z.string().url().optional(),
    /** The environment variable holding the API key (never the key itself); default the provider's. */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .optional(),
    /** The server runs on this machine or network: only then are `sensitive` documents sent to it. */
    local: z.boolean().default(false),
    /** Pool depth: the top `depth` documents of every system's run, per query. */
    depth: z.number().int().positive().default(10),
    /** Replies per pair; the grade is their majority (ties to the lower grade). */
    samples: z.number().int().positive().default(1),
    temperature: z.number().min(0).max(2).default(0),
    maxTokens: z.number().int().positive().default(64),
    ...endpointShape,
    maxRetries: z.number().int().min(0).default(4),
    /** One attempt, to the last byte of the reply; at most a Node.js timer's longest wait. */
    timeoutMs: timeoutMsSchema().default(120_000),
    /** New requests after an unparsable reply, per sample, before it is counted as a parse failure. */
    parseRetries: z.number().int().min(0).default(2),
    /** A prompt file of harness/judge/prompts/, without .md. */
    prompt: z.string().default('umbrela-v1'),
    /** USD per million tokens, for the cost line; a batch is priced at `batchDiscount` off. */
    price: priceSchema.optional(),
    /** `harness judge --audit`: how many pairs each probe re-grades, and when a probe's effect is a serious warning. */
    audit: z
      .object({
        /** Pairs per probe, drawn like the kappa sample (stratified, multi-hop weighted up). */
        pairs: z.number().int().positive().default(50),
        seed: z.number().int().min(0).default(1),
        /** A probe that moves the grade up in more than this share of its pairs is a `serious` report warning (ADR 0040). */
        maxUpRate: z.number().gt(0).lt(1).default(0.2),
        /** Length padding: the passage repeated to this many times its length. */
        padFactor: z.number().int().min(2).default(4),
        /** Keyword stuffing: the query's words, this many times, on a line before the passage. */
        stuffRepeats: z.number().int().positive().default(3),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((j, ctx) => {
    // A credential in the base URL would reach the judgments' manifest and every message naming the server.
    const credential =
      j.baseURL === undefined ? undefined : urlCredentialProblem(j.baseURL, `the key is read from ${keyEnvOf(j)}, so remove the credentials from the URL`);
    if (credential !== undefined) ctx.addIssue({ code: 'custom', path: ['baseURL'], message: credential });
  });

export type JudgeConfig = z.output<typeof judgeConfigSchema>;
