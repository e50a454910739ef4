import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../cli/main.js';
import { parseDuration, parseSize } from '../cli/cache.command.js';
import { memoryLogger } from '../log.js';
import { cacheKey } from './key.js';
import { listCacheEntries, pruneCache, selectForPrune } from './prune.js';
import { ContentStore } from './store.js';
import { tempDir } from '../testing/temp.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 31);
let root: string;

/** Bytes an entry takes on disk: its payload plus the store's integrity header. */
const size = (path: string) => statSync(path).size;

/** Puts an entry of `bytes` bytes through the real store, written `ageDays` before NOW. */
async function entry(store: ContentStore, ns: 'run' | 'index', name: string, bytes: number, ageDays: number): Promise<string> {
  const key = cacheKey(ns, 1, { name });
  await store.put(ns, key, 'x'.repeat(bytes));
  const t = (NOW - ageDays * DAY) / 1000;
  utimesSync(store.pathOf(ns, key), t, t);
  return store.pathOf(ns, key);
}

beforeEach(() => {
  root = tempDir('harness-prune');
});

describe('cache prune', () => {
  it('removes entries older than the limit, then the oldest until the rest fit the budget', async () => {
    const store = new ContentStore(root);
    const old = await entry(store, 'run', 'old', 100, 40);
    const mid = await entry(store, 'index', 'mid', 300, 10);
    const newer = await entry(store, 'run', 'newer', 200, 5);
    const fresh = await entry(store, 'run', 'fresh', 50, 0);
    const { entries } = await listCacheEntries(root);
    expect(entries.map((e) => e.path)).toEqual([old, mid, newer, fresh]);
    const byAge = selectForPrune(entries, { olderThanMs: 30 * DAY, now: NOW });
    expect(byAge.map((e) => e.path)).toEqual([old]);
    // After the age cut mid, newer and fresh remain; a budget that holds only newer + fresh drops mid, the oldest.
    const both = selectForPrune(entries, { olderThanMs: 30 * DAY, maxBytes: size(newer) + size(fresh), now: NOW });
    expect(both.map((e) => e.path)).toEqual([old, mid]);
    expect(selectForPrune(entries, { maxBytes: 0, now: NOW })).toHaveLength(4);
    expect(selectForPrune(entries, { maxBytes: size(old) + size(mid) + size(newer) + size(fresh), now: NOW })).toEqual([]);
  });
  it('--dry-run removes nothing; a real run removes exactly what the dry run listed', async () => {
    const store = new ContentStore(root);
    const old = await entry(store, 'run', 'old', 100, 40);
    const fresh = await entry(store, 'run', 'fresh', 50, 0);
    const dry = await pruneCache(root, { olderThanMs: 30 * DAY, now: NOW, dryRun: true });
    expect(dry.removed.map((e) => e.path)).toEqual([old]);
    expect(existsSync(old)).toBe(true);
    const [oldBytes, freshBytes] = [size(old), size(fresh)];
    const real = await pruneCache(root, { olderThanMs: 30 * DAY, now: NOW });
    expect(real).toMatchObject({ entries: 2, bytes: oldBytes + freshBytes, removedBytes: oldBytes });
    expect([existsSync(old), existsSync(fresh)]).toEqual([false, true]);
  });
  it('never touches a write in progress (the temp file beside an entry) nor files the cache did not write', async () => {
    const store = new ContentStore(root);
    const old = await entry(store, 'run', 'old', 100, 40);
    const shard = join(old, '..');
    const tmp = `${old}.4242.deadbeef.tmp`; // writeFileAtomic's temp name for a write in progress
    writeFileSync(tmp, 'partial');
    writeFileSync(join(shard, 'README'), 'mine');
    mkdirSync(join(root, 'run', 'not-a-shard'));
    writeFileSync(join(root, 'run', 'not-a-shard', 'f'.repeat(64)), 'x');
    writeFileSync(join(root, 'notes.txt'), 'x');
    const t = (NOW - 90 * DAY) / 1000;
    for (const f of [tmp, join(shard, 'README')]) utimesSync(f, t, t);
    const r = await pruneCache(root, { olderThanMs: DAY, maxBytes: 0, now: NOW });
    expect(r.removed.map((e) => e.path)).toEqual([old]);
    expect(r.skipped).toBe(4);
    expect(readdirSync(shard).sort()).toEqual(['README', `${old.split('/').pop()}.4242.deadbeef.tmp`].sort());
  });
  it('a missing cache folder is empty, not an error', async () => {
    expect(await pruneCache(join(root, 'none'), { maxBytes: 0 })).toMatchObject({ entries: 0, removed: [] });
  });
  it('reads durations and sizes strictly', () => {
    expect(parseDuration('--older-than', '30d')).toBe(30 * DAY);
    expect(parseDuration('--older-than', '1.5h')).toBe(1.5 * 3_600_000);
    expect(() => parseDuration('--older-than', '30')).toThrow(/--older-than "30": give a number and a unit/);
    expect(parseSize('--max-size', '2G')).toBe(2 * 1024 ** 3);
    expect(parseSize('--max-size', '500MiB')).toBe(500 * 1024 ** 2);
    expect(parseSize('--max-size', '4096')).toBe(4096);
    expect(() => parseSize('--max-size', '-1G')).toThrow(/--max-size "-1G"/);
  });
  it('harness cache prune: exit 2 without a limit; --dry-run reports; a real run removes', async () => {
    const store = new ContentStore(join(root, '.cache'));
    const old = await entry(store, 'run', 'old', 100, 400);
    const run = async (args: string[]) => {
      let out = '';
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        const code = await runCli(['cache', 'prune', ...args], { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: root });
        return { code, out };
      } finally {
        spy.mockRestore();
      }
    };
    expect((await run([])).code).toBe(2);
    expect((await run(['--older-than', 'soon'])).code).toBe(2);
    const dry = await run(['--older-than', '30d', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out).toMatch(/^\.cache: 1 entries, 0\.0 MiB\n {2}would remove 1 entries, 0\.0 MiB \(run 1\)/);
    expect(existsSync(old)).toBe(true);
    expect((await run(['--ns', 'index', '--older-than', '30d'])).out).toMatch(/^\.cache: 0 entries, 0\.0 MiB\n {2}removed 0 entries/);
    expect(existsSync(old)).toBe(true); // only the index namespace was pruned
    const real = await run(['--older-than', '30d']);
    expect(real.out).toMatch(/ removed 1 entries/);
    expect(existsSync(old)).toBe(false);
  });
});
