import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ContentStore } from '../cache/index.js';
import { memoryLogger, stderrLogger, withDetail } from '../log.js';
import { buildPlan, type PlannedSystem } from '../systems/plan.js';
import type { ScopeData } from '../systems/types.js';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';
import { withoutTimings } from '../testing/timings.js';
import { runPlan } from './run-plan.js';

// A convex combination swept over alpha: each point's reported params hold alpha and the weights it resolves
// to, which its schema refuses together. Workers bind what the entry gave, so every point runs in a worker.
const words = ['dog park walk', 'cat food sleep', 'garden tomato water', 'river boat fish'];
const corpus = Array.from({ length: 16 }, (_, i) => ({ id: `m${i}`, text: `${words[i % 4]} note ${i} ${words[(i + 1) % 4]?.split(' ')[i % 3]}` }));
const queries = words.map((w, k) => ({ id: `q${k}`, text: w.split(' ').slice(0, 2).join(' '), stratum: 'exact', qrels: { [`m${k}`]: 1, [`m${k + 4}`]: 1 } }));
const config = `name: rebind
evalset: { format: memory, path: es }
measures: [nDCG@10]
topK: 10
arms:
  - { id: bm25, kind: bm25, params: { preset: lucene } }
  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }
systems:
  - { id: cc, kind: fuse, inputs: [bm25, fts5], params: { method: cc, normalization: tm2c2 }, grid: { alpha: [0, 0.3, 1] } }
  - { id: mm, kind: fuse, inputs: [bm25, fts5], params: { method: cc, normalization: min-max }, grid: { alpha: [0.5, 0.7] } }
compare: { baseline: bm25, permutations: 200, resamples: 200 }
`;

function folder(root: string): Map<string, string> {
  const [name] = readdirSync(root);
  const dir = join(root, name as string);
  const files = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

describe('grid points of a convex combination in worker threads', () => {
  it('run in workers (no fallback) and write the serial report', async () => {
    const dir = tempDir('harness-rebind');
    mkdirSync(join(dir, 'es'));
    writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
    writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
    writeFileSync(join(dir, 'study.yaml'), config);
    const run = async (jobs: string, out: string) => {
      const r = await runCaptured(['ablate', '--config', 'study.yaml', '--jobs', jobs, '--output', out, '--cache', `cache-${out}`], dir);
      expect(r.code, r.log.join('\n')).toBe(0);
      return r;
    };
    await run('1', 'serial');
    const parallel = await run('2', 'parallel');
    expect(parallel.log.filter((l) => l.includes('main thread'))).toEqual([]);
    const serial = folder(join(dir, 'serial'));
    const files = folder(join(dir, 'parallel'));
    expect([...files.keys()].sort()).toEqual([...serial.keys()].sort());
    for (const [f, text] of serial) expect(withoutTimings(f, files.get(f) as string), f).toBe(withoutTimings(f, text));
  }, 120_000);
});

describe('a system a worker refuses', () => {
  const scope: ScopeData = {
    scope: undefined,
    documents: corpus,
    queries: queries as ScopeData['queries'],
    corpusFingerprint: 'c',
    queriesFingerprint: 'q',
  };

  it('is said only as a detail line, which plain stderr drops and --verbose prints', async () => {
    const { plan, problems } = buildPlan([{ at: 'arms[0]', id: 'a', node: 'retrieve', kind: 'fake', inputs: [], params: { signal: 1 } }], 10);
    expect(problems).toEqual([]);
    const a = plan.systems[0] as PlannedSystem;
    const local: PlannedSystem = { ...a, id: 'local', fingerprintHash: 'not-what-the-registry-binds' };
    const dir = tempDir('harness-rebind');
    const log = memoryLogger();
    await runPlan({ plan: { systems: [local], groups: new Map() }, topK: 10, cache: dir }, [scope], {
      store: new ContentStore(join(dir, 'cache'), { log: memoryLogger() }),
      log,
      env: {},
      jobs: 2,
    });
    const said = log.lines.filter((l) => l.includes('runs in the main thread'));
    expect(said).toEqual([expect.stringMatching(/^detail: local: runs in the main thread \(its resolved params bind to another fingerprint\)$/)]);

    let written = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      written += String(s);
      return true;
    });
    try {
      stderrLogger().detail?.('plain');
      stderrLogger({ verbose: true }).detail?.('verbose');
      withDetail(stderrLogger()).detail?.('asked');
      stderrLogger({ verbose: true, quiet: true }).detail?.('quiet');
    } finally {
      spy.mockRestore();
    }
    expect(written).toBe('verbose\nasked\n');
  }, 60_000);
});
