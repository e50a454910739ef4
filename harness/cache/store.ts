import { constants } from 'node:fs';
import { access, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { HarnessError } from '../errors.js';
import { errnoCode, fileInTheWay } from '../util/fs-paths.js';
import { stderrLogger, type Logger } from '../log.js';
import { sha256Hex, type CacheKey, type CacheNamespace } from './key.js';

/**
 * The name of a temp file or folder written beside `path` by this process: `<path>.<pid>.<random>.tmp`.
 * The pid lets a later sweep tell an orphan (its writer is gone) from another process's write in progress.
 */
export function tempNameFor(path: string, suffix = 'tmp'): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}.${suffix}`;
}

/** The writer pid of a name made by {@link tempNameFor} with this suffix, or undefined for any other name. */
export function tempWriterPid(name: string, suffix = 'tmp'): number | undefined {
  const m = new RegExp(`\\.(\\d+)\\.[0-9a-f]{8}\\.${suffix}$`).exec(name);
  return m === null ? undefined : Number(m[1]);
}

/** Whether a process with this pid exists on this machine (a signal-0 probe; EPERM means it exists). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Writes `data` to `path` so that a reader sees either the old file or the whole new one, never a torn
 * write: write a temp file beside it, fsync, then rename over the target (rename is atomic on POSIX).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true }).catch((e: unknown) => failWrite(dirname(path), e));
  const tmp = tempNameFor(path);
  try {
    await writeSynced(tmp, data, path);
    await rename(tmp, path).catch((e: unknown) => failWrite(path, e));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * A failed write as a HarnessError naming the file: Node's own message for a full disk ("ENOSPC: no space left
 * on device, write") names none. Exit code 1: the input was fine, the machine failed.
 */
export function failWrite(file: string, err: unknown): never {
  if (err instanceof HarnessError) throw err;
  const code = (err as NodeJS.ErrnoException).code;
  const blocked = code === 'EISDIR' ? file : code === 'ENOTDIR' || code === 'EEXIST' ? fileInTheWay(dirname(file)) : undefined;
  if (blocked !== undefined) {
    const what = code === 'EISDIR' ? 'a folder is where the file goes' : `${blocked} is a file where a folder belongs`;
    throw new HarnessError(`cannot write ${file}: ${what} (${code})`, { hint: `move ${blocked} away, or write somewhere else`, cause: err });
  }
  const why =
    code === 'ENOSPC'
      ? 'no space left on the device'
      : code === 'EDQUOT'
        ? 'disk quota exceeded'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : code === 'EFBIG'
            ? 'file too large'
            : (err as Error).message;
  throw new HarnessError(`cannot write ${file}: ${why}${code === undefined ? '' : ` (${code})`}`, {
    hint: code === 'ENOSPC' || code === 'EDQUOT' ? 'free some space, or point output / cache / --dir at another disk' : 'check that the folder is writable',
    cause: err,
  });
}

/** Writes and fsyncs one file (its folder must exist); a failure names `shownAs` (the file it stands for). */
async function writeSynced(path: string, data: string | Uint8Array, shownAs = path): Promise<void> {
  try {
    const fh = await open(path, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (err) {
    failWrite(shownAs, err);
  }
}

/** fsync of a folder, so the renames in it survive a power loss; best effort where the platform refuses. */
async function syncFolder(path: string): Promise<void> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (fh === undefined) return;
  try {
    await fh.sync().catch(() => undefined);
  } finally {
    await fh.close();
  }
}

/**
 * The siblings {@link writeFolderAtomic} leaves beside `dir` while it works: `.<base>.<pid>.<rand>.tmp` (the
 * new folder being filled) and `.<base>.<pid>.<rand>.old` (the previous folder, between the two renames).
 */
async function folderTemps(dir: string): Promise<{ name: string; path: string; kind: 'tmp' | 'old'; pid: number }[]> {
  const parent = dirname(dir);
  const prefix = `.${basename(dir)}.`;
  const names = await readdir(parent).catch(() => [] as string[]);
  const out: { name: string; path: string; kind: 'tmp' | 'old'; pid: number }[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    // Exactly `<pid>.<rand>.<kind>` after the prefix, so folder `a` never claims the temps of folder `a.b`.
    const m = /^(\d+)\.[0-9a-f]{8}\.(tmp|old)$/.exec(name.slice(prefix.length));
    if (m !== null) out.push({ name, path: join(parent, name), kind: m[2] as 'tmp' | 'old', pid: Number(m[1]) });
  }
  return out;
}

/** What {@link recoverFolder} found: a live writer's swap in progress, or nothing in the way. */
export type FolderState = { readonly busy: false } | { readonly busy: true; readonly pid: number };

/**
 * Repairs what a crashed {@link writeFolderAtomic} left beside `dir`; safe to call any time, by writers and
 * readers. The rule: a temp whose writer process is gone is an orphan. If `dir` is missing and an orphaned
 * `.old` exists, the crash fell between the two renames: the `.old` (the previous folder, complete) is renamed
 * back. Every other orphan (`.tmp` folders, further `.old`s) is deleted, as are orphaned `*.tmp` files inside
 * `dir`. Temps of a live process are left alone; `busy` reports that process when `dir` itself is missing.
 */
export async function recoverFolder(dir: string): Promise<FolderState> {
  let temps = await folderTemps(dir);
  const exists = async () => (await stat(dir).catch(() => undefined)) !== undefined;
  if (!(await exists())) {
    const orphanOld = temps.find((t) => t.kind === 'old' && !processAlive(t.pid));
    if (orphanOld !== undefined) {
      await rename(orphanOld.path, dir);
      temps = temps.filter((t) => t !== orphanOld);
    }
  }
  for (const t of temps) if (!processAlive(t.pid)) await removeOrphan(t.path);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = tempWriterPid(name);
    if (pid !== undefined && !processAlive(pid)) await removeOrphan(join(dir, name));
  }
  if (!(await exists())) {
    const live = temps.find((t) => t.kind === 'old' && processAlive(t.pid));
    if (live !== undefined) return { busy: true, pid: live.pid };
  }
  return { busy: false };
}

/**
 * Deletes an orphaned temp. One this user may not delete (left by another user's crashed write) is left in
 * place: it is never read as a report or an entry, and failing every later read of the folder over it would
 * be worse than the clutter.
 */
async function removeOrphan(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true }).catch((err: unknown) => {
    const code = errnoCode(err);
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
  });
}

/**
 * Why this process could not empty folder `dir` once it is replaced, or undefined when it can (or `dir` does not
 * exist): the first folder in it (itself or below) it may not delete entries from, as when an earlier report
 * belongs to another user. Checked before anything is written, so a refusal leaves the old folder as it was.
 */
export async function folderReplaceProblem(dir: string): Promise<string | undefined> {
  const walk = async (d: string): Promise<string | undefined> => {
    try {
      await access(d, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'EACCES' || code === 'EPERM') return `${d} cannot be emptied by this user (permission denied, ${code}), so ${dir} cannot be replaced`;
      return undefined;
    }
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const found = e.isDirectory() ? await walk(join(d, e.name)) : undefined;
      if (found !== undefined) return found;
    }
    return undefined;
  };
  // A file in the folder's place is not this check's to report: writeFolderAtomic refuses it by name.
  return (await stat(dir).catch(() => undefined))?.isDirectory() === true ? walk(dir) : undefined;
}

/** A file name inside a folder: relative, `/`-separated, no `.`/`..` segments, nothing that escapes it. */
function checkRelativeName(name: string): void {
  const parts = name.split('/');
  if (name === '' || isAbsolute(name) || name.includes('\\') || parts.some((p) => p === '' || p === '.' || p === '..')) {
    throw new Error(`writeFolderAtomic: invalid file name ${JSON.stringify(name)} (relative, '/'-separated, no '.' or '..' segments)`);
  }
}

/**
 * Replaces folder `dir` with exactly `files` (names may hold `/`: `runs/bm25.trec`), so that a reader sees the
 * old folder or the new one, never a mix:
 *
 * 1. sweep orphans of earlier crashed writes ({@link recoverFolder});
 * 2. write every file into a sibling `.<base>.<pid>.<rand>.tmp/`, each fsynced;
 * 3. rename `dir` to `.<base>.<pid>.<rand>.old`, rename the temp folder to `dir`, delete the `.old`.
 *
 * A crash in step 2 leaves `dir` untouched (and the temp folder is swept next time); a crash between the two
 * renames of step 3 leaves no `dir` and a complete `.old`, which the next writer or reader renames back
 * ({@link recoverFolder}); a crash after them leaves only an orphaned `.old` to delete. One writer per folder.
 */
export async function writeFolderAtomic(dir: string, files: ReadonlyMap<string, string | Uint8Array>): Promise<void> {
  for (const name of files.keys()) checkRelativeName(name);
  // A file where the folder goes would be renamed aside and deleted like an old folder: refuse, naming it.
  const blocked = fileInTheWay(dir);
  if (blocked !== undefined) {
    throw new HarnessError(`${dir}: ${blocked === dir ? 'it' : blocked} is a file, not a folder`, {
      exitCode: 2,
      hint: 'write to a folder (a missing one is created), or move the file away',
    });
  }
  const parent = dirname(dir);
  await mkdir(parent, { recursive: true });
  const state = await recoverFolder(dir);
  if (state.busy) throw new HarnessError(`${dir} is being replaced by process ${state.pid}`, { hint: 'wait for that run to finish; one writer per folder' });
  const locked = await folderReplaceProblem(dir);
  if (locked !== undefined) throw new HarnessError(locked, { hint: `remove ${dir} as the user who owns it, or write to another folder` });
  const stem = join(parent, `.${basename(dir)}`);
  const tmp = tempNameFor(stem);
  try {
    await mkdir(tmp);
    const folders = new Set<string>();
    for (const name of files.keys()) {
      const d = dirname(name);
      if (d !== '.' && !folders.has(d)) {
        await mkdir(join(tmp, d), { recursive: true });
        folders.add(d);
      }
    }
    for (const [name, data] of files) await writeSynced(join(tmp, name), data, join(dir, name));
    for (const d of folders) await syncFolder(join(tmp, d));
    await syncFolder(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  const old = tempNameFor(stem, 'old');
  const hadOld = (await stat(dir).catch(() => undefined)) !== undefined;
  if (hadOld) await rename(dir, old);
  try {
    await rename(tmp, dir);
  } catch (err) {
    // Another writer put a folder in place between our renames: keep theirs, or put ours back, never neither.
    if (hadOld && (await stat(dir).catch(() => undefined)) === undefined) await rename(old, dir);
    await rm(tmp, { recursive: true, force: true });
    throw new HarnessError(`${dir}: could not swap the new folder in (${(err as Error).message})`, {
      hint: 'another run may be writing the same folder; one writer per folder',
      cause: err,
    });
  }
  await syncFolder(parent);
  if (hadOld) await rm(old, { recursive: true, force: true }).catch((err: unknown) => oldNotRemoved(dir, old, err));
}

/** The new folder is in place but the previous one, moved aside, could not be deleted: say both, exit 1. */
function oldNotRemoved(dir: string, old: string, err: unknown): never {
  const code = errnoCode(err);
  const why = code === 'EACCES' || code === 'EPERM' ? `permission denied (${code})` : (err as Error).message;
  throw new HarnessError(`${dir} was written, but the folder it replaced, moved aside to ${old}, could not be deleted: ${why}`, {
    hint: `delete ${old} as the user who owns it; nothing reads it`,
    cause: err,
  });
}

/**
 * Every file under `dir` by its `/`-separated relative name, skipping temp files ({@link tempNameFor}), for
 * callers that rewrite part of a folder through {@link writeFolderAtomic}.
 */
export async function readFolderFiles(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (rel: string) => {
    for (const entry of await readdir(join(dir, rel), { withFileTypes: true })) {
      if (tempWriterPid(entry.name) !== undefined) continue;
      const name = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(name);
      else if (entry.isFile()) out.set(name, await readFile(join(dir, name)));
    }
  };
  await walk('');
  return out;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** Entries found damaged (bad envelope, checksum or shape), evicted and counted as misses too. */
  evicted: number;
}

/**
 * Entry envelope, version 1: one ASCII header line, then the payload bytes unchanged:
 *
 *     harness-cache 1 <ns> <key> <payload byte length> <sha256 of payload, hex>\n<payload>
 *
 * The header names the entry, so a file copied or renamed under another key is caught; the length catches a
 * truncation, the checksum any edit. A text header keeps entries inspectable with `head -1`.
 */
const ENVELOPE_MAGIC = 'harness-cache';
const ENVELOPE_VERSION = 1;
/** Longer than any valid header (magic, version, ns, 64 + 64 hex digits, a length): no need to scan a whole payload for a newline. */
const MAX_HEADER = 256;

/** Wraps `payload` in the entry envelope of `ns`/`key`. */
export function sealEntry(ns: CacheNamespace, key: CacheKey, payload: string | Uint8Array): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const header = `${ENVELOPE_MAGIC} ${ENVELOPE_VERSION} ${ns} ${key} ${body.byteLength} ${sha256Hex(body)}\n`;
  return Buffer.concat([Buffer.from(header, 'ascii'), body]);
}

/**
 * The payload of an entry read from disk, or why it cannot be trusted. Pure: checks the header names this
 * `ns`/`key` and that the payload has the recorded length and sha256.
 */
export function openEntry(ns: CacheNamespace, key: CacheKey, data: Buffer): { payload: Buffer } | { problem: string } {
  const nl = data.subarray(0, MAX_HEADER).indexOf(0x0a);
  if (nl < 0) return { problem: 'no entry header (written by an older harness, or not by harness at all)' };
  const fields = data.subarray(0, nl).toString('latin1').split(' ');
  if (fields.length !== 6 || fields[0] !== ENVELOPE_MAGIC) return { problem: 'no entry header (written by an older harness, or not by harness at all)' };
  const [, version, hns, hkey, hlen, hsum] = fields as [string, string, string, string, string, string];
  if (version !== String(ENVELOPE_VERSION)) return { problem: `entry envelope version ${version}; this harness writes ${ENVELOPE_VERSION}` };
  if (hns !== ns || hkey !== key) return { problem: `the entry says it is ${hns}/${hkey}` };
  const payload = data.subarray(nl + 1);
  if (String(payload.byteLength) !== hlen) return { problem: `payload is ${payload.byteLength} bytes, the header says ${hlen} (truncated or edited)` };
  if (sha256Hex(payload) !== hsum) return { problem: 'payload checksum mismatch (edited or corrupted)' };
  return { payload };
}

/**
 * A file-system failure on a cache path as a HarnessError naming the path and what to do: a cache folder that
 * is (or lies under) a file is the config's to fix (exit 2); a folder where an entry belongs, a file where a
 * shard folder belongs, or a permission refused is the machine's (exit 1). A failed write arrives wrapped by
 * {@link failWrite}; it is mapped by its cause.
 */
export function cachePathError(root: string, path: string, err: unknown, doing: 'read' | 'write'): HarnessError {
  const cause = err instanceof HarnessError ? err.cause : err;
  const code = errnoCode(cause);
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    const file = fileInTheWay(dirname(path)) ?? dirname(path);
    if (file === root || root.startsWith(`${file}${sep}`)) return cacheRootError(root, file, cause);
    return new HarnessError(`cache: ${file} is a file where the cache keeps a folder (${code})`, {
      hint: `remove it (rm '${file}'); what the cache held there is recomputed`,
      cause,
    });
  }
  if (code === 'EISDIR')
    return new HarnessError(`cache entry ${path} is a folder, not a file (EISDIR)`, { hint: `remove it (rm -r '${path}'); the entry is recomputed`, cause });
  if (code === 'EACCES' || code === 'EPERM')
    return new HarnessError(`cannot ${doing} cache entry ${path}: permission denied (${code})`, {
      hint: `make ${root} readable and writable by this user, or point cache: (or --cache) at another folder`,
      cause,
    });
  if (err instanceof HarnessError) return err;
  return new HarnessError(`cannot ${doing} cache entry ${path}: ${(err as Error).message}`, { cause });
}

/** The cache folder given is a file, or lies under one: exit 2, the fix is in the config or the flag. */
function cacheRootError(root: string, file: string, cause?: unknown): HarnessError {
  return new HarnessError(`cache folder ${root}: ${file === root ? 'it' : file} is a file, not a folder`, {
    exitCode: 2,
    hint: 'point cache: (or --cache) at a folder, or move the file away; a missing cache folder is created',
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Checks a cached JSON value's shape: returns undefined when it is what the caller stores, else what is wrong
 * (for the eviction warning). An entry can checksum fine and still be `{}` or `null`: written by a bug, or
 * by an older layout under the same version.
 */
export type ShapeCheck = (value: unknown) => string | undefined;

/**
 * A content-addressed store under one folder: `<root>/<ns>/<aa>/<key>`. Passed to arms through their
 * context rather than held as a module singleton, so tests make their own in a temp folder.
 *
 * Every entry is sealed in an envelope (its namespace, key, payload length and sha256; see {@link sealEntry})
 * and checked on every read. An entry that fails the check is never used and never fatal: it is reported on
 * the logger (namespace, key, why), deleted, and read as a miss, so the caller recomputes it.
 */
/** File operations a store runs at once; the rest wait their turn. */
export const CACHE_IO_CONCURRENCY = 64;

export class ContentStore {
  readonly root: string;
  readonly stats: Record<CacheNamespace, CacheStats> = {
    index: { hits: 0, misses: 0, evicted: 0 },
    embed: { hits: 0, misses: 0, evicted: 0 },
    judge: { hits: 0, misses: 0, evicted: 0 },
    run: { hits: 0, misses: 0, evicted: 0 },
  };
  private readonly log: Logger;
  private readonly inflight = new Map<string, Promise<unknown>>();
  /**
   * The store's file operations at once: a stage that keeps 50,000 calls in flight (a provider batch's worth)
   * settles them together, and one open file each would pass the process's limit (EMFILE).
   */
  private readonly io = pLimit(CACHE_IO_CONCURRENCY);

  constructor(root: string, opts: { log?: Logger } = {}) {
    this.root = root;
    this.log = opts.log ?? stderrLogger();
  }

  pathOf(ns: CacheNamespace, key: CacheKey): string {
    return join(this.root, ns, key.slice(0, 2), key);
  }

  /** The payload stored under `key`, or undefined on a miss (absent or damaged entry; a damaged one is evicted). */
  async get(ns: CacheNamespace, key: CacheKey): Promise<Buffer | undefined> {
    let data: Buffer;
    try {
      data = await this.io(() => readFile(this.pathOf(ns, key)));
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw cachePathError(this.root, this.pathOf(ns, key), err, 'read');
      this.stats[ns].misses++;
      return undefined;
    }
    const opened = openEntry(ns, key, data);
    if ('problem' in opened) {
      await this.evict(ns, key, opened.problem);
      return undefined;
    }
    this.stats[ns].hits++;
    return opened.payload;
  }

  /**
   * Whether `key` holds an entry that passes its envelope check (its shape is the caller's to check). Read-only:
   * counts nothing and evicts nothing, for plans and dry runs.
   */
  async has(ns: CacheNamespace, key: CacheKey): Promise<boolean> {
    const data = await this.io(() => readFile(this.pathOf(ns, key))).catch((err: unknown) => {
      if (errnoCode(err) === 'ENOENT') return undefined;
      throw cachePathError(this.root, this.pathOf(ns, key), err, 'read');
    });
    return data !== undefined && 'payload' in openEntry(ns, key, data);
  }

  /** Callers must never store an error payload: a cached failure would be served as a result forever. */
  async put(ns: CacheNamespace, key: CacheKey, value: string | Uint8Array): Promise<void> {
    await this.io(() => writeFileAtomic(this.pathOf(ns, key), sealEntry(ns, key, value))).catch((err: unknown) => {
      throw cachePathError(this.root, this.pathOf(ns, key), err, 'write');
    });
  }

  /**
   * Deletes the temp files crashed writers left in the store (`*.<pid>.<rand>.tmp` whose pid is gone); a live
   * process's writes in progress are left alone. Returns how many were removed. Call once at start.
   */
  async sweepOrphans(): Promise<number> {
    const blocked = fileInTheWay(this.root);
    if (blocked !== undefined) throw cacheRootError(this.root, blocked);
    let removed = 0;
    for (const ns of Object.keys(this.stats)) {
      for (const shard of await readdir(join(this.root, ns)).catch(() => [] as string[])) {
        for (const name of await readdir(join(this.root, ns, shard)).catch(() => [] as string[])) {
          const pid = tempWriterPid(name);
          if (pid === undefined || processAlive(pid)) continue;
          await rm(join(this.root, ns, shard, name), { force: true });
          removed++;
        }
      }
    }
    return removed;
  }

  async delete(ns: CacheNamespace, key: CacheKey): Promise<void> {
    await this.io(() => rm(this.pathOf(ns, key), { force: true }));
  }

  /** Reports, deletes and counts (as a miss) an entry that must not be used. */
  private async evict(ns: CacheNamespace, key: CacheKey, why: string): Promise<void> {
    this.log.warn(`cache ${ns}/${key}: ${why}; evicted, recomputing`);
    await this.delete(ns, key);
    this.stats[ns].misses++;
    this.stats[ns].evicted++;
  }

  /**
   * JSON value for `key`, computed by `compute` on a miss and stored. An entry that fails its envelope check,
   * does not parse, or fails `check` (when given) is evicted and recomputed. Concurrent misses on one key
   * share a single computation.
   */
  async json<T>(ns: CacheNamespace, key: CacheKey, compute: () => Promise<T>, check?: ShapeCheck): Promise<T> {
    const id = `${ns}/${key}`;
    const running = this.inflight.get(id);
    if (running) return running as Promise<T>;
    const p = (async () => {
      const hit = await this.get(ns, key);
      if (hit !== undefined) {
        let value: unknown;
        let problem: string | undefined;
        try {
          value = JSON.parse(hit.toString('utf8'));
          problem = check?.(value);
        } catch {
          // V8's message quotes the text around the error; a payload is never echoed (it may hold anything).
          problem = 'payload is not valid JSON';
        }
        if (problem === undefined) return value as T;
        this.stats[ns].hits--;
        await this.evict(ns, key, problem);
      }
      const value = await compute();
      await this.put(ns, key, JSON.stringify(value));
      return value;
    })();
    this.inflight.set(id, p);
    try {
      return await p;
    } finally {
      this.inflight.delete(id);
    }
  }
}
