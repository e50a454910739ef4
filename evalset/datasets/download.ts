import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { mkdir, rename, rm, stat, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { failWrite } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';
import { isSecretParam, redactUrl } from '../../harness/util/redact.js';

export interface Checksums {
  readonly sha256: string;
  readonly md5: string;
  readonly bytes: number;
}

export interface Expected {
  readonly sha256: string | null;
  readonly md5: string | null;
  /** The size the publisher states, checked before the checksums: a short file says "truncated" more plainly. */
  readonly bytes?: number;
}

/** Whether a computed checksum matched an expected one, and which. `none`: nothing to compare with. */
export type Verification = { readonly status: 'verified'; readonly by: 'sha256' | 'md5' } | { readonly status: 'unverified' };

/**
 * Compares computed checksums with the expected ones (sha256 preferred). A mismatch throws: a corrupt or
 * substituted file must never load as an eval set.
 */
export function verify(what: string, got: Checksums, expected: Expected): Verification {
  if (expected.bytes !== undefined && got.bytes !== expected.bytes) {
    throw mismatch(what, 'size', `${expected.bytes.toLocaleString('en-US')} bytes`, `${got.bytes.toLocaleString('en-US')} bytes`);
  }
  if (expected.sha256 !== null) {
    if (got.sha256 !== expected.sha256.toLowerCase()) throw mismatch(what, 'sha256', expected.sha256, got.sha256);
    return { status: 'verified', by: 'sha256' };
  }
  if (expected.md5 !== null) {
    if (got.md5 !== expected.md5.toLowerCase()) throw mismatch(what, 'md5', expected.md5, got.md5);
    return { status: 'verified', by: 'md5' };
  }
  return { status: 'unverified' };
}

/** Says what did not match; what happens to the file is the caller's to say (and do). */
function mismatch(what: string, algo: string, expected: string, got: string): HarnessError {
  return new HarnessError(`${what}: ${algo} mismatch: expected ${expected}, got ${got}`, {
    hint: 'the download was corrupted or the upstream file changed; retry, or pass --from with a copy you trust',
  });
}

/** sha256 and md5 of a file, streamed. */
export async function hashFile(path: string): Promise<Checksums> {
  const sha = createHash('sha256');
  const md5 = createHash('md5');
  const bytes = await feed(path, [sha, md5]);
  return { sha256: sha.digest('hex'), md5: md5.digest('hex'), bytes };
}

/** Feeds the file to every hash; returns its size in bytes. */
async function feed(path: string, hashes: readonly Hash[]): Promise<number> {
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    bytes += (chunk as Buffer).length;
    for (const h of hashes) h.update(chunk as Buffer);
  }
  return bytes;
}

/** How long a download may wait: for a connection, and in silence once connected. */
export interface NetTimeouts {
  /** Milliseconds to open the TCP (and TLS) connection. */
  readonly connectTimeoutMs: number;
  /** Milliseconds of silence allowed once connected: waiting for the response, or between body chunks. */
  readonly idleTimeoutMs: number;
}

export const DEFAULT_TIMEOUTS: NetTimeouts = { connectTimeoutMs: 10_000, idleTimeoutMs: 20_000 };

export interface DownloadOptions {
  readonly log: Logger;
  /** Attempts in total; each retry resumes from the bytes already on disk. */
  readonly attempts?: number;
  readonly label?: string;
  readonly timeouts?: Partial<NetTimeouts>;
  /** Pause before retry n (1-based), in ms; default 500 n. Tests set it to 0. */
  readonly backoffMs?: (retry: number) => number;
}

// The one redaction helper (harness/util/redact.ts); re-exported for the callers that import it from here.
export { redactUrl };

/** Every credential in `url` (user, password, secret parameter values), to scrub from messages that quote them. */
function secretsOf(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const out = [u.username, u.password, decodeURIComponent(u.username), decodeURIComponent(u.password)];
  for (const [k, v] of u.searchParams) if (isSecretParam(k)) out.push(v, encodeURIComponent(v));
  return out.filter((s) => s.length >= 3);
}

/** `text` with every credential of `url` replaced by `***` (error messages of lower layers may quote the URL). */
function scrub(text: string, url: string): string {
  let out = text.split(url).join(redactUrl(url));
  for (const s of secretsOf(url)) out = out.split(s).join('***');
  return out;
}

