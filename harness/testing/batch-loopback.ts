import type { BatchSettings, ChatEndpoint, ProviderName } from '../llm/types.js';
import { type Loopback, type LoopbackReply, type LoopbackRequest, startLoopback } from './loopback.js';

/**
 * A loopback server speaking the batch APIs of both providers, for tests of the batch clients through the real
 * SDKs: OpenAI's files and batches (upload a JSONL file, create, retrieve, list, download the output and error
 * files) and Anthropic's Message Batches (create, retrieve, results at the batch's results URL). It also answers
 * the synchronous chat endpoints of both, from the same `answer`, so a test can hold a batch reply against a
 * synchronous one. It counts each custom id's submissions, and can hold batches, fail or expire given requests
 * once, make batches take polls before they end, and reject a batch at validation.
 */

export interface BatchLoopbackOptions {
  /** The reply text to a prompt. */
  answer(prompt: string, model: string): string;
}

/** How one request of a batch ends, decided when the batch ends. */
type Outcome = 'ok' | 'server' | 'invalid' | 'expired';

interface LoopRequest {
  readonly customId: string;
  readonly prompt: string;
  readonly model: string;
}

interface LoopBatch {
  readonly id: string;
  readonly provider: 'openai' | 'anthropic';
  readonly createdAt: number;
  readonly metadata: Record<string, string>;
  readonly requests: readonly LoopRequest[];
  polls: number;
  outcomes?: ReadonlyMap<string, Outcome>;
  /** Set: rejected at validation (OpenAI `failed`), with this message. */
  readonly rejected?: string;
}

export interface BatchLoopback {
  /** The server root: OpenAI's base URL is `${url}/v1`, Anthropic's is `url`. */
  readonly url: string;
  readonly loopback: Loopback;
  /** How many times each custom id was submitted in a batch. */
  readonly submitted: ReadonlyMap<string, number>;
  /** The ids of the batches created, oldest first. */
  readonly batchIds: readonly string[];
  /** Status reads a batch answers `in progress` before it ends (default 1). */
  pollsBeforeEnd: number;
  /** Batches stay in progress, however often polled, until `release()`. */
  hold(): void;
  release(): void;
  /** The next batch holding each of these ids ends with that request failed: a server error (retryable) or an invalid request. */
  failOnce(customIds: Iterable<string>, kind?: 'server' | 'invalid'): void;
  /** The next batch holding each of these ids ends with that request expired (OpenAI: the batch `expired`). */
  expireOnce(customIds: Iterable<string>): void;
  /** The next OpenAI batch created fails validation with this message. */
  rejectNext(message: string): void;
  close(): Promise<void>;
}

/** The environment of the batch tests: the key variable of {@link loopbackBatchEndpoint}. */
export const BATCH_TEST_ENV = { BATCH_TEST_KEY: 'sk-batch-test-0123456789' } as const;

/** An endpoint on a batch loopback at `url`, batching with short timers into `ledgerDir`. */
export function loopbackBatchEndpoint(provider: ProviderName, url: string, ledgerDir: string, batch: Partial<BatchSettings> = {}): ChatEndpoint {
  return {
    provider,
    model: provider === 'anthropic' ? 'claude-t' : 'gpt-t',
    baseURL: provider === 'anthropic' ? url : `${url}/v1`,
    apiKeyEnv: 'BATCH_TEST_KEY',
    local: false,
    maxRetries: 2,
    timeoutMs: 10_000,
    concurrency: 1,
    maxConcurrency: 1,
    batch: { pollMs: 20, maxRequests: 50, maxBytes: 1_000_000, idleMs: 20, maxResubmits: 2, ledgerDir, ...batch },
  };
}

/** `n` distinct prompts, the same on every call. */
export function numberedPrompts(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `Question ${i + 1}: what is ${i + 1} squared?`);
}

