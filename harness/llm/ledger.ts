import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256Hex } from '../cache/key.js';
import { writeFileAtomic } from '../cache/store.js';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { publicBaseURL } from './openai.js';
import type { BatchApi, BatchStatus, ChatEndpoint } from './types.js';

/**
 * The batch ledger: what each batch an endpoint was sent holds, so a run killed while its batches run (they
 * take minutes to a day) resumes them instead of paying for them twice. One JSON file per endpoint, rewritten
 * whole and atomically at each change: before a submission (state `submitting`, with the submission token),
 * right after the provider returns the batch id (before any polling), when the provider's state changes and
 * when the batch ends.
 *
 * One process per ledger at a time: two processes batching for the same endpoint at once would each rewrite
 * the file from their own view and lose the other's entries. Nothing here locks against that; it is out of scope.
 */

/** Where a ledger batch stands: being submitted (no id yet), running at the provider, or ended. */
export type LedgerState = 'submitting' | 'in_progress' | 'ended';

/** One batch as the ledger records it. */
export interface LedgerBatch {
  /** Made before submission; the provider keeps it as metadata where it can, so an interrupted submission is found. */
  readonly token: string;
  /** The provider's batch id, once the provider returned it. */
  readonly id?: string;
  /** ISO time the submission started. */
  readonly submittedAt: string;
  readonly state: LedgerState;
  /** The provider's last reported state (validating, in_progress, ended, ...), when polled. */
  readonly providerState?: string;
  readonly counts?: BatchStatus['counts'];
  /** The custom ids of the requests the batch holds. */
  readonly customIds: readonly string[];
}

interface LedgerFile {
  readonly version: 1;
  readonly provider: string;
  readonly baseURL: string;
  readonly model: string;
  readonly batches: readonly LedgerBatch[];
}

/** The provider's public API root when the endpoint names none, as the ledger's identity shows it. */
function endpointBase(ep: ChatEndpoint): string {
  if (ep.baseURL === undefined) return ep.provider === 'anthropic' ? 'https://api.anthropic.com' : publicBaseURL(undefined);
  return publicBaseURL(ep.baseURL);
}

/** The ledger file of an endpoint: named by a hash of provider, public base URL and model (never the key). */
export function ledgerPath(ledgerDir: string, ep: ChatEndpoint): string {
  const id = sha256Hex(JSON.stringify([ep.provider, endpointBase(ep), ep.model])).slice(0, 24);
  return join(ledgerDir, `${ep.provider}-${id}.json`);
}

/**
 * A fresh submission token: the time in base 36, then random hex. The time lets a provider's lookup stop
 * scanning its batch list once it reaches batches older than the submission.
 */
export function newSubmissionToken(now: Date): string {
  return `hb${now.getTime().toString(36)}-${randomBytes(8).toString('hex')}`;
}

/** The time (ms since the epoch) a token from {@link newSubmissionToken} was made, or undefined for any other string. */
export function submissionTokenTime(token: string): number | undefined {
  const m = /^hb([0-9a-z]+)-[0-9a-f]{16}$/.exec(token);
  return m === null ? undefined : Number.parseInt(m[1] as string, 36);
}

const STATES: readonly string[] = ['submitting', 'in_progress', 'ended'];

/** What is wrong with one parsed ledger batch, or undefined. */
function batchProblem(b: unknown): string | undefined {
  const x = b as Partial<Record<keyof LedgerBatch, unknown>> | null;
  if (x === null || typeof x !== 'object') return 'a batch is not an object';
  if (typeof x.token !== 'string' || typeof x.submittedAt !== 'string') return 'a batch lacks its token or submittedAt';
  if (!STATES.includes(x.state as string)) return `batch ${x.token} has state ${JSON.stringify(x.state)}`;
  if (x.id !== undefined && typeof x.id !== 'string') return `batch ${x.token} has a non-string id`;
  if (x.state !== 'submitting' && x.id === undefined) return `batch ${x.token} is ${String(x.state)} without an id`;
  if (!Array.isArray(x.customIds) || !x.customIds.every((c) => typeof c === 'string')) return `batch ${x.token} lacks its customIds`;
  return undefined;
}

/** The batches of a ledger file's text, or a HarnessError naming the file and what to do. */
function parseLedger(path: string, text: string): LedgerBatch[] {
  let parsed: Partial<LedgerFile>;
  try {
    parsed = JSON.parse(text) as Partial<LedgerFile>;
  } catch {
    parsed = {};
  }
  const problem = !Array.isArray(parsed.batches) ? 'not a batch ledger (no batches list)' : parsed.batches.map(batchProblem).find((p) => p !== undefined);
  if (problem !== undefined) {
    throw new HarnessError(`${path}: ${problem}`, {
      hint: 'the batch ledger was damaged; move it aside to submit every request again (batches it named are then paid twice)',
    });
  }
  return [...(parsed.batches as LedgerBatch[])];
}

