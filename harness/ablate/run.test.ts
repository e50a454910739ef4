import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

// Three memories, three queries. With the fake arm at signal 1 the score is the share of query words found
// in the memory, so every ranking below can be derived by hand (ties: docId descending, as trec_eval).
const corpus = [
  { id: 'm1', text: 'dog named Biscuit' },
  { id: 'm2', text: 'cat named Tom' },
  { id: 'm3', text: 'dog food brand' },
];
const queries = [
  // m1 2/2, m3 1/2, m2 0  -> m1 m3 m2: ideal order, nDCG 1, RR 1
  { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 3, m3: 1 } },
  // m2 1/1, m1 = m3 = 0 -> m2 first: nDCG 1, RR 1
  { id: 'q2', text: 'cat', stratum: 'exact', qrels: { m2: 2 } },
  // m1 2/3 (biscuit, named), m2 1/3, m3 1/3 -> tie broken docId desc: m1 m3 m2; m3 at rank 2
  // nDCG@10 = (2/log2(3)) / (2/log2(2)) = 1/log2(3); RR = 1/2
  { id: 'q3', text: 'Biscuit food named', stratum: 'paraphrase', qrels: { m3: 2 } },
];
const meanNdcg = (1 + 1 + 1 / Math.log2(3)) / 3;
const meanRR = (1 + 1 + 1 / 2) / 3;

let dir: string;

function config(extra = '', armB = '{ seed: 1, signal: 0.5 }'): string {
  const file = join(dir, 'study.yaml');
  writeFileSync(
    file,
    `name: tiny
evalset: { format: memory, path: es }
measures: [nDCG@10, RR, R@2]
topK: 10
output: out
cache: cache
arms:
  - { id: a, kind: fake, params: { signal: 1 } }
  - { id: b, kind: fake, params: ${armB} }
compare: { permutations: 1000, resamples: 1000 }
${extra}`,
  );
  return file;
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCaptured(args, dir);
  // Errors and warnings go to the logger; info and progress lines are not diagnostics and stay out of `err`.
  const said = r.log.filter((l) => l.startsWith('warning:') || l.startsWith('harness:') || l.startsWith('  '));
  return { code: r.code, out: r.out, err: r.stderr + said.map((l) => `${l}\n`).join('') };
}

function reportDir(): string {
  const dirs = readdirSync(join(dir, 'out'));
  expect(dirs).toHaveLength(1);
  return join(dir, 'out', dirs[0]!);
}

function manifest(): { systems: { id: string; cache: { hits: number; misses: number } }[] } {
  return JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8'));
}

beforeEach(() => {
  dir = tempDir('harness-ablate');
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
  writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
});

