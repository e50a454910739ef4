import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { memoryLogger } from '../log.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';
import { runCli } from './main.js';

/** Runs the CLI in-process: exit code and what it printed to stderr (errors go there, not through io). */
async function cli(cwd: string, args: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((t) => {
    err += String(t);
    return true;
  });
  try {
    const code = await runCli(args, { out: () => undefined, log: memoryLogger(), env: {}, cwd });
    return { code, err };
  } finally {
    spy.mockRestore();
  }
}

/** A folder with a two-query memory eval set and an ablation config over it, `cache:` set to `cache`. */
function study(cache = 'cache'): string {
  const dir = tempDir('harness-fs-errors');
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), '{"id":"m1","text":"the dog is Biscuit"}\n{"id":"m2","text":"the cat is Tom"}\n');
  writeFileSync(
    join(dir, 'es', 'queries.jsonl'),
    '{"id":"q1","text":"dog","stratum":"exact","qrels":{"m1":1}}\n{"id":"q2","text":"cat","stratum":"exact","qrels":{"m2":1}}\n',
  );
  const config = `name: t\nevalset: { format: memory, path: es }\nmeasures: [nDCG@10]\noutput: out\ncache: ${cache}\narms:\n  - { id: a, kind: bm25 }\n`;
  writeFileSync(join(dir, 'c.yaml'), config);
  return dir;
}

/** Every file under `dir`, recursively, by relative path. */
function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(dir, join(rel, e.name)) : [join(rel, e.name)]));
}

describe('path errors name the path and what to do', () => {
  it('compare --out pointing at a file is a usage error (exit 2), and the file is kept (it was deleted like an old report)', async () => {
    const dir = tempDir('harness-fs-errors');
    writeFileSync(join(dir, 'q.trec'), 'q1 0 d1 1\n');
    writeFileSync(join(dir, 'a.trec'), 'q1 Q0 d1 1 2 a\n');
    writeFileSync(join(dir, 'b.trec'), 'q1 Q0 d2 1 2 b\n');
    writeFileSync(join(dir, 'notes.txt'), 'precious');
    const r = await cli(dir, ['compare', 'a.trec', 'b.trec', '--qrels', 'q.trec', '--out', 'notes.txt']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`harness: ${join(dir, 'notes.txt')}: it is a file, not a folder`);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('precious');
  });

  it('cache: pointing at a file is a config error (exit 2), not a raw ENOTDIR', async () => {
    const dir = study('cache-file');
    writeFileSync(join(dir, 'cache-file'), 'a file');
    const r = await cli(dir, ['ablate', '--config', 'c.yaml']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`harness: cache folder ${join(dir, 'cache-file')}: it is a file, not a folder`);
    expect(r.err).toContain('hint: point cache: (or --cache) at a folder');
    expect(r.err).not.toContain('unexpected failure');
  });

  it('a cache entry that is a folder is named with how to clear it (exit 1), not a raw EISDIR', async () => {
    const dir = study();
    expect((await cli(dir, ['ablate', '--config', 'c.yaml'])).code).toBe(0);
    const entry = filesUnder(join(dir, 'cache')).find((f) => f.startsWith('run/'));
    expect(entry).toBeDefined();
    const path = join(dir, 'cache', entry as string);
    rmSync(path);
    mkdirSync(path);
    const r = await cli(dir, ['ablate', '--config', 'c.yaml']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`harness: cache entry ${path} is a folder, not a file (EISDIR)`);
    expect(r.err).toContain(`hint: remove it (rm -r '${path}'); the entry is recomputed`);
  });

  it('datasets get --dir pointing at a file is a usage error (exit 2), not a raw EEXIST', async () => {
    const dir = tempDir('harness-fs-errors');
    writeFileSync(join(dir, 'ds'), 'a file');
    writeFileSync(join(dir, 'copy.json'), '[]');
    const r = await cli(dir, ['datasets', 'get', 'locomo', '--dir', 'ds', '--from', 'copy.json']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`harness: --dir ${join(dir, 'ds')}: it is a file, not a folder`);
    expect(r.err).toContain('hint: point --dir at a folder');
    const under = await cli(dir, ['datasets', 'get', 'locomo', '--dir', 'ds/sub', '--from', 'copy.json']);
    expect([under.code, under.err.split('\n')[0]]).toEqual([2, `harness: --dir ${join(dir, 'ds', 'sub')}: ${join(dir, 'ds')} is a file, not a folder`]);
  });
});

// The other user runs the built CLI (`npm test` builds first): tsx could not start its esbuild service as user nobody here.
const BIN = join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'bin.js');
const built = existsSync(BIN);
if (!built) process.stderr.write('[skip] report folder owned by another user: dist/ is not built (run `npm run build`; `npm test` builds it first)\n');

// As root the test runs the CLI as user nobody, who must be able to read this checkout (a clone inside a mode
// 700 folder, as `mktemp -d` makes, is closed to nobody).
const nobodyBlocked =
  built && process.getuid?.() === 0 && spawnSync(process.execPath, [BIN, '--version'], { uid: 65534, gid: 65534, encoding: 'utf8' }).status !== 0;
if (nobodyBlocked) process.stderr.write(`[skip] report folder owned by another user: user nobody cannot run ${BIN} (a folder above it is closed to others)\n`);

