import { mkdir, readFile, rename, rm, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CacheKey, CacheNamespace } from './key.js';

/**
 * Writes `data` to `path` so that a reader sees either the old file or the whole new one, never a torn
 * write: write a temp file beside it, fsync, then rename over the target (rename is atomic on POSIX).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export interface CacheStats {
  hits: number;
  misses: number;
}

/**
 * A content-addressed store under one folder: `<root>/<ns>/<aa>/<key>`. Passed to arms through their
 * context rather than held as a module singleton, so tests make their own in a temp folder.
 */
export class ContentStore {
  readonly root: string;
  readonly stats: Record<CacheNamespace, CacheStats> = {
    index: { hits: 0, misses: 0 },
    embed: { hits: 0, misses: 0 },
    judge: { hits: 0, misses: 0 },
    run: { hits: 0, misses: 0 },
  };
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(root: string) {
    this.root = root;
  }

  pathOf(ns: CacheNamespace, key: CacheKey): string {
    return join(this.root, ns, key.slice(0, 2), key);
  }

  async get(ns: CacheNamespace, key: CacheKey): Promise<Buffer | undefined> {
    try {
      const data = await readFile(this.pathOf(ns, key));
      this.stats[ns].hits++;
      return data;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.stats[ns].misses++;
      return undefined;
    }
  }

  /** Callers must never store an error payload: a cached failure would be served as a result forever. */
  async put(ns: CacheNamespace, key: CacheKey, value: string | Uint8Array): Promise<void> {
    await writeFileAtomic(this.pathOf(ns, key), value);
  }

  async delete(ns: CacheNamespace, key: CacheKey): Promise<void> {
    await rm(this.pathOf(ns, key), { force: true });
  }

  /**
   * JSON value for `key`, computed by `compute` on a miss and stored. An entry that fails to parse is
   * evicted and recomputed. Concurrent misses on one key share a single computation.
   */
  async json<T>(ns: CacheNamespace, key: CacheKey, compute: () => Promise<T>, isValid: (value: unknown) => value is T = (v): v is T => v !== undefined): Promise<T> {
    const id = `${ns}/${key}`;
    const running = this.inflight.get(id);
    if (running) return running as Promise<T>;
    const p = (async () => {
      const hit = await this.get(ns, key);
      if (hit !== undefined) {
        try {
          const value: unknown = JSON.parse(hit.toString('utf8'));
          if (isValid(value)) return value;
          throw new Error('unexpected shape');
        } catch {
          this.stats[ns].hits--;
          this.stats[ns].misses++;
          await this.delete(ns, key);
        }
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

export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