describe('harness ablate', () => {
  it('runs every arm, evaluates over all queries and writes the report folder', async () => {
    const r = await cli(['ablate', '--config', config()]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const rd = reportDir();
    expect(rd).toMatch(/out\/tiny-[0-9a-f]{8}$/);
    for (const f of ['manifest.json', 'report.json', 'report.md', 'runs/a.trec', 'runs/b.trec']) expect(existsSync(join(rd, f)), f).toBe(true);
    // The TREC run of arm a holds the hand-derived order for q3.
    const q3 = readFileSync(join(rd, 'runs', 'a.trec'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('q3 '))
      .map((l) => l.split(/\s+/)[2]);
    expect(q3).toEqual(['m1', 'm3', 'm2']);
    const report = JSON.parse(readFileSync(join(rd, 'report.json'), 'utf8'));
    const ndcg: number[] = report.perQuery.a['nDCG@10'];
    expect(ndcg[0]).toBeCloseTo(1, 12);
    expect(ndcg[2]).toBeCloseTo(1 / Math.log2(3), 12);
    expect(r.out).toContain(`  ${'a'.padEnd(4)}  ${meanNdcg.toFixed(4).padStart(10)} ${meanRR.toFixed(4).padStart(10)}`);
    expect(manifest().systems.map((a) => a.cache)).toEqual([
      { hits: 0, misses: 1 },
      { hits: 0, misses: 1 },
    ]);
  });

  it('serves a second run of the same config from the cache', async () => {
    const file = config();
    expect((await cli(['ablate', '--config', file])).code).toBe(0);
    const before = readFileSync(join(reportDir(), 'runs', 'b.trec'), 'utf8');
    expect((await cli(['ablate', '--config', file])).code).toBe(0);
    expect(manifest().systems.map((a) => a.cache)).toEqual([
      { hits: 1, misses: 0 },
      { hits: 1, misses: 0 },
    ]);
    expect(readFileSync(join(reportDir(), 'runs', 'b.trec'), 'utf8')).toBe(before);
  });

  it('--dry-run prints the plan with cached scope runs and writes nothing', async () => {
    const r = await cli(['ablate', '--config', config(), '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('eval set: ');
    expect(r.out).toContain('3 queries');
    expect(r.out).toMatch(/a \[retrieve fake\] fingerprint [0-9a-f]{12}: 0\/1 scope run\(s\) cached/);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('--verify prints OK within tolerance and the other arms beside it', async () => {
    const extra = `expect:\n  a:\n    nDCG@10: { value: ${meanNdcg.toFixed(4)}, tolerance: 0.001 }\n`;
    const r = await cli(['ablate', '--config', config(extra), '--verify']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`  OK     a                nDCG@10    expected ${meanNdcg.toFixed(4)} actual ${meanNdcg.toFixed(4)}`);
    expect(r.out).toMatch(/ {2}-- {5}b {16}nDCG@10 {4}actual \d\.\d{4} \(no expectation\)/);
  });

  it('--verify reports OKISH within 1.5x tolerance and FAIL beyond, in either direction, with exit code 1', async () => {
    const okish = `expect:\n  a:\n    nDCG@10: { value: ${meanNdcg - 0.0012}, tolerance: 0.001 }\n`;
    const r1 = await cli(['ablate', '--config', config(okish), '--verify']);
    expect(r1.code).toBe(0);
    expect(r1.out).toContain('  OKISH  a ');
    const fail = `expect:\n  a:\n    nDCG@10: { value: ${meanNdcg - 0.01}, tolerance: 0.001 }\n`;
    const r2 = await cli(['ablate', '--config', config(fail), '--verify']);
    expect(r2.code).toBe(1);
    expect(r2.out).toContain('  FAIL   a ');
    expect(r2.err).toContain('--verify: 1 expectation(s) failed: a nDCG@10');
  });

  it('resumes a killed run without redoing finished arms and leaves no corrupt file', async () => {
    // Arm b waits 400 ms per query, so the process is killed while b is running and after a has finished.
    const file = config('', '{ seed: 1, signal: 0.5, delayMs: 400 }');
    const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'harness', 'cli', 'bin.ts'), 'ablate', '--config', file], {
      // tsx resolves from the working folder, so the child starts in the project; the config's paths are its own.
      cwd: PROJECT_ROOT,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const deadline = Date.now() + 60_000;
    // Arm a has finished once its run is in the cache (the report folder is only written at the end).
    const walk = (d: string): string[] =>
      existsSync(d) ? readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)])) : [];
    const entries = () => walk(join(dir, 'cache', 'run')).filter((f) => !f.endsWith('.tmp'));
    while (entries().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(entries()).toHaveLength(1);
    child.kill('SIGKILL');
    expect(await exited).toBeNull();
    expect(existsSync(join(dir, 'out'))).toBe(false);

    // Every cache entry left behind is whole: its envelope checks out and its payload parses.
    const { openEntry } = await import('../cache/index.js');
    for (const f of entries()) {
      const key = f.split('/').pop()!;
      const opened = openEntry('run', key as never, readFileSync(f));
      expect(opened).toHaveProperty('payload');
      if ('payload' in opened) expect(() => JSON.parse(opened.payload.toString('utf8'))).not.toThrow();
    }

    const r = await cli(['ablate', '--config', file]);
    expect(r.code).toBe(0);
    expect(manifest().systems.map((a) => [a.id, a.cache])).toEqual([
      ['a', { hits: 1, misses: 0 }],
      ['b', { hits: 0, misses: 1 }],
    ]);
  });
});

describe('checks before any work', () => {
  it('finds an output that cannot be written and a unit the eval set lacks together, before any arm runs, also under --dry-run', async () => {
    writeFileSync(join(dir, 'a-file'), 'not a folder');
    const file = config('unit: session\n');
    writeFileSync(file, readFileSync(file, 'utf8').replace('output: out', 'output: a-file/out'));
    for (const extra of [[], ['--dry-run']]) {
      const r = await cli(['ablate', '--config', file, ...extra]);
      expect(r.code).toBe(2);
      expect(r.err).toContain('study.yaml: 2 problems');
      expect(r.err).toMatch(/output: .*a-file is a file, not a folder/);
      expect(r.err).toContain('unit: eval set es has no unit "session" (it defines: none)');
    }
    expect(existsSync(join(dir, 'cache', 'run'))).toBe(false);
  });

  it('refuses a relevance level above every grade before any arm runs, naming the measures it would zero', async () => {
    const r = await cli(['ablate', '--config', config('relevanceLevel: 9\n')]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('relevanceLevel: relevance level 9 is above the highest grade in the qrels (3)');
    expect(r.err).toContain('RR, R@2');
    expect(existsSync(join(dir, 'cache', 'run'))).toBe(false);
  });
});

describe('scoring at a coarser unit', () => {
  const es = {
    name: 'turns',
    documents: [],
    queries: [],
    qrels: new Map([
      [
        'q',
        new Map([
          ['t1', 0],
          ['t2', 2],
          ['t3', 1],
        ]),
      ],
    ]),
    units: new Map([
      [
        'session',
        new Map([
          ['t1', 's1'],
          ['t2', 's1'],
          ['t3', 's2'],
          ['t4', 's2'],
        ]),
      ],
    ]),
  };

  it('moves qrels to the unit, each unit taking the best grade of its judged members', async () => {
    const { scoringUnit } = await import('./scopes.js');
    const { qrels, units } = scoringUnit({ unit: 'session', file: 'c.yaml' }, es);
    expect([...qrels.get('q')!]).toEqual([
      ['s1', 2],
      ['s2', 1],
    ]);
    expect(units?.get('t4')).toBe('s2');
    expect(scoringUnit({ file: 'c.yaml' }, es).qrels).toBe(es.qrels);
  });

  it('names the units an eval set has when the config asks for another', async () => {
    const { scoringUnit } = await import('./scopes.js');
    expect(() => scoringUnit({ unit: 'episode', file: 'c.yaml' }, es)).toThrow('unit: eval set turns has no unit "episode" (it defines: session)');
  });
});
