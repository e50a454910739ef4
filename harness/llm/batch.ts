import { createHash } from 'node:crypto';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { redactSecrets } from '../util/redact.js';
import { causeCode } from './attempt.js';
import { Ledger, type LedgerBatch, newSubmissionToken, recoverSubmitting } from './ledger.js';
import type { BatchApi, BatchRequest, BatchResult, BatchSettings, BatchStatus, ChatEndpoint, ChatFn, ChatReply, Decoding, ProviderName } from './types.js';

/**
 * The batch collector: a ChatFn that gathers calls, submits them as provider batches, polls them and resolves
 * each call with its reply. Calls are identified by a custom id (a hash of the endpoint and the request), so a
 * rerun finds in the ledger what an earlier, killed run already submitted and attaches to it rather than paying
 * again. See ledger.ts for what is recorded when.
 */

/** A failed call to a provider's batch endpoints, its reason free of secrets; `retryable` when another try may help. */
export class BatchCallError extends HarnessError {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean, opts: { hint?: string } = {}) {
    super(message, opts);
    this.retryable = retryable;
  }
}

/**
 * An SDK error of `what` (`submitting a batch`, `status of batch X`) as a BatchCallError: HTTP status and the
 * server's short message, or the transport's code; 408, 409, 429, 529 and 5xx and lost connections are retryable.
 * `secrets` (the key, base URL credentials) are blanked out of the message.
 */
export function batchCallError(err: unknown, what: string, provider: ProviderName, secrets: readonly string[]): BatchCallError {
  if (err instanceof BatchCallError) return err;
  if (err instanceof HarnessError) return new BatchCallError(err.message, false, err.hint === undefined ? {} : { hint: err.hint });
  const e = err as { status?: unknown; error?: { message?: unknown; error?: { message?: unknown } }; message?: unknown };
  const clean = (text: string) => redactSecrets(text, secrets).replace(/\s+/g, ' ').slice(0, 300);
  const head = `${provider} ${what} failed`;
  if (typeof e.status === 'number') {
    const inner = e.error?.error?.message ?? e.error?.message;
    const said = typeof inner === 'string' ? inner : typeof e.message === 'string' ? e.message.replace(/^\d{3}\s*/, '') : '';
    const retryable = [408, 409, 429].includes(e.status) || e.status >= 500;
    return new BatchCallError(`${head}: HTTP ${e.status}${said === '' ? '' : ` (${clean(said)})`}`, retryable, {
      ...(e.status === 401 || e.status === 403 ? { hint: 'check the API key variable of the endpoint' } : {}),
    });
  }
  const kind = (err as { constructor?: { name?: string } } | null)?.constructor?.name ?? '';
  // A lost connection or a body cut short (undici's `terminated`, its cause a socket error) may go through next time.
  const code = causeCode(err);
  if (/Connection|Timeout/.test(kind) || (code !== undefined && /^(E[A-Z]+|UND_ERR\w*)$/.test(code))) {
    return new BatchCallError(`${head}: connection failed (${code ?? clean(String(e.message))})`, true);
  }
  return new BatchCallError(`${head}: ${clean(String(e.message ?? err))}`, false);
}

/**
 * A provider's batch endpoint calls with their errors as BatchCallErrors: `what` names the operation, `wrap`
 * runs one and converts what it throws.
 */
export function batchCalls(provider: ProviderName, secrets: readonly string[]) {
  const what = (op: string, err: unknown) => batchCallError(err, op, provider, secrets);
  const wrap = async <T>(op: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw what(op, err);
    }
  };
  return { what, wrap };
}

/**
 * The custom id of one call: 32 hex of a sha256 over the provider, the model, the prompt, the decoding and the
 * tag. Equal calls share it (and one request); a tag draws an independent sample of an equal body.
 */
