import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';

export interface Checksums {
  readonly sha256: string;
  readonly md5: string;
}

export interface Expected {
  readonly sha256: string | null;
  readonly md5: string | null;
}

/** Whether a computed checksum matched an expected one, and which. `none`: nothing to compare with. */
export type Verification = { readonly status: 'verified'; readonly by: 'sha256' | 'md5' } | { readonly status: 'unverified' };

/**
 * Compares computed checksums with the expected ones (sha256 preferred). A mismatch throws: a corrupt or
 * substituted file must never load as an eval set.
 */
export function verify(what: string, got: Checksums, expected: Expected): Verification {
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

function mismatch(what: string, algo: string, expected: string, got: string): HarnessError {
  return new HarnessError(`${what}: ${algo} mismatch: expected ${expected}, got ${got}; the file was deleted`, {
    hint: 'the download was corrupted or the upstream file changed; retry, or pass --from with a copy you trust',
  });
}

/** sha256 and md5 of a file, streamed. */
export async function hashFile(path: string): Promise<Checksums> {
  const sha = createHash('sha256');
  const md5 = createHash('md5');
  await feed(path, [sha, md5]);
  return { sha256: sha.digest('hex'), md5: md5.digest('hex') };
}

async function feed(path: string, hashes: readonly Hash[]): Promise<void> {
  for await (const chunk of createReadStream(path)) for (const h of hashes) h.update(chunk as Buffer);
}

export interface DownloadOptions {
  readonly log: Logger;
  /** Attempts in total; each retry resumes from the bytes already on disk. */
  readonly attempts?: number;
  readonly label?: string;
}

/**
 * Downloads `url` to `dest` through `dest.part`: an existing `.part` is resumed with an HTTP Range request
 * (a server that answers 200 instead of 206 restarts it from zero); a connection lost mid-body is retried,
 * resuming, up to `attempts` times. The finished `.part` is hashed and renamed to `dest` only after the caller
 * has verified it (see {@link downloadVerified}), so `dest` never holds a partial or unverified file.
 */
export async function downloadToPart(url: string, dest: string, opts: DownloadOptions): Promise<string> {
  const part = `${dest}.part`;
  await mkdir(dirname(dest), { recursive: true });
  const attempts = opts.attempts ?? 3;
  let lastError: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await fetchInto(url, part, opts);
      return part;
    } catch (e) {
      lastError = e;
      if (e instanceof HarnessError) throw e;
      opts.log.warn(`${opts.label ?? url}: attempt ${attempt} of ${attempts} failed (${(e as Error).message})${attempt < attempts ? '; resuming' : ''}`);
    }
  }
  throw new HarnessError(`${url}: download failed after ${attempts} attempts: ${(lastError as Error).message}`, {
    cause: lastError,
    hint: `run the same command again to resume from ${part}`,
  });
}

async function fetchInto(url: string, part: string, opts: DownloadOptions): Promise<void> {
  const have = (await stat(part).catch(() => undefined))?.size ?? 0;
  const res = await fetch(url, have > 0 ? { headers: { Range: `bytes=${have}-` } } : {});
  let offset = 0;
  if (res.status === 206) {
    offset = have;
  } else if (res.status === 416 && have > 0) {
    // The part already holds the whole file (the range starts at its end).
    await res.body?.cancel();
    return;
  } else if (res.status !== 200) {
    await res.body?.cancel();
    throw new HarnessError(`${url}: HTTP ${res.status} ${res.statusText}`, { hint: 'check the URL or HARNESS_DATASETS_BASE_URL' });
  }
  if (offset === 0 && have > 0) await truncate(part, 0);
  const length = Number(res.headers.get('content-length') ?? Number.NaN);
  const total = Number.isFinite(length) ? offset + length : 0;
  const progress = opts.log.progress(`${opts.label ?? url} (bytes)`, total);
  progress.tick(offset);
  const out = createWriteStream(part, { flags: offset > 0 ? 'a' : 'w' });
  const finished = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve);
    out.on('error', reject);
  });
  let received = 0;
  try {
    if (res.body === null) throw new Error('empty response body');
    for await (const chunk of res.body) {
      const buf = chunk as Uint8Array;
      received += buf.byteLength;
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      progress.tick(buf.byteLength);
    }
  } finally {
    out.end();
    await finished;
  }
  if (Number.isFinite(length) && received !== length) throw new Error(`connection closed after ${received} of ${length} bytes`);
  progress.done();
}

/**
 * Downloads (or resumes) `url` to `dest`, verifies the checksums and renames atomically. On a mismatch the
 * `.part` is deleted so the next attempt starts clean.
 */
export async function downloadVerified(url: string, dest: string, expected: Expected, opts: DownloadOptions): Promise<{ checksums: Checksums; verification: Verification }> {
  const part = await downloadToPart(url, dest, opts);
  return finalize(part, dest, expected, opts.label ?? url);
}

/** Copies a local file into `dest` through a verified `.part`, for `--from`. */
export async function importVerified(from: string, dest: string, expected: Expected, label: string): Promise<{ checksums: Checksums; verification: Verification }> {
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
    throw e;
  }
  await rename(part, dest);
  return { checksums, verification };
}
