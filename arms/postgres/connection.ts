import { createRequire } from 'node:module';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { HarnessError } from '../../harness/errors.js';

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
  /** Gives the connection back (a server's client closes; the shared embedded database stays up). */
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

/**
 * The one embedded database of this process, started on first use. Every arm of an ablation shares it, each in
 * its own scratch schema, and it stays up until {@link closeEmbedded}: the harness closes each arm after its
 * runs, and a restart per arm would cost more than the runs.
 *
 * PGlite's first start runs initdb in WASM (~30 s on a loaded 2-core machine); a start from a snapshot of the
 * freshly initialised data folder takes ~4 s. The snapshot (`<workDir>/pglite/<versions>.tar.gz`, named by the
 * PGlite and pgvector versions) is taken once, before any scratch schema exists, and holds no corpus text.
 */
function embeddedDb(workDir: string): Promise<PGlite> {
  embedded ??= (async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const snapshot = join(
      workDir,
      'pglite',
      `pglite-${packageVersion('@electric-sql/pglite')}-pgvector-${packageVersion('@electric-sql/pglite-pgvector')}.tar.gz`,
    );
    const saved = await readFile(snapshot).catch(() => undefined);
    if (saved !== undefined) {
      const db = await PGlite.create({ extensions: { vector }, loadDataDir: new Blob([saved]) }).catch(() => undefined);
      if (db !== undefined) return db;
    }
    const db = await PGlite.create({ extensions: { vector } });
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
    const dump = Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
    await mkdir(dirname(snapshot), { recursive: true });
    const tmp = `${snapshot}.${process.pid}.tmp`;
    await writeFile(tmp, dump);
    await rename(tmp, snapshot);
    return db;
  })();
  embedded.catch(() => {
    embedded = undefined;
  });
  return embedded;
}

/** Stops the embedded database if it was started (tests; a process may simply exit). */
export async function closeEmbedded(): Promise<void> {
  const db = embedded;
  embedded = undefined;
  if (db !== undefined) await (await db).close();
}

export async function openEmbedded(workDir: string): Promise<Db> {
  const db = await embeddedDb(workDir);
  return {
    engine: 'embedded',
    async transaction(readOnly, fn) {
      return db.transaction(async (t) => {
        if (readOnly) await t.query('SET TRANSACTION READ ONLY');
        return fn({ query: async <T extends object>(sql: string, params?: readonly unknown[]) => (await t.query<T>(sql, params as unknown[])).rows });
      });
    },
    async release() {},
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
export function openDb(urlEnv: string | undefined, ctx: { env: NodeJS.ProcessEnv; workDir: string }): Promise<Db> {
  return urlEnv === undefined ? openEmbedded(ctx.workDir) : openServer(urlEnv, ctx.env);
}
