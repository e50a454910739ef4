import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { writeFileAtomic } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';

/** One statement's rows, inside a transaction. */
export interface Tx {
  query<T extends object>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/** A PostgreSQL database: the embedded PGlite or a server reached by URL, through one interface. */
export interface Db {
  /** `embedded` (PGlite in this process) or `server`. */
  readonly engine: 'embedded' | 'server';
  /** Runs `fn` between BEGIN (READ ONLY when asked) and COMMIT on one connection; ROLLBACK when it throws. */
  transaction<T>(readOnly: boolean, fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Gives the connection back (a server's client closes; the shared embedded database closes after its last). */
  release(): Promise<void>;
}

/** The installed version of a package, read from its package.json. */
export function packageVersion(pkg: string): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve(pkg));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    try {
      const pj = require(`${dir}/package.json`) as { name?: string; version?: string };
      if (pj.name === pkg && pj.version !== undefined) return pj.version;
    } catch {
      // not this folder; one up
    }
  }
  return 'unknown';
}

let embedded: Promise<PGlite> | undefined;
/** Open handles on the embedded database; it closes once they are all released (see {@link releaseEmbedded}). */
let users = 0;
let idleClose: NodeJS.Timeout | undefined;
/**
 * How long the embedded database outlives its last handle: the next arm of a worker usually opens it within
 * this, and a restart costs ~4 s. The timer is unref'd, so it never holds a process that is otherwise done.
 */
const IDLE_CLOSE_MS = 1000;

/** The snapshot of a fresh data folder, named by the PGlite and pgvector versions that wrote it. */
export function snapshotPath(workDir: string): string {
  return join(workDir, 'pglite', `pglite-${packageVersion('@electric-sql/pglite')}-pgvector-${packageVersion('@electric-sql/pglite-pgvector')}.tar.gz`);
}

/**
 * The snapshot's tar (decompressed here, so a damaged file is an error we name rather than PGlite's uncaught
 * zlib error), `undefined` when there is none, or why it is unusable. A folder in its place is no snapshot
 * to rebuild over: that throws, naming the path.
 */
export async function readSnapshot(file: string): Promise<Uint8Array | { damaged: string } | undefined> {
  let gz: Buffer;
  try {
    gz = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new HarnessError(
      `cannot read the embedded database's snapshot ${file}: ${code === 'EISDIR' ? 'a folder is where the file goes' : (err as Error).message}`,
      {
        hint: `move ${file} away (the harness rebuilds the snapshot, ~30 s)`,
        cause: err,
      },
    );
  }
  try {
    const tar = await promisify(gunzip)(gz);
    // Every tar header block carries "ustar" at byte 257; a tar ends with two empty 512-byte blocks.
    if (tar.length < 1536 || tar.length % 512 !== 0 || tar.subarray(257, 262).toString('latin1') !== 'ustar') return { damaged: 'not a tar archive' };
    return tar;
  } catch (err) {
    return { damaged: (err as Error).message };
  }
}

/**
 * The one embedded database of this process, started on first use. Every arm of an ablation shares it, each in
 * its own scratch schema, and it stays up while any arm holds it: a restart per arm would cost more than the
 * runs. It must be closed: a PGlite restored from a snapshot keeps the process alive until it is.
 *
 * PGlite's first start runs initdb in WASM (~30 s on a loaded 2-core machine); a start from a snapshot of the
 * freshly initialised data folder takes ~4 s. The snapshot ({@link snapshotPath}) is taken once, before any
 * scratch schema exists, and holds no corpus text; a damaged one is rebuilt, saying so.
 */
