import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import type { CliIo } from '../cli/io.js';
import { memoryLogger } from '../log.js';
import { runCaptured } from '../testing/cli.js';
import type { ReportData } from '../decision/types.js';
import { comparisonPairs, familyId } from './comparisons.js';
import { reportedMeasure } from './measures.js';
import { compareSchema } from './config.js';
import { tempDir } from '../testing/temp.js';

function testIo(cwd: string): CliIo & { stdout: string[] } {
  const stdout: string[] = [];
  return { stdout, out: (t) => void stdout.push(t), log: memoryLogger(), env: {}, cwd };
}

// Six judged queries, one relevant document each (d<q>). Run A puts a non-relevant dx first and the relevant
// document second (RR 0.5) and has no results for q6 (RR 0); run B ranks it first for q1-q3 (RR 1), like A for
// q4-q6, and answers an unjudged q7 that must be dropped and counted.
const QRELS = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'].map((q) => `${q} 0 d${q} 1`).join('\n');
const RUN_A = ['q1', 'q2', 'q3', 'q4', 'q5'].flatMap((q) => [`${q} Q0 dx 1 2 A`, `${q} Q0 d${q} 2 1 A`]).join('\n');
const RUN_B = [
  ...['q1', 'q2', 'q3'].flatMap((q) => [`${q} Q0 d${q} 1 2 B`, `${q} Q0 dx 2 1 B`]),
  ...['q4', 'q5', 'q6'].flatMap((q) => [`${q} Q0 dx 1 2 B`, `${q} Q0 d${q} 2 1 B`]),
  'q7 Q0 dq7 1 1 B',
].join('\n');
const STRATA = 'q1\texact\nq2\texact\nq3\texact\nq4\tpara\nq5\tpara\nq6\tpara\n';