/**
 * A failed attempt. `retryable`: the next attempt may succeed (connection refused or reset, connect timeout,
 * a body cut short or stalled, HTTP 5xx or 429); anything else (4xx, a silent server, a local file error, a bad
 * URL) fails at once.
 */
class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * Downloads `url` to `dest` through `dest.part`: an existing `.part` is resumed with an HTTP Range request
 * (a server that answers 200 instead of 206 restarts it from zero). Every attempt has a connect timeout and an
 * idle timeout ({@link NetTimeouts}); only retryable failures are retried, resuming, up to `attempts` times.
 * Every URL printed is redacted ({@link redactUrl}). The finished `.part` is hashed and renamed to `dest` only
 * after the caller has verified it (see {@link downloadVerified}), so `dest` never holds a partial or
 * unverified file.
 */
export async function downloadToPart(url: string, dest: string, opts: DownloadOptions): Promise<string> {
  const part = `${dest}.part`;
  await mkdir(dirname(dest), { recursive: true });
  const attempts = opts.attempts ?? 3;
  const timeouts: NetTimeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const shown = redactUrl(url);
  const label = opts.label ?? shown;
  let last: AttemptError | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await fetchInto(url, part, timeouts, opts, label);
      return part;
    } catch (e) {
      if (e instanceof HarnessError) throw e;
      last = e instanceof AttemptError ? e : new AttemptError((e as Error).message, false);
      const why = scrub(last.message, url);
      if (!last.retryable) {
        throw new HarnessError(`${shown}: ${why}`, { hint: 'check the URL, your network, or HARNESS_DATASETS_BASE_URL; a rerun resumes' });
      }
      opts.log.warn(`${label}: attempt ${attempt} of ${attempts} failed (${why})${attempt < attempts ? '; resuming' : ''}`);
      if (attempt < attempts) await new Promise((r) => setTimeout(r, last!.retryAfterMs ?? opts.backoffMs?.(attempt) ?? 500 * attempt));
    }
  }
  throw new HarnessError(`${shown}: download failed after ${attempts} attempts: ${scrub(last!.message, url)}`, {
    hint: `run the same command again to resume from ${part}`,
  });
}

/** The response to a GET, following up to 5 redirects, with both timeouts armed. */
function open(
  url: URL,
  headers: Record<string, string>,
  timeouts: NetTimeouts,
  redirects = 5,
): Promise<{ res: IncomingMessage; req: ClientRequest; stalled: () => AttemptError | undefined }> {
  return new Promise((resolve, reject) => {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      reject(new AttemptError(`unsupported protocol ${url.protocol} (http or https)`, false));
      return;
    }
    const auth = url.username !== '' || url.password !== '' ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
    const bare = new URL(url);
    bare.username = '';
    bare.password = '';
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(bare, { headers, agent: false, ...(auth === undefined ? {} : { auth }) });
    let phase: 'connect' | 'idle' = 'connect';
    let stalled: AttemptError | undefined;
    const connectTimer = setTimeout(
      () => req.destroy(new AttemptError(`no connection within ${timeouts.connectTimeoutMs / 1000} s (connect timeout)`, true)),
      timeouts.connectTimeoutMs,
    );
    const connected = () => {
      clearTimeout(connectTimer);
      phase = 'idle';
      // Socket inactivity from here on: waiting for the response and between body chunks.
      req.setTimeout(timeouts.idleTimeoutMs, () => {
        // Silent before the response: the server is up but not answering, and retrying would only triple the
        // wait. Silent mid-body: retryable, the next attempt resumes (see fetchInto).
        stalled = new AttemptError(`no data for ${timeouts.idleTimeoutMs / 1000} s (idle timeout)`, false);
        req.destroy(stalled);
      });
    };
    req.on('socket', (socket) => socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected));
    req.on('error', (e) => {
      clearTimeout(connectTimer);
      if (e instanceof AttemptError) reject(e);
      else {
        const code = (e as NodeJS.ErrnoException).code ?? '';
        reject(new AttemptError(`${phase === 'connect' ? 'cannot connect' : 'connection failed'}: ${e.message}`, RETRYABLE_CODES.has(code)));
      }
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (status >= 300 && status < 400 && location !== undefined) {
        res.resume();
        req.destroy();
        if (redirects === 0) reject(new AttemptError('too many redirects', false));
        else open(new URL(location, url), headers, timeouts, redirects - 1).then(resolve, reject);
        return;
      }
      resolve({ res, req, stalled: () => stalled });
    });
    req.end();
  });
}

