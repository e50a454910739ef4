import { openAsBlob } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchCallError, batchCalls } from './batch.js';
import { submissionTokenTime } from './ledger.js';
import { completionBody, completionReply } from './openai.js';
import { endpointSecrets, openaiSdk } from './sdk.js';
import type { BatchApi, BatchRequest, BatchResult, BatchStatus, ChatEndpoint, ChatReply } from './types.js';

/**
 * OpenAI's Batch API through the official `openai` SDK: the requests go up as one JSONL file (purpose `batch`),
 * a batch is created over it for /v1/chat/completions with a 24 h window and the submission token as metadata,
 * and the output and error files are streamed line by line once it ends.
 */

/** Provider states of a batch still running; every other state (completed, failed, expired, cancelled) has ended. */
const RUNNING = new Set(['validating', 'in_progress', 'finalizing', 'cancelling']);

/** Uploads of up to 200 MB and result files of that size need longer than one chat completion's deadline. */
const FILE_TIMEOUT_MS = 600_000;

/** A submission older than this before its token's time is not the one looked for (clock skew allowance). */
const TOKEN_SKEW_MS = 3_600_000;

/** One request as a line of the batch input file. */
export function openaiBatchLine(model: string, r: BatchRequest): string {
  const { stream: _sync, ...body } = completionBody(model, r.prompt, r.decoding);
  return JSON.stringify({ custom_id: r.customId, method: 'POST', url: '/v1/chat/completions', body });
}

/** The lines of a streamed body, decoded as UTF-8, without loading the whole body into one string. */
export async function* bodyLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    const parts = rest.split('\n');
    rest = parts.pop() as string;
    for (const line of parts) if (line.trim() !== '') yield line;
  }
  rest += decoder.decode();
  if (rest.trim() !== '') yield rest;
}

/** A chat completion body as a reply, parsed as the synchronous client parses it; no choices is a broken reply. */
function replyOf(body: unknown): ChatReply | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const r = completionReply(body);
  return 'reason' in r ? undefined : r;
}

/**
 * One line of an output or error file as a result: status 200 with choices is a reply; another status or an
 * error object is a failure, retryable for 408, 409, 429, 5xx and an expired batch.
 */
export function openaiResultOf(line: string): BatchResult | undefined {
  let x: { custom_id?: unknown; response?: { status_code?: number; body?: unknown } | null; error?: { code?: unknown; message?: unknown } | null };
  try {
    x = JSON.parse(line) as typeof x;
  } catch {
    return undefined;
  }
  if (typeof x.custom_id !== 'string') return undefined;
  const customId = x.custom_id;
  const code = x.response?.status_code;
  if (x.error == null && code === 200) {
    const reply = replyOf(x.response?.body);
    return reply === undefined ? { customId, failure: 'HTTP 200 with no choices in the reply', retryable: true } : { customId, reply };
  }
  if (x.error != null) {
    const said = typeof x.error.message === 'string' ? ` (${x.error.message.slice(0, 200)})` : '';
    return { customId, failure: `${String(x.error.code ?? 'error')}${said}`, retryable: x.error.code === 'batch_expired' };
  }
  const msg = (x.response?.body as { error?: { message?: unknown } } | undefined)?.error?.message;
  const status = code ?? 0;
  return {
    customId,
    failure: `HTTP ${status}${typeof msg === 'string' ? ` (${msg.slice(0, 200)})` : ''}`,
    retryable: [408, 409, 429].includes(status) || status >= 500,
  };
}

type OpenAIClient = import('openai').OpenAI;
type OpenAIBatch = import('openai').OpenAI.Batches.Batch;

function statusOf(b: OpenAIBatch): BatchStatus {
  const c = b.request_counts;
  return {
    state: RUNNING.has(b.status) ? 'in_progress' : 'ended',
    providerState: b.status,
    counts: { total: c?.total ?? 0, succeeded: c?.completed ?? 0, failed: c?.failed ?? 0 },
  };
}