describe('harness compare', () => {
  let root: string;
  beforeAll(async () => {
    root = tempDir('harness-compare');
    await writeFile(join(root, 'qrels.txt'), `${QRELS}\n`);
    await writeFile(join(root, 'a.trec'), `${RUN_A}\n`);
    await writeFile(join(root, 'b.trec'), `${RUN_B}\n`);
    await writeFile(join(root, 'strata.tsv'), STRATA);
    await writeFile(join(root, 'short.tsv'), 'q1\texact\n');
  });

  it('evaluates TREC runs per stratum and writes a full report', async () => {
    const io = testIo(root);
    const argv = ['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.txt', '--strata', 'strata.tsv', '--measures', 'RR,P@1', '--out', 'out'];
    expect(await runCli(argv, io)).toBe(0);
    expect(io.stdout.join('')).toMatch(/^report: out\/report\.md \(6 comparisons, \d+ warning\(s\)\)\n$/);
    const data = JSON.parse(await readFile(join(root, 'out', 'report.json'), 'utf8')) as ReportData;
    expect(data.command).toBe('harness compare a.trec b.trec --qrels qrels.txt --measures RR,P@1 --strata strata.tsv --out out');
    expect(data.runs.map((r) => [r.id, r.kind, r.label])).toEqual([
      ['A', 'trec-file', 'a.trec'],
      ['B', 'trec-file', 'b.trec'],
    ]);
    expect(data.perQuery['A']?.['RR']).toEqual([0.5, 0.5, 0.5, 0.5, 0.5, 0]);
    expect(data.perQuery['B']?.['RR']).toEqual([1, 1, 1, 0.5, 0.5, 0.5]);
    expect(data.perQuery['B']?.['P@1']).toEqual([1, 1, 1, 0, 0, 0]);
    expect(data.evalset.strata).toEqual({ exact: 3, para: 3 });
    expect(data.evalset.notes).toEqual([
      'run A: 1 judged query has no results and scores 0',
      'run B: 1 query absent from the qrels was dropped',
      'documents counts the 6 distinct judged documents (no corpus is read by compare)',
    ]);
    const rr = (s: string) => data.comparisons.find((c) => c.stratum === s && c.measure === 'RR');
    expect(rr('exact')?.delta).toBeCloseTo(0.5, 12); // 1 - 0.5 on each of 3 queries
    expect(rr('exact')?.p).toBe(2 / 8); // exact sign flips over 3 equal differences
    expect(rr('para')?.delta).toBeCloseTo(0.5 / 3, 12); // only q6 differs: 0.5 - 0
    expect([rr('para')?.wins, rr('para')?.ties, rr('para')?.losses]).toEqual([1, 2, 0]);
    expect(rr('all')?.delta).toBeCloseTo((3 * 0.5 + 0.5) / 6, 12);
    expect(data.families).toEqual([{ id: 'randomization', size: 6, role: 'exploratory', correction: 'holm' }]); // 1 pair x 3 strata x 2 measures
    // Every qrels line has grade 1: a relevant-only qrels, said once instead of judged-holes per run.
    expect(data.evalset.qrelsJudgesNonRelevant).toBe(false);
    expect(data.warnings.map((w) => w.code)).toContain('qrels-relevant-only');
    const summary = await readFile(join(root, 'out', 'summary.csv'), 'utf8');
    expect(summary.split('\n')[0]).toBe(
      'stratum,n,run,measure,mean,baseline,delta,role,ciLo,ciHi,ciLevel,test,p,permutations,pMcse,pAdjusted,nearAlpha,family,significant,dz,wins,ties,losses,mde',
    );
    expect(summary).toContain('exact,3,B,P@1,1,A,1,');
    for (const f of ['report.md', 'report.html', 'report.tex', 'per-query.csv', 'comparisons.csv']) {
      expect((await readFile(join(root, 'out', f), 'utf8')).length).toBeGreaterThan(0);
    }
  });

  it('prints report.md when no --out is given; one stratum "all" without a strata file', async () => {
    const io = testIo(root);
    expect(await runCli(['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.txt', '--baseline', 'B', '--measures', 'RR'], io)).toBe(0);
    const md = io.stdout.join('');
    expect(md).toContain('# Report: compare');
    expect(md).toContain('### all, n = 6');
    expect(md).toContain('| A | B | RR | exploratory | 0.4167 | 0.7500 | -0.3333 |'); // (5 x 0.5) / 6 vs (3 + 1.5) / 6
  });

  it('harness report re-renders the folder; errors are exit 2 with the file named', async () => {
    const io = testIo(root);
    // Tests run shuffled: this one writes its own folder.
    expect(await runCli(['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.txt', '--out', 'again'], io)).toBe(0);
    io.stdout.length = 0;
    expect(await runCli(['report', 'again'], io)).toBe(0);
    expect(io.stdout.join('')).toMatch(/^again: rendered report\.md, summary\.csv, comparisons\.csv, per-query\.csv, report\.tex, report\.html/);
    // Each error is captured and read here, so the expected lines do not reach the test run's stderr.
    const failures: [string[], string][] = [
      [['report', 'nowhere'], `${join(root, 'nowhere', 'report.json')}: no report.json here`],
      [['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.txt', '--strata', 'short.tsv'], `${join(root, 'short.tsv')}: 5 qrels queries are not listed`],
      [['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.txt', '--baseline', 'C'], '--baseline C is not one of the runs (A, B)'],
      [['compare', 'a.trec', '--qrels', 'qrels.txt'], 'compare needs at least two run files, got 1'],
      [['compare', 'a.trec', 'b.trec', '--qrels', 'qrels.txt', '--measures', 'nDCG@x'], 'measure "nDCG@x": the cutoff @x must be a positive integer rank'],
    ];
    for (const [argv, said] of failures) {
      const r = await runCaptured(argv, root);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`harness: ${said}`);
    }
  });
});

describe('comparison pairs and families', () => {
  it('baseline against each run, all pairs, and the gate pair in its own orientation', () => {
    expect(comparisonPairs(['a', 'b', 'c'], 'a', false)).toEqual([
      { baseline: 'a', system: 'b' },
      { baseline: 'a', system: 'c' },
    ]);
    expect(comparisonPairs(['a', 'b', 'c'], 'a', true)).toEqual([
      { baseline: 'a', system: 'b' },
      { baseline: 'a', system: 'c' },
      { baseline: 'b', system: 'c' },
    ]);
    expect(comparisonPairs(['a', 'b', 'c'], 'a', false, { baseline: 'c', system: 'b' })).toEqual([
      { baseline: 'a', system: 'b' },
      { baseline: 'a', system: 'c' },
      { baseline: 'c', system: 'b' },
    ]);
    expect(comparisonPairs(['a', 'b', 'c'], 'a', true, { baseline: 'c', system: 'b' })[2]).toEqual({ baseline: 'c', system: 'b' });
  });

  it('family ids follow the configured family', () => {
    const cfg = compareSchema.parse({});
    expect(familyId(cfg, 'exact', 'nDCG@10')).toBe('randomization');
    expect(familyId({ ...cfg, family: 'per-measure' }, 'exact', 'nDCG@10')).toBe('randomization nDCG@10');
    expect(familyId({ ...cfg, family: 'per-stratum', test: 't' }, 'exact', 'nDCG@10')).toBe('t exact');
    expect([reportedMeasure('nDCG@10').tested, reportedMeasure('Judged@10').tested]).toEqual([true, false]);
  });
});
