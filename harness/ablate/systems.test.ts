import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import type { ReportData } from '../decision/types.js';
import { tempDir } from '../testing/temp.js';

// Six memories and four queries, two strata; fake arms (word overlap + seeded noise) as inputs.
const corpus = [
  { id: 'm1', text: 'dog named Biscuit' },
  { id: 'm2', text: 'cat named Tom' },
  { id: 'm3', text: 'dog food brand' },
  { id: 'm4', text: 'Biscuit likes the park' },
  { id: 'm5', text: 'Tom the cat sleeps' },
  { id: 'm6', text: 'brand of cat food' },
];
const queries = [
  { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 3, m4: 1 } },
  { id: 'q2', text: 'cat', stratum: 'exact', qrels: { m2: 2, m5: 2 } },
  { id: 'q3', text: 'Biscuit food named', stratum: 'paraphrase', qrels: { m3: 2 } },
  { id: 'q4', text: 'food brand', stratum: 'paraphrase', qrels: { m6: 3, m3: 1 } },
];

let dir: string;

function config(systems: string, extra = ''): string {
  const file = join(dir, 'study.yaml');
  writeFileSync(
    file,
    `name: fused
evalset: { format: memory, path: es }
measures: [nDCG@10, RR]
topK: 10
output: out
cache: cache
arms:
  - { id: a, kind: fake, params: { signal: 1 } }
  - { id: b, kind: fake, params: { seed: 1, signal: 0.3 } }
systems:
${systems}
compare: { permutations: 1000, resamples: 1000 }
${extra}`,
  );
  return file;
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string; log: readonly string[] }> {
  const r = await runCaptured(args, dir);
  return { code: r.code, out: r.out, err: r.stderr, log: r.log };
}

function reportDir(): string {
  const dirs = readdirSync(join(dir, 'out'));
  expect(dirs).toHaveLength(1);
  return join(dir, 'out', dirs[0]!);
}

/** queryId -> docIds in the order of a TREC run file of the report (the file lists each query best first). */
function ranking(id: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of readFileSync(join(reportDir(), 'runs', `${id}.trec`), 'utf8')
    .trim()
    .split('\n')) {
    const [qid, , docId] = line.split(/\s+/);
    out.set(qid!, [...(out.get(qid!) ?? []), docId!]);
  }
  return out;
}

function report(): ReportData {
  return JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as ReportData;
}

function manifest(): { systems: { id: string; cache: { hits: number; misses: number } }[] } {
  return JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8'));
}

beforeEach(() => {
  dir = tempDir('harness-systems');
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
  writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
});

