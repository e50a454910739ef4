import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { withoutTimings } from '../testing/timings.js';
import { ContentStore } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import { memoryLogger } from '../log.js';
import { buildPlan, type PlannedSystem, type SystemsPlan } from '../systems/plan.js';
import type { ScopeData } from '../systems/types.js';
import { runPlan } from './run-plan.js';
import { DocPositions, wireRun, unwireRun } from './wire.js';
import { autoJobs } from './pool.js';
import { tempDir } from '../testing/temp.js';

// Three scopes (one conversation each, as LoCoMo has), every arm kind that runs offline (sqlite-fts5 holds a
// native handle in its worker), a fusion grid over input subsets, a fusion of a fusion, and two arms with the
// same params (one run-cache key, computed once).
const topics = ['dog Biscuit park walk', 'cat Tom food sleep', 'garden tomato water sun'];
const scopes = ['s1', 's2', 's3'];
const corpus = scopes.flatMap((s, si) =>
  Array.from({ length: 8 }, (_, i) => ({
    id: `${s}-m${i}`,
    text: `${topics[(si + i) % 3]} note ${i} ${topics[i % 3]?.split(' ')[i % 4]}`,
    metadata: { scope: s },
  })),
);
const queries = scopes.flatMap((s, si) =>
  [0, 1, 2].map((k) => ({
    id: `${s}-q${k}`,
    text: topics[(si + k) % 3]
      ?.split(' ')
      .slice(k, k + 2)
      .join(' '),
    stratum: k === 0 ? 'exact' : 'paraphrase',
    scope: s,
    qrels: { [`${s}-m${k}`]: 2, [`${s}-m${k + 3}`]: 1 },
  })),
);

const config = `name: parallel
evalset: { format: memory, path: es }
measures: [nDCG@10, RR, AP]
topK: 10
arms:
  - { id: bm25, kind: bm25, params: { preset: lucene } }
  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }
  - { id: a, kind: fake, params: { signal: 1 } }
  - { id: b, kind: fake, params: { seed: 1, signal: 0.3 } }
  - { id: b-again, kind: fake, params: { seed: 1, signal: 0.3 } }
systems:
  - { id: rrf, kind: fuse, inputs: { subsets-of: [bm25, fts5, a, b], min: 2 }, params: { method: rrf }, grid: { rrfK: [10, 60] } }
  - { id: deep, kind: fuse, inputs: [rrf.bm25+fts5.rrfK=60, b-again], params: { method: rrf, rrfK: 20 } }
compare: { baseline: bm25, permutations: 1000, resamples: 1000 }
`;