describe.skipIf(!built || nobodyBlocked)('an old report folder this user cannot replace', () => {
  // Root may delete anything, so as root the write runs in a child process as user nobody over a folder root
  // owns; as any other user, the old folder is made read-only. Either way the refusal is the kernel's EACCES.
  const asRoot = process.getuid?.() === 0;

  /** The CLI in `dir` with `argv`, as another user when this one is root. */
  function asOther(dir: string, argv: readonly string[]): { code: number | null; stderr: string } {
    const args = [BIN, ...argv];
    // The test run's private temp folder lets only its owner in; nobody needs to pass through it for the run.
    const parent = dirname(dir);
    const mode = statSync(parent).mode & 0o777;
    if (asRoot) chmodSync(parent, mode | 0o001);
    try {
      const r = spawnSync(process.execPath, args, {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, TMPDIR: join(dir, 'tmp'), HOME: dir },
        ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      });
      return { code: r.status, stderr: r.stderr };
    } finally {
      chmodSync(parent, mode);
    }
  }

  it('is refused before anything is written, naming the folder and what to do (exit 1); the old report stays whole', () => {
    const dir = tempDir('harness-fs-errors');
    chmodSync(dir, 0o777);
    mkdirSync(join(dir, 'tmp'), { mode: 0o777 });
    chmodSync(join(dir, 'tmp'), 0o777);
    writeFileSync(join(dir, 'q.trec'), 'q1 0 d1 1\nq2 0 d2 1\n');
    writeFileSync(join(dir, 'a.trec'), 'q1 Q0 d1 1 2 a\nq2 Q0 d3 1 2 a\n');
    writeFileSync(join(dir, 'b.trec'), 'q1 Q0 d3 1 2 b\nq2 Q0 d2 1 2 b\n');
    mkdirSync(join(dir, 'rep', 'runs'), { recursive: true });
    writeFileSync(join(dir, 'rep', 'report.json'), '{"old":true}\n');
    writeFileSync(join(dir, 'rep', 'runs', 'a.trec'), 'old\n');
    if (!asRoot) chmodSync(join(dir, 'rep'), 0o555);
    const r = asOther(dir, ['compare', 'a.trec', 'b.trec', '--qrels', 'q.trec', '--out', 'rep']);
    if (!asRoot) chmodSync(join(dir, 'rep'), 0o755);
    expect(r.stderr).toContain(
      `harness: ${join(dir, 'rep')} cannot be emptied by this user (permission denied, EACCES), so ${join(dir, 'rep')} cannot be replaced`,
    );
    expect(r.stderr).toContain(`hint: remove ${join(dir, 'rep')} as the user who owns it, or write to another folder`);
    expect(r.code).toBe(1);
    expect(readFileSync(join(dir, 'rep', 'report.json'), 'utf8')).toBe('{"old":true}\n');
    expect(readdirSync(dir).filter((n) => n.startsWith('.rep.'))).toEqual([]);
    expect(existsSync(join(dir, 'rep', 'report.md'))).toBe(false);
  });

  it('ablate refuses it before any work, naming the report folder (exit 1)', async () => {
    const dir = study();
    chmodSync(dir, 0o777);
    mkdirSync(join(dir, 'tmp'), { mode: 0o777 });
    chmodSync(join(dir, 'tmp'), 0o777);
    expect((await cli(dir, ['ablate', '--config', 'c.yaml'])).code).toBe(0);
    const [report] = readdirSync(join(dir, 'out'));
    const rep = join(dir, 'out', report as string);
    const before = readFileSync(join(rep, 'report.json'), 'utf8');
    chmodSync(join(dir, 'out'), 0o777);
    if (!asRoot) chmodSync(rep, 0o555);
    const r = asOther(dir, ['ablate', '--config', 'c.yaml']);
    if (!asRoot) chmodSync(rep, 0o755);
    expect(r.stderr).toContain(`harness: output: ${rep} cannot be emptied by this user (permission denied, EACCES)`);
    expect(r.stderr).not.toContain('eval set');
    expect(r.code).toBe(1);
    expect(readFileSync(join(rep, 'report.json'), 'utf8')).toBe(before);
  });
});

/** Whether `chattr +i` works here (root on a file system with attributes): root's own EPERM, on unlink. */
function immutable(file: string): boolean {
  return process.getuid?.() === 0 && spawnSync('chattr', ['+i', file]).status === 0;
}

describe('the old folder cannot be deleted once the new one is in place', () => {
  it('says the new folder was written and where the old one was left (exit 1)', async () => {
    const { writeFolderAtomic } = await import('../cache/store.js');
    const dir = join(tempDir('harness-fs-errors'), 'rep');
    mkdirSync(dir);
    const stuck = join(dir, 'report.json');
    writeFileSync(stuck, 'old');
    if (!immutable(stuck)) {
      process.stderr.write('[skip] old folder not deletable: needs root and chattr +i here\n');
      return;
    }
    let err: unknown;
    try {
      err = await writeFolderAtomic(dir, new Map([['report.json', 'new']])).catch((e: unknown) => e);
    } finally {
      for (const name of readdirSync(dirname(dir))) spawnSync('chattr', ['-i', join(dirname(dir), name, 'report.json')]);
    }
    const old = readdirSync(dirname(dir)).find((n) => n.endsWith('.old')) as string;
    expect(readFileSync(join(dir, 'report.json'), 'utf8')).toBe('new');
    // Node's recursive rm reports an immutable file's EPERM as the ENOTDIR of its fallback; the point is the path.
    expect((err as Error).message).toMatch(
      new RegExp(
        `^${dir}(?: was written, but the folder it replaced, moved aside to )${join(dirname(dir), old).replaceAll('.', '\\.')}, could not be deleted: `,
      ),
    );
    expect((err as { hint: string }).hint).toBe(`delete ${join(dirname(dir), old)} as the user who owns it; nothing reads it`);
    expect((err as { exitCode: number }).exitCode).toBe(1);
  });
});
