import { relative, resolve } from 'node:path';
import { ContentStore } from '../cache/index.js';
import type { CliIo } from '../cli/io.js';
import { UsageError } from '../errors.js';
import { urlCredentialProblem } from '../util/redact.js';
import { chatEndpointOf, keyEnvOf } from '../config/llm-endpoint.js';
import { chatClient } from '../llm/client.js';
import { publicBaseURL } from '../llm/openai.js';
import type { ProviderName } from '../llm/types.js';
import { buildEvalSet, QUERY_KINDS, type QueryKind } from './build.js';

export interface BuildArgs {
  readonly corpus?: string;
  readonly out?: string;
  readonly model?: string;
  readonly judgeModel?: string;
  readonly baseUrl?: string;
  readonly apiKeyEnv?: string | undefined;
  readonly provider: string;
  readonly batch: boolean;
  readonly local: boolean;
  readonly strataBy: string;
  readonly perStratum: number;
  readonly kinds: string;
  readonly hops: number;
  readonly maxAttempts: number;
  readonly temperature: number;
  readonly seed: number;
  readonly concurrency: number;
  readonly hand?: string;
  readonly cache: string;
}

/** `harness evalset build`: flags checked, the generator reached through the openai SDK, a summary returned. */
export async function runBuild(a: BuildArgs, io: CliIo): Promise<string> {
  const need = (flag: string, v: string | undefined): string => {
    if (v === undefined || v === '') throw new UsageError(`evalset build needs --${flag}`);
    return v;
  };
  const corpus = resolve(io.cwd, need('corpus', a.corpus));
  const out = resolve(io.cwd, need('out', a.out));
  const model = need('model', a.model);
  const judgeModel = need('judge-model', a.judgeModel);
  const kinds = a.kinds.split(',').map((k) => k.trim());
  const bad = kinds.filter((k) => !(QUERY_KINDS as readonly string[]).includes(k));
  if (bad.length > 0 || kinds.length === 0) throw new UsageError(`--kinds ${a.kinds}: known kinds are ${QUERY_KINDS.join(', ')}`);
  for (const [flag, v, min] of [
    ['per-stratum', a.perStratum, 1],
    ['hops', a.hops, 2],
    ['max-attempts', a.maxAttempts, 1],
    ['concurrency', a.concurrency, 1],
  ] as const) {
    if (!Number.isInteger(v) || v < min) throw new UsageError(`--${flag} ${v}: give a whole number of at least ${min}`);
  }
  if (!(a.temperature >= 0 && a.temperature <= 2)) throw new UsageError(`--temperature ${a.temperature}: give a value in [0, 2]`);
  if (a.provider !== 'openai' && a.provider !== 'anthropic') throw new UsageError(`--provider ${a.provider}: give openai or anthropic`);
  const provider: ProviderName = a.provider;
  const apiKeyEnv = keyEnvOf({ provider, apiKeyEnv: a.apiKeyEnv });
  const credential =
    a.baseUrl === undefined ? undefined : urlCredentialProblem(a.baseUrl, `the key is read from ${apiKeyEnv}, so remove the credentials from the URL`);
  if (credential !== undefined) throw new UsageError(`--base-url ${credential}`);
  const block = {
    provider,
    model,
    baseURL: a.baseUrl,
    apiKeyEnv,
    local: a.local,
    maxRetries: 4,
    timeoutMs: 120_000,
    concurrency: a.concurrency,
    batch: a.batch,
  };
  const endpoint = chatEndpointOf(block, resolve(io.cwd, a.cache), { stage: 'evalset-build' });
  const chat = await chatClient(endpoint, io.env, 'harness evalset build', { log: io.log, label: 'evalset build', who: 'evalset build' });
  const m = await buildEvalSet({
    corpus,
    out,
    generator: { model, baseURL: publicBaseURL(a.baseUrl), local: a.local },
    judgeModel,
    chat,
    decoding: { temperature: a.temperature, maxTokens: 200 },
    strataBy: a.strataBy
      .split(',')
      .map((f) => f.trim())
      .filter((f) => f !== ''),
    perStratum: a.perStratum,
    kinds: kinds as QueryKind[],
    hops: a.hops,
    maxAttempts: a.maxAttempts,
    seed: a.seed,
    concurrency: a.concurrency,
    ...(a.hand === undefined ? {} : { hand: resolve(io.cwd, a.hand) }),
    store: new ContentStore(resolve(io.cwd, a.cache), { log: io.log }),
    log: io.log,
  });
  const c = m.counts;
  const per = (r: Readonly<Record<string, number>>) => kinds.map((k) => `${k} ${r[k] ?? 0}`).join(', ');
  return [
    `seeds: ${Object.values(m.seeds).reduce((n, s) => n + s.length, 0)} memories from ${Object.keys(m.seeds).length} seed groups (${m.strataBy.join(', ') || 'none'}); sensitive, not sent: ${c.sensitiveExcluded}`,
    `  accepted: ${per(c.accepted)}; hand-authored: ${c.hand}`,
    `  rejected and regenerated: ${per(c.rejected)}; dropped: ${per(c.dropped)}`,
    `  requests sent: ${c.requests}; replies from cache: ${c.cachedReplies}; tokens: ${m.tokens.prompt} in, ${m.tokens.completion} out`,
    `eval set (memory format): ${relative(io.cwd, out) || out}`,
    '',
  ].join('\n');
}