async function fetchInto(url: string, part: string, timeouts: NetTimeouts, opts: DownloadOptions, label: string): Promise<void> {
  const have = (await stat(part).catch(() => undefined))?.size ?? 0;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new AttemptError('not a valid URL', false);
  }
  const { res, req, stalled } = await open(target, have > 0 ? { Range: `bytes=${have}-` } : {}, timeouts);
  const status = res.statusCode ?? 0;
  let offset = 0;
  if (status === 206) {
    offset = have;
  } else if (status === 416 && have > 0) {
    // The part already holds the whole file (the range starts at its end).
    req.destroy();
    return;
  } else if (status !== 200) {
    req.destroy();
    const retryAfter = Number(res.headers['retry-after']);
    const retryable = status >= 500 || status === 429;
    throw new AttemptError(
      `HTTP ${status} ${res.statusMessage ?? ''}`.trimEnd(),
      retryable,
      Number.isFinite(retryAfter) ? Math.min(retryAfter, 30) * 1000 : undefined,
    );
  }
  if (offset === 0 && have > 0) await truncate(part, 0).catch((e: unknown) => failWrite(part, e));
  const length = Number(res.headers['content-length'] ?? Number.NaN);
  const total = Number.isFinite(length) ? offset + length : 0;
  const progress = opts.log.progress(`${label} (bytes)`, total);
  progress.tick(offset);
  let received = 0;
  const out = createWriteStream(part, { flags: offset > 0 ? 'a' : 'w' });
  // 'close' comes after 'finish' and after an error alike: the one event that always ends the stream.
  const closed = new Promise<void>((r) => out.once('close', () => r()));
  let writeError: unknown;
  out.on('error', (e) => {
    writeError = e;
    req.destroy();
  });
  try {
    try {
      for await (const chunk of res) {
        const buf = chunk as Buffer;
        received += buf.byteLength;
        if (!out.write(buf)) {
          await new Promise<void>((r, j) => {
            out.once('drain', () => r());
            out.once('error', j);
          });
        }
        progress.tick(buf.byteLength);
      }
    } catch (e) {
      if (writeError !== undefined) failWrite(part, writeError);
      const idle = stalled();
      if (idle !== undefined) throw new AttemptError(`${idle.message} after ${received} bytes`, true);
      // A body cut short: the next attempt resumes from what is on disk.
      throw new AttemptError(`connection lost after ${received} bytes (${(e as Error).message})`, true);
    }
  } finally {
    out.end();
    await closed;
  }
  if (writeError !== undefined) failWrite(part, writeError);
  if (Number.isFinite(length) && received !== length) throw new AttemptError(`connection closed after ${received} of ${length} bytes`, true);
  progress.done();
}

/**
 * Downloads (or resumes) `url` to `dest`, verifies the checksums and renames atomically. On a mismatch the
 * `.part` is deleted so the next attempt starts clean.
 */
export async function downloadVerified(
  url: string,
  dest: string,
  expected: Expected,
  opts: DownloadOptions,
): Promise<{ checksums: Checksums; verification: Verification }> {
  const part = await downloadToPart(url, dest, opts);
  return finalize(part, dest, expected, opts.label ?? url);
}

/** Copies a local file into `dest` through a verified `.part`, for `--from`. */
export async function importVerified(
  from: string,
  dest: string,
  expected: Expected,
  label: string,
): Promise<{ checksums: Checksums; verification: Verification }> {
  const st = await stat(from).catch(() => undefined);
  if (st === undefined || !st.isFile()) throw new HarnessError(`--from ${from}: no such file`, { exitCode: 2 });
  await mkdir(dirname(dest), { recursive: true });
  const part = `${dest}.part`;
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(part);
    out.on('finish', resolve);
    out.on('error', reject);
    createReadStream(from).on('error', reject).pipe(out);
  });
  return finalize(part, dest, expected, label);
}

async function finalize(part: string, dest: string, expected: Expected, label: string): Promise<{ checksums: Checksums; verification: Verification }> {
  const checksums = await hashFile(part);
  let verification: Verification;
  try {
    verification = verify(label, checksums, expected);
  } catch (e) {
    await rm(part, { force: true });
    if (!(e instanceof HarnessError)) throw e;
    throw new HarnessError(`${e.message}; the downloaded file was deleted`, { ...(e.hint === undefined ? {} : { hint: e.hint }) });
  }
  await rename(part, dest);
  return { checksums, verification };
}