describe('systems that consume runs', () => {
  const rrfOfRrf = `  - { id: rrf, kind: fuse, inputs: [a, b], params: { method: rrf, rrfK: 60 } }
  - { id: rrf2, kind: fuse, inputs: [rrf, a], params: { method: rrf, rrfK: 10 } }`;

  it('fuses arm runs and a fused run again, each by the RRF formula over the input rankings', async () => {
    const r = await cli(['ablate', '--config', config(rrfOfRrf)]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const rrfScores = (inputs: Map<string, string[]>[], k: number, qid: string) => {
      const score = new Map<string, number>();
      for (const run of inputs) run.get(qid)!.forEach((d, i) => score.set(d, (score.get(d) ?? 0) + 1 / (k + i + 1)));
      return score;
    };
    const order = (score: Map<string, number>) => [...score].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? 1 : -1)).map(([d]) => d);
    const [a, b, rrf, rrf2] = [ranking('a'), ranking('b'), ranking('rrf'), ranking('rrf2')];
    for (const q of queries) {
      expect(rrf.get(q.id)).toEqual(order(rrfScores([a, b], 60, q.id)));
      expect(rrf2.get(q.id)).toEqual(order(rrfScores([rrf, a], 10, q.id)));
    }
    const runs = report().runs;
    expect(runs.map((x) => [x.id, x.node, x.kind, x.inputs])).toEqual([
      ['a', 'retrieve', 'fake', undefined],
      ['b', 'retrieve', 'fake', undefined],
      ['rrf', 'fuse', 'rrf', ['a', 'b']],
      ['rrf2', 'fuse', 'rrf', ['rrf', 'a']],
    ]);
    // Contribution shares are over the fused top-10 of every query: here every fused document is in both inputs.
    expect(runs[2]!.diagnostics!.inputs.map((d) => [d.input, d.share, d.reachable])).toEqual([
      ['a', 1, true],
      ['b', 1, true],
    ]);
  });

  it("applies an importance prior after fusion, from each memory's importance (unknown: the neutral 0.5)", async () => {
    const importance: Record<string, number> = { m1: 0.1, m2: 0.9, m3: 0.5, m4: 1, m5: 0.2 };
    writeFileSync(
      join(dir, 'es', 'corpus.jsonl'),
      `${corpus.map((d) => JSON.stringify(importance[d.id] === undefined ? d : { ...d, importance: importance[d.id] })).join('\n')}\n`,
    );
    const r = await cli([
      'ablate',
      '--config',
      config('  - { id: p, kind: fuse, inputs: [a, b], params: { method: rrf, priors: { importance: { weight: 1 } } } }'),
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const [a, b, p] = [ranking('a'), ranking('b'), ranking('p')];
    // With weight 1 the factor is the importance itself: s' = (1/(60+ra) + 1/(60+rb)) * importance.
    for (const q of queries) {
      const score = new Map<string, number>();
      for (const run of [a, b]) run.get(q.id)!.forEach((d, i) => score.set(d, (score.get(d) ?? 0) + 1 / (60 + i + 1)));
      for (const [d, s] of score) score.set(d, s * (importance[d] ?? 0.5));
      const expected = [...score].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? 1 : -1)).map(([d]) => d);
      expect(p.get(q.id), q.id).toEqual(expected);
    }
  });

  it('computes nothing on a second run: every arm and fused run comes from the cache', async () => {
    const file = config(rrfOfRrf);
    expect((await cli(['ablate', '--config', file])).code).toBe(0);
    expect(manifest().systems.map((s) => s.cache)).toEqual(Array(4).fill({ hits: 0, misses: 1 }));
    const second = await cli(['ablate', '--config', file]);
    expect(second.code).toBe(0);
    expect(manifest().systems.map((s) => s.cache)).toEqual(Array(4).fill({ hits: 1, misses: 0 }));
    expect(second.out).toContain('system runs from cache: 4 hit(s), 0 computed');
  });

  it('does not say a weight bars an input when the other input returns too few documents to fill the top-10', async () => {
    // Weighted RRF: b's best document alone scores 0.3/61 = 0.0049, below a's document at rank r whenever
    // 1/(60+r) > 0.3/61, i.e. r < 143. The data-free bound bars b, but with six memories a returns fewer than
    // 10 documents for every query, so b's documents do reach the top-10: the report must not say "can never"
    // (harness/ablate/quiet.test.ts has the case where a fills the top-10).
    const barred = await cli(['ablate', '--config', config('  - { id: w, kind: fuse, inputs: [a, b], params: { method: rrf, weights: { a: 1, b: 0.3 } } }')]);
    expect(barred.code).toBe(0);
    const flagged = report().runs.find((x) => x.id === 'w')!.diagnostics!.inputs;
    expect(flagged.map((d) => [d.input, d.reachable])).toEqual([
      ['a', true],
      ['b', true],
    ]);
    expect(flagged[1]!.reason).toMatch(
      /^b can reach the fused top 10 only where the inputs that outrank it return fewer than 10 documents: it is barred in 0 of the \d+ queries/,
    );
    expect(barred.log.some((l) => l.includes('can never place'))).toBe(false);
    expect(readFileSync(join(reportDir(), 'report.md'), 'utf8')).not.toContain('can never');

    rmSync(join(dir, 'out'), { recursive: true });
    const fixed = await cli(['ablate', '--config', config('  - { id: w, kind: fuse, inputs: [a, b], params: { method: rrf, weights: { a: 1, b: 1 } } }')]);
    expect(fixed.code).toBe(0);
    expect(
      report()
        .runs.find((x) => x.id === 'w')!
        .diagnostics!.inputs.every((d) => d.reachable),
    ).toBe(true);
    expect(fixed.log.some((l) => l.includes('can never place'))).toBe(false);
  });

  it('expands grids and subsets, lists every system in --dry-run, and tunes each grid by cross-validation', async () => {
    const file = config(
      `  - { id: rrf, kind: fuse, inputs: { subsets-of: [a, b, c] }, params: { method: rrf }, grid: { rrfK: [1, 60] } }`,
      `tune: { measure: nDCG@10, folds: 2, seed: 3 }\ngate: { candidate: rrf.tuned, measure: nDCG@10 }\n`,
    );
    writeFileSync(file, readFileSync(file, 'utf8').replace('arms:\n', 'arms:\n  - { id: c, kind: fake, params: { seed: 2, signal: 0.5 } }\n'));
    const dry = await cli(['ablate', '--config', file, '--dry-run']);
    expect(dry.code).toBe(0);
    const ids = ['a+b', 'a+c', 'b+c', 'a+b+c'].flatMap((s) => [`rrf.${s}.rrfK=1`, `rrf.${s}.rrfK=60`]);
    for (const id of ids) expect(dry.out).toContain(`    ${id} [fuse rrf]`);
    expect(dry.out).toContain('systems: 11 (3 retrieve, 8 fuse) + 1 tuned');
    expect(dry.out).toContain('grid rrf: 8 systems, tuned as rrf.tuned on 2 folds by nDCG@10');

    const r = await cli(['ablate', '--config', file]);
    expect(r.code).toBe(0);
    const data = report();
    const tuned = data.runs.find((x) => x.id === 'rrf.tuned')!;
    expect(tuned.tuning!.choices).toHaveLength(2);
    for (const c of tuned.tuning!.choices) expect(ids).toContain(c.member);
    expect(ids).toContain(tuned.tuning!.oracle.member);
    expect(data.gateResult?.config.candidate).toBe('rrf.tuned');
    const md = readFileSync(join(reportDir(), 'report.md'), 'utf8');
    expect(md).toContain('## Best systems per stratum (nDCG@10)');
    expect(md).toContain('### rrf: 8 systems, nDCG@10 per stratum');
    expect(md).toContain('oracle (best on test)');
  });
});