function embeddedDb(workDir: string, log: Pick<Logger, 'warn'>): Promise<PGlite> {
  embedded ??= (async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const snapshot = snapshotPath(workDir);
    const saved = await readSnapshot(snapshot);
    if (saved instanceof Uint8Array) {
      const db = await PGlite.create({ extensions: { vector }, loadDataDir: new Blob([saved]) }).catch((err: Error) => {
        log.warn(`postgres: the embedded database's snapshot ${snapshot} does not start (${err.message}); rebuilding it (~30 s)`);
      });
      if (db) return db;
    } else if (saved !== undefined) log.warn(`postgres: the embedded database's snapshot ${snapshot} is damaged (${saved.damaged}); rebuilding it (~30 s)`);
    const db = await PGlite.create({ extensions: { vector } });
    try {
      await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
      await writeFileAtomic(snapshot, new Uint8Array(await (await db.dumpDataDir('gzip')).arrayBuffer()));
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  })();
  embedded.catch(() => {
    embedded = undefined;
  });
  return embedded;
}

/** Stops the embedded database if it was started, whoever still holds it (tests). */
export async function closeEmbedded(): Promise<void> {
  clearTimeout(idleClose);
  const db = embedded;
  embedded = undefined;
  if (db !== undefined) await (await db.catch(() => undefined))?.close();
}

/** One handle fewer: the last one schedules the close (a new handle within {@link IDLE_CLOSE_MS} cancels it). */
function releaseEmbedded(): void {
  users -= 1;
  if (users > 0) return;
  clearTimeout(idleClose);
  idleClose = setTimeout(() => void closeEmbedded(), IDLE_CLOSE_MS).unref();
}

export async function openEmbedded(workDir: string, log: Pick<Logger, 'warn'> = { warn: () => {} }): Promise<Db> {
  users += 1;
  clearTimeout(idleClose);
  let db: PGlite;
  try {
    db = await embeddedDb(workDir, log);
  } catch (err) {
    releaseEmbedded();
    throw err;
  }
  let released = false;
  return {
    engine: 'embedded',
    async transaction(readOnly, fn) {
      return db.transaction(async (t) => {
        if (readOnly) await t.query('SET TRANSACTION READ ONLY');
        return fn({ query: async <T extends object>(sql: string, params?: readonly unknown[]) => (await t.query<T>(sql, params as unknown[])).rows });
      });
    },
    async release() {
      if (released) return;
      released = true;
      releaseEmbedded();
    },
  };
}

/** The server behind the URL in `env[urlEnv]`; the URL itself never appears in an error or a log. */
export async function openServer(urlEnv: string, env: NodeJS.ProcessEnv): Promise<Db> {
  const url = env[urlEnv];
  if (url === undefined || url === '')
    throw new HarnessError(`postgres: environment variable ${urlEnv} (params.urlEnv) is not set`, {
      exitCode: 2,
      hint: `export ${urlEnv}=postgres://user@host:5432/db, or remove urlEnv to use the embedded database`,
    });
  const { default: pgModule } = await import('pg');
  const client: pg.Client = new pgModule.Client({ connectionString: url });
  // An idle client's socket error would otherwise be an unhandled 'error' event that kills the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    throw new HarnessError(`postgres: cannot connect to the server in ${urlEnv}: ${(err as Error).message.replaceAll(url, '<url>')}`, {
      hint: `check that the server in ${urlEnv} is up and accepts this user`,
    });
  }
  return serverDb(client);
}

function serverDb(client: pg.Client): Db {
  const tx: Tx = { query: async <T extends object>(sql: string, params?: readonly unknown[]) => (await client.query(sql, params as unknown[])).rows as T[] };
  return {
    engine: 'server',
    async transaction(readOnly, fn) {
      await client.query(readOnly ? 'BEGIN READ ONLY' : 'BEGIN');
      try {
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    },
    async release() {
      await client.end();
    },
  };
}

/** The embedded database, or the server named by `urlEnv`. */
export function openDb(urlEnv: string | undefined, ctx: { env: NodeJS.ProcessEnv; workDir: string; log: Pick<Logger, 'warn'> }): Promise<Db> {
  return urlEnv === undefined ? openEmbedded(ctx.workDir, ctx.log) : openServer(urlEnv, ctx.env);
}
