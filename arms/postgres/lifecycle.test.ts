import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../harness/errors.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';
import { tempDir } from '../../harness/testing/temp.js';
import { openEmbedded, readSnapshot, snapshotPath } from './connection.js';
import { SHARED_WORK_DIR } from './testing.js';

// The embedded database's life: restored from its snapshot it keeps the process alive until closed, so every
// run must close it; a damaged snapshot is named and rebuilt; one that cannot be written is an error naming it.

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `node --import tsx <args>` (under bash `prefix`, e.g. a ulimit), killed after `limitMs`. */
function node(args: readonly string[], limitMs: number, prefix = ''): Promise<Exit> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = execFile(
      'bash',
      ['-c', `${prefix} exec "$0" --import tsx "$@"`, process.execPath, ...args],
      { cwd: PROJECT_ROOT, timeout: limitMs, killSignal: 'SIGKILL', encoding: 'utf8' },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr, ms: performance.now() - t0 }),
    );
  });
}

const CONFIG = `name: pg-exit
evalset: { format: memory, path: ${JSON.stringify(join(PROJECT_ROOT, 'evalset/examples/alex-memory'))} }
measures: [nDCG@10]
topK: 10
arms:
  - { id: pg-fts, kind: postgres, params: { ranking: fts } }
`;

describe('a postgres run exits once its report is written', () => {
  it('the first run and a --refresh that restores the snapshot both exit, well within the bound', async () => {
    const dir = tempDir('harness-pg-exit');
    writeFileSync(join(dir, 'pg.yaml'), CONFIG);
    // The snapshot the other postgres tests share: each run below restores it (the first may have to write it).
    mkdirSync(join(SHARED_WORK_DIR, 'pglite'), { recursive: true });
    mkdirSync(join(dir, 'cache', 'work', 'postgres'), { recursive: true });
    symlinkSync(join(SHARED_WORK_DIR, 'pglite'), join(dir, 'cache', 'work', 'postgres', 'pglite'), 'dir');
    const cli = ['harness/cli/bin.ts', 'ablate', '--config', join(dir, 'pg.yaml'), '--output', join(dir, 'reports'), '--cache', join(dir, 'cache')];
    for (const extra of [[], ['--refresh', 'pg-fts']]) {
      const r = await node([...cli, ...extra], 150_000);
      expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 0, signal: null });
      expect(r.stdout).toMatch(/pg-fts\s+0\.4582/);
      expect(r.stdout).toContain('0 hit(s), 1 computed');
    }
  }, 320_000);
});

describe('the embedded database snapshot', () => {
  it('a truncated or garbage snapshot reads as damaged, saying why; a missing one as absent', async () => {
    const dir = tempDir('harness-pg-snap');
    const tar = Buffer.alloc(2048);
    tar.write('ustar', 257, 'latin1');
    const read = async (name: string, data: Buffer) => {
      writeFileSync(join(dir, name), data);
      return readSnapshot(join(dir, name));
    };
    expect(await read('truncated', gzipSync(tar).subarray(0, 20))).toEqual({ damaged: 'unexpected end of file' });
    expect(await read('garbage', Buffer.from('not a snapshot at all'))).toEqual({ damaged: 'incorrect header check' });
    expect(await read('not-tar', gzipSync(Buffer.from('hello')))).toEqual({ damaged: 'not a tar archive' });
    expect(Buffer.from((await read('good', gzipSync(tar))) as Uint8Array).equals(tar)).toBe(true);
    expect(await readSnapshot(join(dir, 'absent'))).toBeUndefined();
  });

  it('a folder at the snapshot path is an error naming it (exit 1), before any database starts', async () => {
    const work = tempDir('harness-pg-snapdir');
    mkdirSync(snapshotPath(work), { recursive: true });
    const err = (await openEmbedded(work).catch((e: unknown) => e)) as HarnessError;
    expect(err).toBeInstanceOf(HarnessError);
    expect([err.message, err.exitCode]).toEqual([`cannot read the embedded database's snapshot ${snapshotPath(work)}: a folder is where the file goes`, 1]);
    expect(err.hint).toContain(`move ${snapshotPath(work)} away`);
  });

  it('a garbage snapshot is named on stderr and rebuilt; a write that fails (file size limit, as a full disk) names the file, exit 1, no temp file left', async () => {
    const work = tempDir('harness-pg-snapfail');
    const file = snapshotPath(work);
    mkdirSync(join(work, 'pglite'));
    writeFileSync(file, 'garbage');
    // ulimit -f 1024: 1 MiB, far below the ~4.7 MB snapshot; EFBIG fails the write as ENOSPC would.
    const script = `process.on('SIGXFSZ', () => {});
      const { openEmbedded } = await import(${JSON.stringify(join(PROJECT_ROOT, 'arms/postgres/connection.ts'))});
      const log = { warn: (m) => process.stderr.write('warning: ' + m + '\\n') };
      try { await openEmbedded(${JSON.stringify(work)}, log); console.log('opened'); }
      catch (e) { console.log(e.constructor.name + ' ' + e.exitCode + ': ' + e.message); }`;
    const r = await node(['--input-type=module', '-e', script], 150_000, 'ulimit -f 1024;');
    expect({ code: r.code, signal: r.signal }, r.stderr).toEqual({ code: 0, signal: null });
    expect(r.stderr).toContain(`warning: postgres: the embedded database's snapshot ${file} is damaged (incorrect header check); rebuilding it`);
    expect(r.stdout.trim()).toBe(`HarnessError 1: cannot write ${file}: file too large (EFBIG)`);
    expect(readdirSync(join(work, 'pglite'))).toEqual([file.split('/').at(-1)]);
    expect(existsSync(file)).toBe(true);
  }, 160_000);
});
