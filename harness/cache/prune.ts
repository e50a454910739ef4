import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../errors.js';

/**
 * Pruning the content-addressed cache (store.ts) by age and to a size budget. Only whole entries are ever
 * deleted: files at `<root>/<ns>/<aa>/<key>` where `key` is a sha256 hex digest starting with `aa`. An
 * entry is written to a temp file beside it and renamed into place (writeFileAtomic), so a temp file is
 * an entry still being written: it never matches that pattern and is never touched; neither is any file
 * the cache did not write.
 */

/** One cache entry on disk. */
export interface CacheEntry {
  readonly path: string;
  readonly ns: string;
  readonly key: string;
  readonly bytes: number;
  /** When it was written (entries are immutable once renamed into place). */
  readonly mtimeMs: number;
}

export interface PruneOptions {
  /** Remove entries written more than this many milliseconds before `now`. */
  readonly olderThanMs?: number;
  /** Then remove the oldest remaining entries until the rest total at most this many bytes. */
  readonly maxBytes?: number;
  /** Only these namespaces (default: every one). */
  readonly namespaces?: readonly string[];
  /** Report what would be removed; remove nothing. */
  readonly dryRun?: boolean;
  /** The clock, for tests. Default Date.now(). */
  readonly now?: number;
}

export interface PruneResult {
  /** Entries found (in the selected namespaces) and their total size. */
  readonly entries: number;
  readonly bytes: number;
  /** Entries removed (or, under dryRun, that would be), oldest first. */
  readonly removed: readonly CacheEntry[];
  readonly removedBytes: number;
  /** Files under the root that are not whole entries (temp files of writes in progress, foreign files): left alone. */
  readonly skipped: number;
}

const SHARD = /^[0-9a-f]{2}$/;
const KEY = /^[0-9a-f]{64}$/;

/** Every whole entry under `root`, oldest first (ties by path), and how many other files were left out. */
export async function listCacheEntries(root: string, namespaces?: readonly string[]): Promise<{ entries: CacheEntry[]; skipped: number }> {
  const st = await lstat(root).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (st === undefined) return { entries: [], skipped: 0 };
  if (!st.isDirectory()) throw new InputError(root, undefined, 'is not a cache folder (not a directory)');
  const entries: CacheEntry[] = [];
  let skipped = 0;
  for (const ns of await readdir(root, { withFileTypes: true })) {
    if (!ns.isDirectory()) {
      skipped++;
      continue;
    }
    if (namespaces !== undefined && !namespaces.includes(ns.name)) continue;
    for (const shard of await readdir(join(root, ns.name), { withFileTypes: true })) {
      if (!shard.isDirectory() || !SHARD.test(shard.name)) {
        skipped++;
        continue;
      }
      for (const f of await readdir(join(root, ns.name, shard.name), { withFileTypes: true })) {
        if (!f.isFile() || !KEY.test(f.name) || !f.name.startsWith(shard.name)) {
          skipped++;
          continue;
        }
        const path = join(root, ns.name, shard.name, f.name);
        const s = await lstat(path).catch(() => undefined);
        if (s === undefined) continue; // removed meanwhile
        entries.push({ path, ns: ns.name, key: f.name, bytes: s.size, mtimeMs: s.mtimeMs });
      }
    }
  }
  entries.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { entries, skipped };
}

/**
 * Which entries to remove, oldest first: every entry older than `olderThanMs`, then the oldest of the rest
 * until they fit in `maxBytes`. Pure; `entries` must be oldest first (as listCacheEntries returns them).
 */
export function selectForPrune(entries: readonly CacheEntry[], opts: Pick<PruneOptions, 'olderThanMs' | 'maxBytes' | 'now'>): CacheEntry[] {
  const now = opts.now ?? Date.now();
  const out: CacheEntry[] = [];
  let kept = 0;
  const rest: CacheEntry[] = [];
  for (const e of entries) {
    if (opts.olderThanMs !== undefined && now - e.mtimeMs > opts.olderThanMs) out.push(e);
    else {
      rest.push(e);
      kept += e.bytes;
    }
  }
  if (opts.maxBytes !== undefined) {
    for (const e of rest) {
      if (kept <= opts.maxBytes) break;
      out.push(e);
      kept -= e.bytes;
    }
  }
  return out;
}

/** Removes (or under dryRun, lists) the entries selectForPrune picks. */
export async function pruneCache(root: string, opts: PruneOptions): Promise<PruneResult> {
  const { entries, skipped } = await listCacheEntries(root, opts.namespaces);
  const chosen = selectForPrune(entries, opts);
  const removed: CacheEntry[] = [];
  for (const e of chosen) {
    if (!opts.dryRun) {
      // An entry rewritten since it was listed is a fresh one: keep it.
      const now = await lstat(e.path).catch(() => undefined);
      if (now === undefined || now.mtimeMs !== e.mtimeMs) continue;
      await rm(e.path, { force: true });
    }
    removed.push(e);
  }
  return {
    entries: entries.length,
    bytes: entries.reduce((s, e) => s + e.bytes, 0),
    removed,
    removedBytes: removed.reduce((s, e) => s + e.bytes, 0),
    skipped,
  };
}