/** An endpoint's ledger, loaded once and rewritten at each change; writes go one after another, newest state last. */
export class Ledger {
  private entries: LedgerBatch[];
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly ep: ChatEndpoint,
    entries: LedgerBatch[],
  ) {
    this.entries = entries;
  }

  /** The ledger of `ep` in `ledgerDir`; an absent file is an empty ledger. */
  static async open(ledgerDir: string, ep: ChatEndpoint): Promise<Ledger> {
    const path = ledgerPath(ledgerDir, ep);
    let text: string | undefined;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new HarnessError(`${path}: cannot read the batch ledger (${(err as Error).message})`, { cause: err });
      }
    }
    return new Ledger(path, ep, text === undefined ? [] : parseLedger(path, text));
  }

  get batches(): readonly LedgerBatch[] {
    return this.entries;
  }

  /** The entry of a batch id, if the ledger has one. */
  byId(id: string): LedgerBatch | undefined {
    return this.entries.find((b) => b.id === id);
  }

  /** Adds the entry, or replaces the one with its token, and resolves once the file holds it. */
  record(entry: LedgerBatch): Promise<void> {
    const i = this.entries.findIndex((b) => b.token === entry.token);
    this.entries = i < 0 ? [...this.entries, entry] : this.entries.map((b, j) => (j === i ? entry : b));
    return this.persist();
  }

  /** Removes the entry of `token` (a submission that never reached the provider). */
  drop(token: string): Promise<void> {
    this.entries = this.entries.filter((b) => b.token !== token);
    return this.persist();
  }

  /** Queues a write of the state as it is when the write starts, so the last write always carries the newest state. */
  private persist(): Promise<void> {
    const next = this.writing.then(() => writeFileAtomic(this.path, this.text()));
    this.writing = next.catch(() => {});
    return next;
  }

  private text(): string {
    const file: LedgerFile = { version: 1, provider: this.ep.provider, baseURL: endpointBase(this.ep), model: this.ep.model, batches: this.entries };
    return `${JSON.stringify(file, null, 1)}\n`;
  }
}

/**
 * Resolves every entry still `submitting` (a run killed between the submission and the record of its id)
 * through the provider: found, it is recorded as in progress and its requests attach to it; not found, the
 * entry is dropped and its requests are free to be submitted. Anthropic keeps no metadata, so there a batch
 * created in the last moments before such a kill is not found, and its requests are submitted again.
 */
export async function recoverSubmitting(ledger: Ledger, api: BatchApi, log: Logger, label: string): Promise<void> {
  for (const b of ledger.batches.filter((x) => x.state === 'submitting')) {
    const id = await api.findSubmitted(b.token);
    if (id === undefined) {
      log.info(`${label}: submission ${b.token} (${b.customIds.length} requests) never got a ${api.provider} batch id; its requests are free`);
      await ledger.drop(b.token);
    } else {
      log.info(`${label}: submission ${b.token} was ${api.provider} batch ${id}; resuming it`);
      await ledger.record({ ...b, id, state: 'in_progress' });
    }
  }
}

/** One ledger batch as a status line: id (or token), state, counts, size and submission time. */
function batchLine(b: LedgerBatch, live?: BatchStatus | string): string {
  const who = b.id ?? `(no id yet; token ${b.token})`;
  const status = typeof live === 'object' ? live : undefined;
  const state = status === undefined ? `${b.state}${b.providerState === undefined ? '' : ` (${b.providerState})`}` : `live ${status.providerState}`;
  const c = status?.counts ?? b.counts;
  const counts = c === undefined ? 'no counts yet' : `${c.succeeded} succeeded, ${c.failed} failed of ${c.total}`;
  const failed = typeof live === 'string' ? `; status not read: ${live}` : '';
  return `${who}: ${state}, ${counts}; ${b.customIds.length} requests submitted ${b.submittedAt}${failed}`;
}

/**
 * The ledger of `ep` as lines for `harness judge --status`: one per batch. With `api`, each batch not ended is
 * polled once for its live state; without it, the lines say what the ledger recorded. Changes nothing.
 */
export async function describeLedger(ledgerDir: string, ep: ChatEndpoint, api?: BatchApi): Promise<string[]> {
  const ledger = await Ledger.open(ledgerDir, ep);
  const head = `${ep.provider} ${ep.model}: ${ledger.batches.length} batch${ledger.batches.length === 1 ? '' : 'es'} in ${ledger.path}`;
  const lines = [head];
  for (const b of ledger.batches) {
    let live: BatchStatus | string | undefined;
    if (api !== undefined && b.state === 'in_progress' && b.id !== undefined) {
      live = await api.status(b.id).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    }
    lines.push(`  ${batchLine(b, live)}`);
  }
  return lines;
}