/** Every file of a report folder, timings aside, by relative path. */
function folder(root: string): Map<string, string> {
  const [name, ...more] = readdirSync(root);
  expect(more).toEqual([]);
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

/** A plan run through the one entry, its outcomes by system id. */
async function executePlan(
  plan: SystemsPlan,
  scopes: readonly ScopeData[],
  o: { topK: number; store: ContentStore; log: ReturnType<typeof memoryLogger>; env: NodeJS.ProcessEnv; workDir: string; jobs: number },
) {
  return (await runPlan({ plan, topK: o.topK, cache: o.workDir }, scopes, { store: o.store, log: o.log, env: o.env, jobs: o.jobs })).outcomes;
}

describe('the parallel ablation', () => {
  it('writes the report folder the serial run writes, byte for byte (timings aside), cold and warm', async () => {
    const dir = tempDir('harness-parallel');
    mkdirSync(join(dir, 'es'));
    writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
    writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
    writeFileSync(join(dir, 'study.yaml'), config);
    const run = async (jobs: string, out: string, cache: string) => {
      const r = await runCaptured(['ablate', '--config', 'study.yaml', '--jobs', jobs, '--output', out, '--cache', cache], dir);
      expect(r.stderr).toBe('');
      expect(r.code, r.log.join('\n')).toBe(0);
      return r;
    };
    await run('1', 'serial', 'cache-serial');
    const cold = await run('2', 'parallel', 'cache-parallel');
    // Every system ran in a worker: none had to fall back to the main thread.
    expect(cold.log.filter((l) => l.includes('runs in the main thread'))).toEqual([]);
    await run('2', 'warm', 'cache-parallel');
    const serial = folder(join(dir, 'serial'));
    expect(serial.size).toBeGreaterThan(10);
    for (const other of ['parallel', 'warm']) {
      const files = folder(join(dir, other));
      expect([...files.keys()].sort()).toEqual([...serial.keys()].sort());
      for (const [f, text] of serial) expect(withoutTimings(f, files.get(f) as string), `${other}/${f}`).toBe(withoutTimings(f, text));
    }
    const manifest = (root: string) => JSON.parse(folder(join(dir, root)).get('manifest.json') as string);
    const m = manifest('parallel');
    expect(m.timings.jobs).toBe(2);
    expect(Object.keys(m.timings)).toEqual([
      'jobs',
      'loadMs',
      'executeMs',
      'indexMs',
      'searchMs',
      'fuseMs',
      'evaluateMs',
      'statisticsMs',
      'reportMs',
      'totalMs',
    ]);
    expect(manifest('serial').timings.jobs).toBe(1);
    // 5 arms, 11 input subsets x 2 rrfK, 1 fusion of a fusion: 28 systems; the duplicate arm shares its twin's
    // cache entries, so 27 keys per scope were computed once each.
    expect(m.systems).toHaveLength(5 + 11 * 2 + 1);
    const misses = m.systems.reduce((n: number, s: { cache: { misses: number } }) => n + s.cache.misses, 0);
    expect(misses).toBe(27 * 3);
    const warm = manifest('warm');
    expect(warm.systems.every((s: { cache: { misses: number } }) => s.cache.misses === 0)).toBe(true);
    // Nothing was computed on the warm run, so no index, search or fusion time was spent.
    expect([warm.timings.indexMs, warm.timings.searchMs, warm.timings.fuseMs]).toEqual([0, 0, 0]);
  }, 120_000);

  it('refuses --jobs that is not a whole number from 1 or auto, with exit 2', async () => {
    const dir = tempDir('harness-parallel');
    for (const bad of ['0', '-1', '1.5', 'many']) {
      const r = await runCaptured(['ablate', '--config', 'study.yaml', '--jobs', bad], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--jobs');
    }
  });
});

describe('what crosses the worker boundary', () => {
  const scope: ScopeData = {
    scope: undefined,
    documents: [
      { id: 'd1', text: '' },
      { id: 'd2', text: '' },
    ],
    queries: [],
    corpusFingerprint: '',
    queriesFingerprint: '',
  };

  it('packs a run into typed arrays and back to an equal run, key order and every score bit kept', () => {
    const run = {
      indexStats: { documents: 2 },
      indexMs: 1.5,
      searchMs: 2.25,
      queryMs: { '10': 0.1, q2: 0.2, '2': 0.3 },
      results: {
        q2: [
          ['d2', 0.1 + 0.2],
          ['outside', -0],
          ['d1', Number.MIN_VALUE],
        ] as [string, number][],
        '10': [],
        '2': [['d1', 1 / 3]] as [string, number][],
      },
    };
    const packed = wireRun(run, scope, new DocPositions());
    // Integer-like query ids come first in an object's key order, as in the run the instance returned.
    expect([...packed.docs]).toEqual([0, 1, 2, 0]);
    expect(packed.extraDocs).toEqual(['outside']);
    const back = unwireRun(packed, scope);
    expect(back).toEqual(run);
    expect(Object.keys(back.results)).toEqual(Object.keys(run.results));
    expect(Object.is(back.results.q2?.[1]?.[1], -0)).toBe(true);
    expect(JSON.stringify(back)).toBe(JSON.stringify(run));
  });

  it('auto jobs: the cores but one (the main thread), at most the widest level of the plan times the scopes', () => {
    const sys = (id: string, inputs: string[] = []) => ({ id, inputs }) as unknown as PlannedSystem;
    const chain = { systems: [sys('a'), sys('f', ['a']), sys('g', ['f'])], groups: new Map() } as SystemsPlan;
    expect(autoJobs(chain, 1, 8)).toBe(1);
    expect(autoJobs(chain, 3, 8)).toBe(3);
    expect(autoJobs(chain, 3, 4)).toBe(3);
    expect(autoJobs(chain, 3, 3)).toBe(2);
    // Two cores: serial, as measured faster than two workers beside the main thread (ADR 0022).
    expect(autoJobs(chain, 3, 2)).toBe(1);
    expect(autoJobs(chain, 3, 1)).toBe(1);
    const wide = { systems: [sys('a'), sys('b'), sys('c'), sys('f', ['a', 'b'])], groups: new Map() } as SystemsPlan;
    expect(autoJobs(wide, 1, 8)).toBe(3);
    expect(autoJobs(wide, 1, 16)).toBe(3);
    expect(autoJobs({ systems: [], groups: new Map() }, 1, 8)).toBe(1);
  });
});

describe('systems a worker cannot re-create', () => {
  const scopeOf = (name: string): ScopeData => ({
    scope: name,
    documents: corpus.filter((d) => d.metadata.scope === name),
    queries: queries.filter((q) => q.scope === name) as ScopeData['queries'],
    corpusFingerprint: `c-${name}`,
    queriesFingerprint: `q-${name}`,
  });
  const scopesData = scopes.map(scopeOf);

  /** A real fake-arm system, and one whose identity no registry binding reproduces (it runs in the main thread). */
  function plan(failing: boolean): SystemsPlan {
    const { plan: real, problems } = buildPlan(
      [
        { at: 'arms[0]', id: 'a', node: 'retrieve', kind: 'fake', inputs: [], params: { signal: 1 } },
        { at: 'arms[1]', id: 'b', node: 'retrieve', kind: 'fake', inputs: [], params: { seed: 2, signal: 0.5 } },
      ],
      10,
    );
    expect(problems).toEqual([]);
    const [a, b] = real.systems as [PlannedSystem, PlannedSystem];
    const local: PlannedSystem = {
      ...b,
      id: 'local',
      fingerprintHash: 'not-what-the-registry-binds',
      bound: {
        ...b.bound,
        create(ctx) {
          const inner = b.bound.create(ctx);
          return {
            runScope: async (scope, inputs, topK) => {
              if (failing && scope.scope === 's2') throw new HarnessError('local: refused on s2', { exitCode: 2, hint: 'the hint' });
              return inner.runScope(scope, inputs, topK);
            },
          };
        },
      },
    };
    return { systems: [a, local], groups: new Map() };
  }

  it('runs them in the main thread, with the serial outcome; their failure arrives with its exit code', async () => {
    const dir = tempDir('harness-parallel');
    const run = (jobs: number, failing: boolean, cache: string) =>
      executePlan(plan(failing), scopesData, {
        topK: 10,
        store: new ContentStore(join(dir, cache), { log: memoryLogger() }),
        log: memoryLogger(),
        env: {},
        workDir: join(dir, cache),
        jobs,
      });
    const serial = await run(1, false, 'c1');
    const parallel = await run(2, false, 'c2');
    for (const id of ['a', 'local']) expect(parallel.get(id)?.results, id).toEqual(serial.get(id)?.results);
    const err = await run(2, true, 'c3').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarnessError);
    expect([(err as HarnessError).message, (err as HarnessError).exitCode, (err as HarnessError).hint]).toEqual(['local: refused on s2', 2, 'the hint']);
  }, 60_000);

  it("brings a worker's failure back as the serial runner meets it: same message, exit code and class", async () => {
    const dir = tempDir('harness-parallel');
    // Two documents with one id in scope s2: the retrieve node refuses an arm that returns a document twice.
    const broken = scopesData.map((sc) =>
      sc.scope === 's2' ? { ...sc, documents: [...sc.documents, sc.documents[0] as ScopeData['documents'][number]] } : sc,
    );
    const real = plan(false);
    const only = { systems: [real.systems[0] as PlannedSystem], groups: new Map() };
    const run = (jobs: number, cache: string) =>
      executePlan(only, broken, {
        topK: 10,
        store: new ContentStore(join(dir, cache), { log: memoryLogger() }),
        log: memoryLogger(),
        env: {},
        workDir: join(dir, cache),
        jobs,
      }).then(
        () => {
          throw new Error('expected the run to fail');
        },
        (e: unknown) => e as HarnessError,
      );
    const serial = await run(1, 'c1');
    const parallel = await run(2, 'c2');
    expect(serial).toBeInstanceOf(HarnessError);
    expect(serial.message).toContain('twice');
    expect(parallel).toBeInstanceOf(HarnessError);
    expect([parallel.name, parallel.message, parallel.exitCode]).toEqual([serial.name, serial.message, serial.exitCode]);
  }, 60_000);
});
