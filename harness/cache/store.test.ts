import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { memoryLogger } from '../log.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { cacheKey } from './key.js';
import { ContentStore, openEntry, readFolderFiles, recoverFolder, sealEntry, writeFolderAtomic } from './store.js';
import { tempDir } from '../testing/temp.js';

const tmp = () => tempDir('harness-store');
const key = cacheKey('run', 1, { arm: 'a', corpus: 'c' });
const otherKey = cacheKey('run', 1, { arm: 'b', corpus: 'c' });

/** A pid that no process holds: a child that has already exited. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

function store() {
  const log = memoryLogger();
  return { s: new ContentStore(tmp(), { log }), log };
}

describe('ContentStore entry envelope', () => {
  it('seals a payload under a header naming ns, key, length and sha256, and opens it back', async () => {
    const { s } = store();
    await s.put('run', key, '{"x":1}');
    const raw = readFileSync(s.pathOf('run', key));
    // sha256 of the 7 bytes {"x":1}, from `printf '{"x":1}' | sha256sum`.
    expect(raw.toString('latin1')).toBe(`harness-cache 1 run ${key} 7 5041bf1f713df204784353e82f6a4a535931cb64f1f4b4a5aeaffcb720918b22\n{"x":1}`);
    expect((await s.get('run', key))?.toString('utf8')).toBe('{"x":1}');
    expect(s.stats.run).toEqual({ hits: 1, misses: 0, evicted: 0 });
  });

  it('refuses an edited payload, a truncated one, one copied from another key and one without a header', () => {
    const sealed = sealEntry('run', key, '[["m1",2],["m2",1]]');
    const swapped = Buffer.from(sealed.toString('latin1').replace('"m1",2],["m2"', '"m2",2],["m1"'), 'latin1');
    expect(swapped.length).toBe(sealed.length);
    expect(openEntry('run', key, swapped)).toEqual({ problem: 'payload checksum mismatch (edited or corrupted)' });
    expect(openEntry('run', key, sealed.subarray(0, sealed.length - 3))).toEqual({ problem: 'payload is 16 bytes, the header says 19 (truncated or edited)' });
    expect(openEntry('run', otherKey, sealed)).toEqual({ problem: `the entry says it is run/${key}` });
    expect(openEntry('index', key, sealed)).toEqual({ problem: `the entry says it is run/${key}` });
    expect(openEntry('run', key, Buffer.from('{}'))).toEqual({ problem: 'no entry header (written by an older harness, or not by harness at all)' });
    expect(openEntry('run', key, sealed)).toEqual({ payload: Buffer.from('[["m1",2],["m2",1]]') });
  });

  it('evicts a damaged raw entry with a warning naming namespace, key and why, and reads it as a miss', async () => {
    const { s, log } = store();
    await s.put('embed', key, Uint8Array.from([1, 2, 3, 4]));
    const path = s.pathOf('embed', key);
    const raw = readFileSync(path);
    raw[raw.length - 1] = 9;
    writeFileSync(path, raw);
    expect(await s.get('embed', key)).toBeUndefined();
    expect(existsSync(path)).toBe(false);
    expect(log.lines).toEqual([`warning: cache embed/${key}: payload checksum mismatch (edited or corrupted); evicted, recomputing`]);
    expect(s.stats.embed).toEqual({ hits: 0, misses: 1, evicted: 1 });
  });

  it('sweeps the temp files of crashed writers, not those of a live one', async () => {
    const { s } = store();
    await s.put('run', key, 'x');
    const shard = join(s.root, 'run', key.slice(0, 2));
    writeFileSync(join(shard, `${key}.${deadPid()}.0a0b0c0d.tmp`), 'torn');
    writeFileSync(join(shard, `${key}.${process.pid}.0a0b0c0d.tmp`), 'in progress');
    expect(await s.sweepOrphans()).toBe(1);
    expect(readdirSync(shard).sort()).toEqual([key, `${key}.${process.pid}.0a0b0c0d.tmp`].sort());
  });

  it('has() tells a sound entry from a damaged one without evicting or counting', async () => {
    const { s, log } = store();
    expect(await s.has('run', key)).toBe(false);
    await s.put('run', key, 'x');
    expect(await s.has('run', key)).toBe(true);
    writeFileSync(s.pathOf('run', key), 'x');
    expect(await s.has('run', key)).toBe(false);
    expect(existsSync(s.pathOf('run', key))).toBe(true);
    expect(log.lines).toEqual([]);
    expect(s.stats.run).toEqual({ hits: 0, misses: 0, evicted: 0 });
  });

  it('json(): an entry replaced by {} or null is evicted and recomputed, never fatal', async () => {
    for (const junk of ['{}', 'null']) {
      const { s, log } = store();
      mkdirSync(join(s.root, 'run', key.slice(0, 2)), { recursive: true });
      writeFileSync(s.pathOf('run', key), junk);
      let computed = 0;
      const v = await s.json('run', key, async () => {
        computed++;
        return { n: 1 };
      });
      expect(v).toEqual({ n: 1 });
      expect(computed).toBe(1);
      expect(log.lines).toHaveLength(1);
      expect(log.lines[0]).toContain('no entry header');
      // The recomputed entry is sealed and served next time.
      expect(
        await s.json('run', key, async () => {
          computed++;
          return { n: 2 };
        }),
      ).toEqual({ n: 1 });
      expect(computed).toBe(1);
    }
  });

  it("json(): a sealed entry of the wrong shape fails the caller's check and is recomputed", async () => {
    const { s, log } = store();
    await s.put('run', key, 'null');
    const check = (v: unknown) => (typeof v === 'object' && v !== null && 'n' in v ? undefined : 'not an {n} object');
    expect(await s.json('run', key, async () => ({ n: 7 }), check)).toEqual({ n: 7 });
    expect(log.lines).toEqual([`warning: cache run/${key}: not an {n} object; evicted, recomputing`]);
    expect(s.stats.run).toEqual({ hits: 0, misses: 1, evicted: 1 });
    await s.put('run', key, '{"n": 7,');
    expect(await s.json('run', key, async () => ({ n: 8 }), check)).toEqual({ n: 8 });
    expect(log.lines[1]).toBe(`warning: cache run/${key}: payload is not valid JSON; evicted, recomputing`);
  });
});

describe('writeFolderAtomic', () => {
  it('writes nested names and replaces the folder whole: files of the old folder are gone', async () => {
    const root = tmp();
    const dir = join(root, 'r');
    await writeFolderAtomic(
      dir,
      new Map([
        ['a.txt', 'old a'],
        ['stale.csv', 'old'],
        ['runs/x.trec', 'old x'],
      ]),
    );
    await writeFolderAtomic(
      dir,
      new Map<string, string | Uint8Array>([
        ['a.txt', 'new a'],
        ['runs/x.trec', Uint8Array.from([65])],
      ]),
    );
    expect([...(await readFolderFiles(dir))].map(([n, b]) => [n, b.toString('utf8')]).sort()).toEqual([
      ['a.txt', 'new a'],
      ['runs/x.trec', 'A'],
    ]);
    expect(readdirSync(root)).toEqual(['r']); // no temp or old sibling left
  });

  it('rejects names that escape the folder', async () => {
    const dir = join(tmp(), 'r');
    for (const bad of ['../x', '/etc/x', 'a//b', './a', '']) {
      await expect(writeFolderAtomic(dir, new Map([[bad, 'x']]))).rejects.toThrow('invalid file name');
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('recovers a crash between the two renames: the complete old folder is renamed back', async () => {
    const root = tmp();
    const dir = join(root, 'r');
    const pid = deadPid();
    // What a writer killed between `rename(dir, old)` and `rename(tmp, dir)` leaves.
    mkdirSync(join(root, `.r.${pid}.0123abcd.old`, 'runs'), { recursive: true });
    writeFileSync(join(root, `.r.${pid}.0123abcd.old`, 'runs', 'x.trec'), 'old x');
    mkdirSync(join(root, `.r.${pid}.4567cdef.tmp`));
    writeFileSync(join(root, `.r.${pid}.4567cdef.tmp`, 'x'), 'new');
    // A folder whose name merely starts like ours is not touched.
    mkdirSync(join(root, `.r.b.${pid}.89abcdef.tmp`));
    expect(await recoverFolder(dir)).toEqual({ busy: false });
    expect(readFileSync(join(dir, 'runs', 'x.trec'), 'utf8')).toBe('old x');
    expect(readdirSync(root).sort()).toEqual([`.r.b.${pid}.89abcdef.tmp`, 'r']);
  });

  it("sweeps orphaned temp files inside the folder and leaves a live writer's temps alone", async () => {
    const root = tmp();
    const dir = join(root, 'r');
    await writeFolderAtomic(dir, new Map([['a.txt', 'a']]));
    const dead = deadPid();
    writeFileSync(join(dir, `report.md.${dead}.00112233.tmp`), 'torn');
    writeFileSync(join(dir, `report.md.${process.pid}.00112233.tmp`), 'being written');
    mkdirSync(join(root, `.r.${process.pid}.44556677.tmp`));
    expect(await recoverFolder(dir)).toEqual({ busy: false });
    expect(readdirSync(dir).sort()).toEqual(['a.txt', `report.md.${process.pid}.00112233.tmp`]);
    expect(readdirSync(root).sort()).toEqual([`.r.${process.pid}.44556677.tmp`, 'r']);
  });

  it('reports a live writer in the middle of its swap instead of touching its folders', async () => {
    const root = tmp();
    const dir = join(root, 'r');
    mkdirSync(join(root, `.r.${process.pid}.0123abcd.old`));
    expect(await recoverFolder(dir)).toEqual({ busy: true, pid: process.pid });
    await expect(writeFolderAtomic(dir, new Map([['a', 'a']]))).rejects.toThrow(`is being replaced by process ${process.pid}`);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('a failed write names its file', () => {
  it('writeFileAtomic and writeFolderAtomic name the file they could not write, and leave no temp behind', () => {
    // A file-size limit (ulimit -f, 8 KiB) fails writes with EFBIG the way a full disk fails them with ENOSPC:
    // Node's own message names no file in either case.
    const root = tmp();
    const script = `process.on('SIGXFSZ', () => {});
      const { writeFileAtomic, writeFolderAtomic } = await import(${JSON.stringify(join(PROJECT_ROOT, 'harness', 'cache', 'store.ts'))});
      for (const write of [() => writeFileAtomic(${JSON.stringify(join(root, 'a', 'big.txt'))}, 'x'.repeat(100000)),
                           () => writeFolderAtomic(${JSON.stringify(join(root, 'r'))}, new Map([['runs/big.trec', 'x'.repeat(100000)]]))]) {
        try { await write(); console.log('written'); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }
      }`;
    const r = spawnSync('bash', ['-c', 'ulimit -f 8; exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, script], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual([
      `HarnessError: cannot write ${join(root, 'a', 'big.txt')}: file too large (EFBIG)`,
      `HarnessError: cannot write ${join(root, 'r', 'runs', 'big.trec')}: file too large (EFBIG)`,
    ]);
    expect(readdirSync(root)).toEqual(['a']);
    expect(readdirSync(join(root, 'a'))).toEqual([]);
  });
});

describe('a path in the way is named, with what to do', () => {
  it('a folder where an entry belongs: get, has and put name the entry (exit 1), never raw EISDIR', async () => {
    const { s } = store();
    mkdirSync(s.pathOf('run', key), { recursive: true });
    for (const call of [() => s.get('run', key), () => s.has('run', key), () => s.put('run', key, '{}')]) {
      const err = (await call().catch((e: unknown) => e)) as HarnessError;
      expect(err).toBeInstanceOf(HarnessError);
      expect([err.message, err.exitCode, err.hint]).toEqual([
        `cache entry ${s.pathOf('run', key)} is a folder, not a file (EISDIR)`,
        1,
        `remove it (rm -r '${s.pathOf('run', key)}'); the entry is recomputed`,
      ]);
    }
  });

  it('a cache folder that is a file is the config to fix (exit 2), at start and on any access', async () => {
    const root = join(tmp(), 'cache-file');
    writeFileSync(root, 'not a folder');
    const s = new ContentStore(root, { log: memoryLogger() });
    const expected = [`cache folder ${root}: it is a file, not a folder`, 2];
    for (const call of [() => s.sweepOrphans(), () => s.get('run', key), () => s.has('run', key), () => s.put('run', key, '{}')]) {
      const err = (await call().catch((e: unknown) => e)) as HarnessError;
      expect(err).toBeInstanceOf(HarnessError);
      expect([err.message, err.exitCode]).toEqual(expected);
      expect(err.hint).toContain('point cache: (or --cache) at a folder');
    }
    const under = new ContentStore(join(root, 'sub'), { log: memoryLogger() });
    const err = (await under.get('run', key).catch((e: unknown) => e)) as HarnessError;
    expect([err.message, err.exitCode]).toEqual([`cache folder ${join(root, 'sub')}: ${root} is a file, not a folder`, 2]);
  });

  it('a file where a shard folder belongs names that file (exit 1)', async () => {
    const { s } = store();
    const shard = join(s.root, 'run', key.slice(0, 2));
    mkdirSync(join(s.root, 'run'), { recursive: true });
    writeFileSync(shard, '');
    const err = (await s.get('run', key).catch((e: unknown) => e)) as HarnessError;
    expect([err.message, err.exitCode]).toEqual([`cache: ${shard} is a file where the cache keeps a folder (ENOTDIR)`, 1]);
    const put = (await s.put('run', key, '{}').catch((e: unknown) => e)) as HarnessError;
    expect(put.message).toBe(`cache: ${shard} is a file where the cache keeps a folder (EEXIST)`);
  });
});

describe('writeFolderAtomic over a file', () => {
  it('refuses a file in the folder place (exit 2) and leaves the file as it was, instead of deleting it like an old folder', async () => {
    const root = tmp();
    const file = join(root, 'notes.txt');
    writeFileSync(file, 'precious');
    const err = (await writeFolderAtomic(file, new Map([['report.json', '{}']])).catch((e: unknown) => e)) as HarnessError;
    expect([err.message, err.exitCode]).toEqual([`${file}: it is a file, not a folder`, 2]);
    expect(readFileSync(file, 'utf8')).toBe('precious');
    const under = (await writeFolderAtomic(join(file, 'rep'), new Map([['report.json', '{}']])).catch((e: unknown) => e)) as HarnessError;
    expect([under.message, under.exitCode]).toEqual([`${join(file, 'rep')}: ${file} is a file, not a folder`, 2]);
    expect(readdirSync(root)).toEqual(['notes.txt']);
  });
});