/** The token counts the server reports: words of the prompt and of the reply. */
export function loopbackTokens(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

/** The model a reply names: a dated snapshot of the model asked for. */
export const servedModel = (model: string) => `${model}-2026-01-01`;

function openaiCompletion(content: string, prompt: string, model: string) {
  const usage = { prompt_tokens: loopbackTokens(prompt), completion_tokens: loopbackTokens(content) };
  return {
    id: 'chatcmpl-loop',
    object: 'chat.completion',
    created: 0,
    model: servedModel(model),
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

function anthropicMessage(content: string, prompt: string, model: string) {
  return {
    id: 'msg_loop',
    type: 'message',
    role: 'assistant',
    model: servedModel(model),
    content: [{ type: 'text', text: content }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: loopbackTokens(prompt), output_tokens: loopbackTokens(content) },
  };
}

/** The `file` part of a multipart upload (the SDK's FormData), as text. */
function multipartFile(req: LoopbackRequest): string {
  const boundary = /boundary=("?)([^";]+)\1/.exec(String(req.headers['content-type']))?.[2];
  if (boundary === undefined) throw new Error('not a multipart upload');
  for (const part of req.body.split(`--${boundary}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0 && /name="file"/.test(part.slice(0, split))) return part.slice(split + 4).replace(/\r\n$/, '');
  }
  throw new Error('no file part in the upload');
}

/** The requests of an OpenAI batch input file. */
function openaiRequests(jsonl: string): LoopRequest[] {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const x = JSON.parse(l) as { custom_id: string; body: { model: string; messages: { content: string }[] } };
      return { customId: x.custom_id, prompt: x.body.messages[0]?.content ?? '', model: x.body.model };
    });
}

/** The requests of an Anthropic create body. */
function anthropicRequests(json: unknown): LoopRequest[] {
  const x = json as { requests: { custom_id: string; params: { model: string; messages: { content: string }[] } }[] };
  return x.requests.map((r) => ({ customId: r.custom_id, prompt: r.params.messages[0]?.content ?? '', model: r.params.model }));
}

class BatchServer {
  readonly submitted = new Map<string, number>();
  readonly batches = new Map<string, LoopBatch>();
  readonly files = new Map<string, string>();
  readonly failures = new Map<string, Outcome>();
  pollsBeforeEnd = 1;
  held = false;
  rejectMessage: string | undefined;
  url = '';
  private seq = 0;

  constructor(private readonly answer: (prompt: string, model: string) => string) {}

  nextId(prefix: string): string {
    this.seq++;
    return `${prefix}${String(this.seq).padStart(6, '0')}`;
  }

  create(provider: LoopBatch['provider'], requests: LoopRequest[], metadata: Record<string, string>): LoopBatch {
    for (const r of requests) this.submitted.set(r.customId, (this.submitted.get(r.customId) ?? 0) + 1);
    const rejected = provider === 'openai' ? this.rejectMessage : undefined;
    this.rejectMessage = undefined;
    const id = this.nextId(provider === 'openai' ? 'batch_' : 'msgbatch_');
    const b: LoopBatch = {
      id,
      provider,
      createdAt: Math.floor(Date.now() / 1000),
      metadata,
      requests,
      polls: 0,
      ...(rejected === undefined ? {} : { rejected }),
    };
    this.batches.set(id, b);
    return b;
  }

  /** Counts a status read; a batch not held ends after `pollsBeforeEnd` reads, its outcomes fixed then. */
  poll(b: LoopBatch): void {
    if (b.outcomes !== undefined || b.rejected !== undefined || this.held) return;
    b.polls++;
    if (b.polls <= this.pollsBeforeEnd) return;
    const outcomes = new Map<string, Outcome>();
    for (const r of b.requests) {
      outcomes.set(r.customId, this.failures.get(r.customId) ?? 'ok');
      this.failures.delete(r.customId);
    }
    b.outcomes = outcomes;
  }

  count(b: LoopBatch, kind: Outcome): number {
    return [...(b.outcomes?.values() ?? [])].filter((o) => o === kind).length;
  }

  reply(r: LoopRequest): string {
    return this.answer(r.prompt, r.model);
  }
}

function openaiBatchBody(s: BatchServer, b: LoopBatch) {
  const ended = b.outcomes !== undefined;
  const expired = s.count(b, 'expired') > 0;
  const status = b.rejected !== undefined ? 'failed' : !ended ? (b.polls === 0 ? 'validating' : 'in_progress') : expired ? 'expired' : 'completed';
  const ok = s.count(b, 'ok');
  return {
    id: b.id,
    object: 'batch',
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
    input_file_id: `file-in-${b.id}`,
    created_at: b.createdAt,
    status,
    metadata: b.metadata,
    request_counts: { total: b.requests.length, completed: ok, failed: ended ? b.requests.length - ok : 0 },
    ...(ended && ok > 0 ? { output_file_id: `file-out-${b.id}` } : {}),
    ...(ended && ok < b.requests.length ? { error_file_id: `file-err-${b.id}` } : {}),
    ...(b.rejected === undefined ? {} : { errors: { object: 'list', data: [{ code: 'invalid_request', line: 1, message: b.rejected }] } }),
  };
}

/** The output and error file lines of an ended OpenAI batch. */
function openaiResultLines(s: BatchServer, b: LoopBatch, which: 'out' | 'err'): string {
  const lines: string[] = [];
  for (const r of b.requests) {
    const o = b.outcomes?.get(r.customId);
    if ((o === 'ok') !== (which === 'out')) continue;
    const base = { id: `batch_req_${r.customId.slice(0, 8)}`, custom_id: r.customId };
    if (o === 'ok')
      lines.push(
        JSON.stringify({ ...base, response: { status_code: 200, request_id: 'r', body: openaiCompletion(s.reply(r), r.prompt, r.model) }, error: null }),
      );
    else if (o === 'expired')
      lines.push(
        JSON.stringify({
          ...base,
          response: null,
          error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
        }),
      );
    else {
      const status = o === 'server' ? 500 : 400;
      lines.push(
        JSON.stringify({
          ...base,
          response: { status_code: status, request_id: 'r', body: { error: { message: `loopback ${o} failure`, type: o } } },
          error: null,
        }),
      );
    }
  }
  return lines.map((l) => `${l}\n`).join('');
}

function openaiList(s: BatchServer, req: LoopbackRequest): LoopbackReply {
  const all = [...s.batches.values()].filter((b) => b.provider === 'openai').reverse();
  const after = req.query.get('after');
  const start = after === null ? 0 : all.findIndex((b) => b.id === after) + 1;
  const limit = Number(req.query.get('limit') ?? '20');
  const page = all.slice(start, start + limit);
  return { body: { object: 'list', data: page.map((b) => openaiBatchBody(s, b)), has_more: start + limit < all.length } };
}

function openaiRoute(s: BatchServer, req: LoopbackRequest): LoopbackReply | undefined {
  const p = req.path;
  if (req.method === 'POST' && p === '/v1/files') {
    const id = s.nextId('file-');
    s.files.set(id, multipartFile(req));
    return { body: { id, object: 'file', bytes: 0, created_at: 0, filename: 'input.jsonl', purpose: 'batch', status: 'processed' } };
  }
  if (req.method === 'POST' && p === '/v1/batches') {
    const body = req.json as { input_file_id: string; metadata?: Record<string, string> };
    const input = s.files.get(body.input_file_id);
    if (input === undefined) return { status: 404, body: { error: { message: `no file ${body.input_file_id}` } } };
    return { body: openaiBatchBody(s, s.create('openai', openaiRequests(input), body.metadata ?? {})) };
  }
  if (req.method === 'GET' && p === '/v1/batches') return openaiList(s, req);
  const batch = /^\/v1\/batches\/([^/]+)$/.exec(p);
  if (req.method === 'GET' && batch !== null) {
    const b = s.batches.get(batch[1] as string);
    if (b === undefined) return { status: 404, body: { error: { message: 'no such batch' } } };
    s.poll(b);
    return { body: openaiBatchBody(s, b) };
  }
  const file = /^\/v1\/files\/file-(out|err)-([^/]+)\/content$/.exec(p);
  if (req.method === 'GET' && file !== null) {
    const b = s.batches.get(file[2] as string);
    return b?.outcomes === undefined
      ? { status: 404, body: { error: { message: 'no such file' } } }
      : { body: openaiResultLines(s, b, file[1] as 'out' | 'err') };
  }
  return undefined;
}

function anthropicBatchBody(s: BatchServer, b: LoopBatch) {
  const ended = b.outcomes !== undefined;
  const processing = ended ? 0 : b.requests.length;
  return {
    id: b.id,
    type: 'message_batch',
    processing_status: ended ? 'ended' : 'in_progress',
    request_counts: {
      processing,
      succeeded: s.count(b, 'ok'),
      errored: s.count(b, 'server') + s.count(b, 'invalid'),
      canceled: 0,
      expired: s.count(b, 'expired'),
    },
    created_at: new Date(b.createdAt * 1000).toISOString(),
    expires_at: new Date(b.createdAt * 1000 + 86_400_000).toISOString(),
    ended_at: ended ? new Date().toISOString() : null,
    archived_at: null,
    cancel_initiated_at: null,
    results_url: ended ? `${s.url}/v1/messages/batches/${b.id}/results` : null,
  };
}

function anthropicResultLines(s: BatchServer, b: LoopBatch): string {
  return b.requests
    .map((r) => {
      const o = b.outcomes?.get(r.customId);
      const result =
        o === 'ok'
          ? { type: 'succeeded', message: anthropicMessage(s.reply(r), r.prompt, r.model) }
          : o === 'expired'
            ? { type: 'expired' }
            : {
                type: 'errored',
                error: { type: 'error', error: { type: o === 'server' ? 'api_error' : 'invalid_request_error', message: `loopback ${o} failure` } },
              };
      return `${JSON.stringify({ custom_id: r.customId, result })}\n`;
    })
    .join('');
}

function anthropicRoute(s: BatchServer, req: LoopbackRequest): LoopbackReply | undefined {
  const p = req.path;
  if (req.method === 'POST' && p === '/v1/messages/batches') return { body: anthropicBatchBody(s, s.create('anthropic', anthropicRequests(req.json), {})) };
  const m = /^\/v1\/messages\/batches\/([^/]+)(\/results)?$/.exec(p);
  if (req.method !== 'GET' || m === null) return undefined;
  const b = s.batches.get(m[1] as string);
  if (b === undefined) return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'no such batch' } } };
  if (m[2] === undefined) {
    s.poll(b);
    return { body: anthropicBatchBody(s, b) };
  }
  return b.outcomes === undefined
    ? { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: 'not ended' } } }
    : { body: anthropicResultLines(s, b) };
}

/** The synchronous chat endpoints of both providers, answering from the same `answer`. */
function syncRoute(s: BatchServer, req: LoopbackRequest): LoopbackReply | undefined {
  if (req.method !== 'POST' || (req.path !== '/v1/chat/completions' && req.path !== '/v1/messages')) return undefined;
  const x = req.json as { model: string; messages: { content: string }[] };
  const r = { customId: '', prompt: x.messages[0]?.content ?? '', model: x.model };
  const text = s.reply(r);
  return { body: req.path === '/v1/messages' ? anthropicMessage(text, r.prompt, r.model) : openaiCompletion(text, r.prompt, r.model) };
}

export async function startBatchLoopback(opts: BatchLoopbackOptions): Promise<BatchLoopback> {
  const s = new BatchServer(opts.answer);
  const loopback = await startLoopback(
    (req) =>
      openaiRoute(s, req) ?? anthropicRoute(s, req) ?? syncRoute(s, req) ?? { status: 404, body: { error: { message: `no route ${req.method} ${req.path}` } } },
  );
  s.url = loopback.url;
  return {
    url: loopback.url,
    loopback,
    submitted: s.submitted,
    get batchIds() {
      return [...s.batches.keys()];
    },
    get pollsBeforeEnd() {
      return s.pollsBeforeEnd;
    },
    set pollsBeforeEnd(n: number) {
      s.pollsBeforeEnd = n;
    },
    hold: () => void (s.held = true),
    release: () => void (s.held = false),
    failOnce: (ids, kind = 'server') => {
      for (const id of ids) s.failures.set(id, kind);
    },
    expireOnce: (ids) => {
      for (const id of ids) s.failures.set(id, 'expired');
    },
    rejectNext: (message) => void (s.rejectMessage = message),
    close: () => loopback.close(),
  };
}