export function batchRequestId(provider: ProviderName, model: string, prompt: string, decoding: Decoding, tag?: string): string {
  // The fields before the prompt are a JSON array (unambiguous); the prompt is hashed as it is, never copied into
  // one more string: 100,000 calls would leave a prompt's worth of garbage each.
  const head = JSON.stringify([provider, model, decoding.temperature ?? null, decoding.maxTokens ?? null, tag ?? null, prompt.length]);
  return createHash('sha256').update(head).update('\n').update(prompt).digest('hex').slice(0, 32);
}

/** Chunks of `requests` in order, each within `maxRequests` requests and `maxBytes` bytes as the provider counts them. */
export function splitBatches(
  requests: readonly BatchRequest[],
  settings: Pick<BatchSettings, 'maxRequests' | 'maxBytes'>,
  bytes: (r: BatchRequest) => number,
): BatchRequest[][] {
  const out: BatchRequest[][] = [];
  let cur: BatchRequest[] = [];
  let size = 0;
  for (const r of requests) {
    const b = bytes(r);
    if (cur.length > 0 && (cur.length >= settings.maxRequests || size + b > settings.maxBytes)) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(r);
    size += b;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

export interface BatchChatOptions {
  readonly log: Logger;
  /** Names the stage in progress lines (`judge`, `reader`). */
  readonly label: string;
  /** The clock of submission times; tests pass their own. */
  readonly now?: () => Date;
  /** Waits between polls and before a retry; tests pass short or fake ones. */
  readonly sleep?: (ms: number) => Promise<void>;
}

interface Waiter {
  resolve(reply: ChatReply): void;
  reject(err: Error): void;
}

/** A call asked and not yet settled, with everyone waiting for it. */
interface Wanted {
  readonly request: BatchRequest;
  readonly waiters: Waiter[];
  /** Times it was submitted again after a failure. */
  resubmits: number;
  /** The batch whose results settle it, once it is in one. */
  batchId?: string;
  /** Skip the ledger in the next round: it failed in a batch this process read, so it is submitted again. */
  fresh: boolean;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exponential backoff before retry `n` (0-based) of a batch endpoint call: 0.5 s doubling to 8 s. */
function backoffMs(n: number): number {
  return Math.min(500 * 2 ** n, 8000);
}

/** A batch status as one comparable line; a progress line is logged only when it changes. */
function statusLine(s: BatchStatus): string {
  return `${s.providerState}: ${s.counts.succeeded} succeeded, ${s.counts.failed} failed of ${s.counts.total}`;
}

function pushTo(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/**
 * The batches (newest first, submissions without an id left out) that hold each of `ids`, in one pass over the
 * ledger: a ledger of many large batches is read once per round, not once per call.
 */
function ledgerIndex(batches: readonly LedgerBatch[], ids: ReadonlySet<string>): Map<string, LedgerBatch[]> {
  const out = new Map<string, LedgerBatch[]>();
  for (let i = batches.length - 1; i >= 0; i--) {
    const b = batches[i] as LedgerBatch;
    if (b.state === 'submitting') continue;
    for (const id of b.customIds) {
      if (!ids.has(id)) continue;
      const list = out.get(id);
      if (list === undefined) out.set(id, [b]);
      else list.push(b);
    }
  }
  return out;
}

class Collector {
  private readonly wanted = new Map<string, Wanted>();
  /** Custom ids waiting for the next round. */
  private queue = new Set<string>();
  /** Batch ids this process polls. */
  private readonly polling = new Set<string>();
  private ledger: Promise<Ledger> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private roundRunning = false;
  private readonly settings: BatchSettings;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => Date;

  constructor(
    private readonly api: BatchApi,
    private readonly ep: ChatEndpoint,
    private readonly opts: BatchChatOptions,
  ) {
    if (ep.batch === undefined) throw new HarnessError(`${opts.label}: batchChat needs an endpoint with batch settings`);
    this.settings = ep.batch;
    this.sleep = opts.sleep ?? realSleep;
    this.now = opts.now ?? (() => new Date());
  }

  call(prompt: string, decoding: Decoding, tag?: string): Promise<ChatReply> {
    const customId = batchRequestId(this.ep.provider, this.ep.model, prompt, decoding, tag);
    return new Promise<ChatReply>((resolve, reject) => {
      const known = this.wanted.get(customId);
      if (known !== undefined) {
        known.waiters.push({ resolve, reject });
        return;
      }
      this.wanted.set(customId, { request: { customId, prompt, decoding }, waiters: [{ resolve, reject }], resubmits: 0, fresh: false });
      this.queue.add(customId);
      this.arm();
    });
  }

  /** Starts a round now when a batch is full, else once no call arrived for `idleMs`; a running round re-arms when done. */
  private arm(): void {
    if (this.roundRunning) return;
    clearTimeout(this.timer);
    if (this.queue.size >= this.settings.maxRequests) this.timer = setTimeout(() => void this.runRound(), 0);
    else this.timer = setTimeout(() => void this.runRound(), this.settings.idleMs);
  }

  private async runRound(): Promise<void> {
    if (this.roundRunning || this.queue.size === 0) return;
    this.roundRunning = true;
    const ids = [...this.queue];
    this.queue = new Set();
    try {
      await this.round(ids);
    } catch (err) {
      const e = err instanceof HarnessError ? err : new HarnessError(`${this.opts.label}: ${this.api.provider} batch round failed: ${String(err)}`);
      for (const id of ids) if (this.wanted.get(id)?.batchId === undefined) this.reject(id, e);
    } finally {
      this.roundRunning = false;
      if (this.queue.size > 0) this.arm();
    }
  }

  private openLedger(): Promise<Ledger> {
    this.ledger ??= Ledger.open(this.settings.ledgerDir, this.ep)
      .then(async (l) => {
        await recoverSubmitting(l, this.api, this.opts.log, this.opts.label);
        return l;
      })
      .catch((err: unknown) => {
        this.ledger = undefined;
        throw err;
      });
    return this.ledger;
  }

  /**
   * One round: ids held by a batch still running (per the ledger) attach to it; ids held by ended batches are
   * looked up in their results; the rest are submitted in new batches.
   */
  private async round(ids: readonly string[]): Promise<void> {
    const ledger = await this.openLedger();
    const lookup = ids.filter((id) => this.wanted.get(id)?.fresh === false);
    const free = ids.filter((id) => this.wanted.get(id)?.fresh === true);
    const holding = ledgerIndex(ledger.batches, new Set(lookup));
    const ended = new Map<string, string[]>();
    for (const id of lookup) {
      const batches = holding.get(id) ?? [];
      const live = batches.find((b) => b.state === 'in_progress');
      if (live !== undefined) this.attach(id, live);
      else if (batches.length === 0) free.push(id);
      // Newest first: a request resubmitted after a failure succeeded, if at all, in the later batch.
      else for (const b of batches) pushTo(ended, b.id as string, id);
    }
    const unread = new Set([...ended.values()].flat());
    for (const [batchId, held] of ended) {
      const open = held.filter((id) => unread.has(id));
      if (open.length > 0) for (const id of await this.readBack(batchId, open)) unread.delete(id);
    }
    // What no ended batch holds a success for is submitted again.
    free.push(...[...unread].filter((id) => this.wanted.has(id)));
    await this.submitAll(free.filter((id) => this.wanted.has(id)));
  }

  private attach(id: string, b: LedgerBatch): void {
    const w = this.wanted.get(id) as Wanted;
    w.batchId = b.id as string;
    if (!this.polling.has(w.batchId)) {
      this.opts.log.info(`${this.opts.label}: resuming ${this.api.provider} batch ${w.batchId} from the ledger (submitted ${b.submittedAt})`);
    }
    this.watch(w.batchId);
  }

  /** Reads an ended ledger batch's results for `ids`; a success settles its call. Returns the ids settled. */
  private async readBack(batchId: string, ids: readonly string[]): Promise<string[]> {
    const open = new Set(ids);
    const found: string[] = [];
    try {
      for await (const r of this.retryingResults(batchId)) {
        if (!open.has(r.customId) || !('reply' in r)) continue;
        open.delete(r.customId);
        found.push(r.customId);
        this.resolve(r.customId, r.reply);
      }
    } catch (err) {
      this.opts.log.warn(
        `${this.opts.label}: results of ended ${this.api.provider} batch ${batchId} not read (${(err as Error).message}); submitting its requests again`,
      );
    }
    this.opts.log.info(`${this.opts.label}: ${found.length} of ${ids.length} replies read back from ended ${this.api.provider} batch ${batchId}`);
    return found;
  }

  private async submitAll(ids: readonly string[]): Promise<void> {
    const requests: BatchRequest[] = [];
    // Each request's size is worked out once: it serialises the whole prompt.
    const sizes = new Map<BatchRequest, number>();
    for (const id of ids) {
      const w = this.wanted.get(id) as Wanted;
      const bytes = this.api.requestBytes(w.request);
      sizes.set(w.request, bytes);
      if (bytes > this.settings.maxBytes) {
        this.reject(
          id,
          new HarnessError(`${this.opts.label}: a request of ${bytes} bytes exceeds the ${this.api.provider} batch maxBytes ${this.settings.maxBytes}`),
        );
      } else requests.push(w.request);
    }
    for (const chunk of splitBatches(requests, this.settings, (r) => sizes.get(r) as number)) await this.submitOne(chunk);
  }

  /** Records the batch as `submitting`, submits it, records its id, then polls it; a failed submission rejects its calls. */
  private async submitOne(chunk: readonly BatchRequest[]): Promise<void> {
    const ledger = await this.openLedger();
    const token = newSubmissionToken(this.now());
    const entry: LedgerBatch = { token, submittedAt: this.now().toISOString(), state: 'submitting', customIds: chunk.map((r) => r.customId) };
    await ledger.record(entry);
    let id: string;
    try {
      id = await this.submitting(chunk, token);
    } catch (err) {
      await ledger.drop(token);
      const e = err instanceof HarnessError ? err : new HarnessError(String(err));
      for (const r of chunk) this.reject(r.customId, new HarnessError(`${this.opts.label}: ${e.message}`, e.hint === undefined ? {} : { hint: e.hint }));
      return;
    }
    await ledger.record({ ...entry, id, state: 'in_progress' });
    for (const r of chunk) {
      const w = this.wanted.get(r.customId);
      if (w !== undefined) w.batchId = id;
    }
    this.opts.log.info(`${this.opts.label}: submitted ${this.api.provider} batch ${id} (${chunk.length} requests)`);
    this.watch(id);
  }

  /**
   * Submits with retries. Before each retry the provider is asked whether the failed attempt created the batch
   * after all (a lost reply), so a retry does not submit it twice where the provider can tell.
   */
  private async submitting(chunk: readonly BatchRequest[], token: string): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.api.submit(chunk, token);
      } catch (err) {
        if (!(err instanceof BatchCallError && err.retryable) || attempt >= this.ep.maxRetries) throw err;
        await this.sleep(backoffMs(attempt));
        const found = await this.api.findSubmitted(token).catch(() => undefined);
        if (found !== undefined) return found;
      }
    }
  }

  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof BatchCallError && err.retryable) || attempt >= this.ep.maxRetries) throw err;
        await this.sleep(backoffMs(attempt));
      }
    }
  }

  /** The results of an ended batch; a stream cut by a retryable failure is read again from the start (settled ids are skipped). */
  private async *retryingResults(batchId: string): AsyncGenerator<BatchResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        yield* this.api.results(batchId);
        return;
      } catch (err) {
        if (!(err instanceof BatchCallError && err.retryable) || attempt >= this.ep.maxRetries) throw err;
        await this.sleep(backoffMs(attempt));
      }
    }
  }

  private watch(batchId: string): void {
    if (this.polling.has(batchId)) return;
    this.polling.add(batchId);
    void this.poll(batchId)
      .catch((err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        const e = new HarnessError(`${this.opts.label}: ${this.api.provider} batch ${batchId}: ${reason}`, {
          hint: `the batch stays in the ledger (${this.settings.ledgerDir}); run again to resume it`,
        });
        for (const [id, w] of this.wanted) if (w.batchId === batchId) this.reject(id, e);
      })
      .finally(() => this.polling.delete(batchId));
  }

  /** Polls a batch every `pollMs` until it ends, logging each change of its state, then settles its calls from its results. */
  private async poll(batchId: string): Promise<void> {
    const ledger = await this.openLedger();
    let last = '';
    let status: BatchStatus;
    for (;;) {
      status = await this.retrying(() => this.api.status(batchId));
      const line = statusLine(status);
      if (line !== last) {
        this.opts.log.info(`${this.opts.label}: ${this.api.provider} batch ${batchId} ${line}`);
        const entry = ledger.byId(batchId);
        if (entry !== undefined && (entry.providerState !== status.providerState || status.state === 'ended')) {
          await ledger.record({ ...entry, state: status.state, providerState: status.providerState, counts: status.counts });
        }
        last = line;
      }
      if (status.state === 'ended') break;
      await this.sleep(this.settings.pollMs);
    }
    await this.collect(batchId);
  }

  /** Settles the calls of an ended batch from its results; a call they do not name failed, retryably. */
  private async collect(batchId: string): Promise<void> {
    try {
      for await (const r of this.retryingResults(batchId)) {
        if (this.wanted.get(r.customId)?.batchId !== batchId) continue;
        if ('reply' in r) this.resolve(r.customId, r.reply);
        else this.failed(r.customId, batchId, r.failure, r.retryable);
      }
    } catch (err) {
      if (!(err instanceof BatchCallError)) throw err;
      // The whole batch failed (rejected at validation) or its results cannot be read: its calls fail with it.
      for (const [id, w] of this.wanted) if (w.batchId === batchId) this.failed(id, batchId, err.message, false);
      return;
    }
    for (const [id, w] of this.wanted) if (w.batchId === batchId) this.failed(id, batchId, 'the batch results do not name this request', true);
  }

  private failed(id: string, batchId: string, reason: string, retryable: boolean): void {
    const w = this.wanted.get(id) as Wanted;
    if (retryable && w.resubmits < this.settings.maxResubmits) {
      w.resubmits++;
      w.batchId = undefined;
      w.fresh = true;
      this.queue.add(id);
      this.arm();
      return;
    }
    const tries = w.resubmits === 0 ? '' : ` (after ${w.resubmits} resubmission${w.resubmits === 1 ? '' : 's'}; maxResubmits ${this.settings.maxResubmits})`;
    this.reject(id, new HarnessError(`${this.opts.label}: request ${id} failed in ${this.api.provider} batch ${batchId}${tries}: ${reason}`));
  }

  private resolve(id: string, reply: ChatReply): void {
    const w = this.wanted.get(id);
    if (w === undefined) return;
    this.wanted.delete(id);
    for (const waiter of w.waiters) waiter.resolve({ ...reply, batch: true });
  }

  private reject(id: string, err: Error): void {
    const w = this.wanted.get(id);
    if (w === undefined) return;
    this.wanted.delete(id);
    for (const waiter of w.waiters) waiter.reject(err);
  }
}

/**
 * A ChatFn whose calls travel through the provider's batch API (`ep.batch` must be set): calls are collected
 * until none arrived for `idleMs` or `maxRequests` wait, then submitted (or attached to what the ledger says is
 * already submitted), polled every `pollMs`, and settled from the results. A failed, expired or unnamed request
 * is submitted again up to `maxResubmits` times, then its calls reject with an error naming the batch. The
 * caller should keep `inFlight` (a batch's size) calls going, so batches fill.
 */
export function batchChat(api: BatchApi, ep: ChatEndpoint, opts: BatchChatOptions): ChatFn {
  const collector = new Collector(api, ep, opts);
  const fn = (prompt: string, decoding: Decoding, tag?: string) => collector.call(prompt, decoding, tag);
  const settings = ep.batch as BatchSettings;
  return Object.assign(fn, { inFlight: Math.min(settings.inFlight ?? settings.maxRequests, settings.maxRequests) });
}