/** The provider's errors of a batch rejected at validation, as one reason. */
function validationErrors(b: OpenAIBatch): string {
  const errs = (b.errors?.data ?? []).map((e) => `${e.code ?? 'error'}${e.line == null ? '' : ` at line ${e.line}`}: ${e.message ?? ''}`.trim());
  return errs.length === 0 ? 'no reason given' : errs.slice(0, 5).join('; ');
}

/** Submits the requests as one batch: the JSONL file is built in memory (a few hundred MB at most), uploaded, then the batch created. */
async function submitBatch(client: OpenAIClient, ep: ChatEndpoint, requests: readonly BatchRequest[], token: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'harness-batch-'));
  try {
    const name = `harness-${token}.jsonl`;
    const path = join(dir, name);
    await writeInputFile(path, ep.model, requests);
    // A Blob over the file: the SDK streams it from disk instead of holding a 200 MB body (and its copies) in memory.
    const file = new File([await openAsBlob(path)], name, { type: 'application/jsonl' });
    const uploaded = await client.files.create({ file, purpose: 'batch' }, { timeout: FILE_TIMEOUT_MS });
    const batch = await client.batches.create({
      input_file_id: uploaded.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { harness_token: token },
    });
    return batch.id;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes the batch input file a megabyte at a time: the lines are never joined into one string. */
async function writeInputFile(path: string, model: string, requests: readonly BatchRequest[]): Promise<void> {
  const fh = await open(path, 'w');
  try {
    let chunk = '';
    for (const r of requests) {
      chunk += `${openaiBatchLine(model, r)}\n`;
      if (chunk.length >= 1 << 20) {
        await fh.write(chunk);
        chunk = '';
      }
    }
    if (chunk !== '') await fh.write(chunk);
  } finally {
    await fh.close();
  }
}

/** The id of the batch whose metadata carries `token`, scanning the newest batches back to the token's time. */
async function findByToken(client: OpenAIClient, token: string): Promise<string | undefined> {
  const since = submissionTokenTime(token);
  for await (const b of client.batches.list({ limit: 100 })) {
    if (b.metadata?.['harness_token'] === token) return b.id;
    if (since !== undefined && b.created_at * 1000 < since - TOKEN_SKEW_MS) return undefined;
  }
  return undefined;
}

/** The results of an ended batch: its output file, then its error file, each streamed; a failed batch throws its errors. */
async function* resultsOf(client: OpenAIClient, id: string, what: (op: string, err: unknown) => BatchCallError): AsyncGenerator<BatchResult> {
  const b = await client.batches.retrieve(id).catch((err: unknown) => Promise.reject(what(`reading batch ${id}`, err)));
  if (b.status === 'failed') throw new BatchCallError(`openai batch ${id} failed validation: ${validationErrors(b)}`, false);
  for (const fileId of [b.output_file_id, b.error_file_id]) {
    if (fileId == null || fileId === '') continue;
    try {
      const res = await client.files.content(fileId, { timeout: FILE_TIMEOUT_MS });
      if (res.body === null) continue;
      for await (const line of bodyLines(res.body as unknown as AsyncIterable<Uint8Array>)) {
        const r = openaiResultOf(line);
        if (r !== undefined) yield r;
      }
    } catch (err) {
      throw what(`reading results file ${fileId} of batch ${id}`, err);
    }
  }
}

/** OpenAI's Batch API for `ep` (any server that speaks it); the key is read now from `env`, as for a synchronous client. */
export async function openaiBatchApi(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, who: string): Promise<BatchApi> {
  const client = await openaiSdk(ep, env, source, who);
  const { what, wrap } = batchCalls('openai', endpointSecrets(ep, env));
  return {
    provider: 'openai',
    requestBytes: (r) => Buffer.byteLength(openaiBatchLine(ep.model, r), 'utf8') + 1,
    submit: (requests, token) => wrap('submitting a batch', () => submitBatch(client, ep, requests, token)),
    findSubmitted: (token) => wrap('listing batches', () => findByToken(client, token)),
    status: (id) => wrap(`status of batch ${id}`, async () => statusOf(await client.batches.retrieve(id))),
    results: (id) => resultsOf(client, id, what),
  };
}