describe('tuning on a dev split', () => {
  it('picks each grid point on the dev queries, scores it on the test queries, and keeps dev queries out of the runs', async () => {
    mkdirSync(join(dir, 'beir', 'qrels'), { recursive: true });
    const docs = corpus.map((d) => ({ _id: d.id, title: '', text: d.text }));
    writeFileSync(join(dir, 'beir', 'corpus.jsonl'), `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`);
    const qs = [
      { _id: 't1', text: 'dog Biscuit' },
      { _id: 't2', text: 'cat food' },
      { _id: 'd1', text: 'food brand' },
      { _id: 'd2', text: 'Tom cat' },
    ];
    writeFileSync(join(dir, 'beir', 'queries.jsonl'), `${qs.map((q) => JSON.stringify(q)).join('\n')}\n`);
    writeFileSync(join(dir, 'beir', 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nt1\tm1\t2\nt2\tm6\t1\n');
    writeFileSync(join(dir, 'beir', 'qrels', 'dev.tsv'), 'query-id\tcorpus-id\tscore\nd1\tm6\t2\nd2\tm5\t1\n');
    const file = join(dir, 'beir.yaml');
    writeFileSync(
      file,
      `name: dev
evalset: { format: beir, path: beir, split: test }
measures: [nDCG@10, RR]
topK: 10
output: out
cache: cache
arms:
  - { id: a, kind: fake, params: { signal: 1 } }
  - { id: b, kind: fake, params: { seed: 1, signal: 0.3 } }
systems:
  - { id: cc, kind: fuse, inputs: [a, b], params: { method: cc, normalization: min-max }, grid: { alpha: [0, 0.5, 1] } }
tune: { measure: RR, split: dev }
compare: { permutations: 1000, resamples: 1000 }
`,
    );
    const r = await cli(['ablate', '--config', file]);
    expect(r.log.filter((l) => l.startsWith('harness:'))).toEqual([]);
    expect(r.code).toBe(0);
    const data = report();
    const tuned = data.runs.find((x) => x.id === 'cc.tuned')!.tuning!;
    expect(tuned.method).toBe('split');
    expect(tuned.choices.map((c) => [c.fold, c.queries])).toEqual([['dev', 2]]);
    // The pick is the member with the best mean RR on the dev queries, read from a dev-only evaluation.
    expect(['cc.alpha=0', 'cc.alpha=0.5', 'cc.alpha=1']).toContain(tuned.choices[0]!.member);
    expect(data.queries.map((q) => q.id)).toEqual(['t1', 't2']);
    for (const run of ['a', 'cc.alpha=0.5', 'cc.tuned']) expect([...ranking(run).keys()].sort()).toEqual(['t1', 't2']);
    // The tuned run answers each test query with the picked point's ranking.
    expect(ranking('cc.tuned')).toEqual(ranking(tuned.choices[0]!.member));
  });
});
