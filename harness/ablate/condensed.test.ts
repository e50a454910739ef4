import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrecQrels, readTrecRun } from '../../evalset/trec.js';
import type { Run } from '../../evalset/types.js';
import { runCli } from '../cli/main.js';
import { scoreRuns } from '../compare/score.js';
import { memoryLogger } from '../log.js';
import { parseMeasure } from '../metrics/measure.js';
import type { ReportData } from '../decision/types.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { describeShared, sharedPath } from '../testing/shared.js';
import { condensedName, condensedRun } from './condensed.js';

const run = (rows: Record<string, Record<string, number>>): Run => new Map(Object.entries(rows).map(([q, d]) => [q, new Map(Object.entries(d))] as const));

describe('condensedRun', () => {
  it('drops the documents the qrels do not grade for that query, keeping the scores of the rest', () => {
    const qrels = new Map([
      [
        'q1',
        new Map([
          ['a', 1],
          ['b', 0],
        ]),
      ],
    ]);
    const r = run({ q1: { x: 9, a: 5, y: 4, b: 3 }, q2: { a: 1 } });
    expect(condensedRun(r, qrels)).toEqual(run({ q1: { a: 5, b: 3 }, q2: {} }));
  });
  it('reads judged at the scoring unit when a unit map is given', () => {
    const qrels = new Map([['q1', new Map([['s1', 1]])]]);
    expect(
      condensedRun(
        run({ q1: { t1: 2, t2: 1, t3: 0.5 } }),
        qrels,
        new Map([
          ['t1', 's1'],
          ['t2', 's2'],
        ]),
      ),
    ).toEqual(run({ q1: { t1: 2 } }));
  });
  it('names the condensed measure with a prime on its name', () => {
    expect(condensedName('nDCG@10')).toBe("nDCG'@10");
    expect(condensedName('AP')).toBe("AP'");
  });
});

const MEASURES = ['nDCG@10', 'AP', 'P@10'];

/** Per-query values of the condensed run as the ablation scores it. */
function ablationCondensed(qrels: Awaited<ReturnType<typeof readTrecQrels>>, r: Run): Record<string, number[]> {
  const ids = [...qrels.keys()].sort();
  const scored = scoreRuns(qrels, new Map([['r', condensedRun(r, qrels)]]), MEASURES.map(parseMeasure), ids);
  return scored.perQuery['r'] as Record<string, number[]>;
}

/** `trec_eval -q` output lines `measure qid value` as measure -> qid -> value. */
function perQueryLines(text: string): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const line of text.split('\n')) {
    const [m, q, v] = line.trim().split(/\s+/);
    if (m === undefined || q === undefined || v === undefined || q === 'all') continue;
    (out.get(m) ?? out.set(m, new Map()).get(m))?.set(q, Number(v));
  }
  return out;
}

const TREC_NAMES: Record<string, string> = { 'nDCG@10': 'ndcg_cut_10', AP: 'map', 'P@10': 'P_10' };

describeShared("condensed lists against trec_eval's test collection", ['data/trec_eval'], () => {
  const qrelsFile = sharedPath('data/trec_eval', 'qrels.test');
  const runFile = sharedPath('data/trec_eval', 'results.test');

  it('equal `harness eval -J` (trec_eval judged-documents-only) on the original run, per query', async () => {
    const qrels = await readTrecQrels(qrelsFile);
    const { run: r } = await readTrecRun(runFile);
    const mine = ablationCondensed(qrels, r);
    let out = '';
    const io = { out: (t: string) => void (out += t), log: memoryLogger(), env: {}, cwd: process.cwd() };
    expect(await runCli(['eval', '-q', '-J', '-m', 'ndcg_cut.10', '-m', 'map', '-m', 'P.10', qrelsFile, runFile], io)).toBe(0);
    const theirs = perQueryLines(out);
    const ids = [...qrels.keys()].sort();
    for (const m of MEASURES) ids.forEach((q, i) => expect(mine[m]?.[i], `${m} ${q}`).toBeCloseTo(theirs.get(TREC_NAMES[m] as string)?.get(q) as number, 4));
    // results.test ranks unjudged documents among its 500 per query, so condensing changes AP there.
    const plain = scoreRuns(qrels, new Map([['r', r]]), [parseMeasure('AP')], ids).perQuery['r']?.['AP'];
    expect(plain).not.toEqual(mine['AP']);
  });

  const binary = process.env['TREC_EVAL'] ?? whichTrecEval();
  it.skipIf(binary === undefined)(
    `equal a real trec_eval on the condensed run file${binary === undefined ? ' (skipped: no trec_eval binary on PATH and TREC_EVAL unset)' : ''}`,
    async () => {
      const qrels = await readTrecQrels(qrelsFile);
      const { run: r } = await readTrecRun(runFile);
      const condensed = condensedRun(r, qrels);
      const dir = await tempFolder('condensed', {});
      const lines: string[] = [];
      for (const [q, docs] of condensed) [...docs].forEach(([d, s], i) => lines.push(`${q} Q0 ${d} ${i + 1} ${s} condensed`));
      writeFileSync(join(dir, 'condensed.trec'), `${lines.join('\n')}\n`);
      const out = execFileSync(binary as string, ['-q', '-m', 'ndcg_cut.10', '-m', 'map', '-m', 'P.10', qrelsFile, join(dir, 'condensed.trec')], {
        encoding: 'utf8',
      });
      const theirs = perQueryLines(out);
      const mine = ablationCondensed(qrels, r);
      [...qrels.keys()].sort().forEach((q, i) => {
        for (const m of MEASURES) expect(mine[m]?.[i], `${m} ${q}`).toBeCloseTo(theirs.get(TREC_NAMES[m] as string)?.get(q) as number, 4);
      });
    },
  );
});

function whichTrecEval(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v trec_eval'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

// Twelve queries, each with one relevant and two judged non-relevant documents, and three unjudged ones.
// `inpool` ranks the relevant document first; `outpool` ranks the three unjudged ones above it. On nDCG@10
// inpool wins every query; with the holes removed both rank the relevant document first and tie.
const QUERIES = Array.from({ length: 12 }, (_, i) => `q${i + 1}`);
function holesFixture(): Record<string, string> {
  const corpus = QUERIES.flatMap((q) => ['r', 'n1', 'n2', 'u1', 'u2', 'u3'].map((d) => JSON.stringify({ id: `${q}${d}`, text: `${q} ${d}` })));
  const queries = QUERIES.map((q) => JSON.stringify({ id: q, text: `question ${q}`, stratum: 'exact', qrels: { [`${q}r`]: 1, [`${q}n1`]: 0, [`${q}n2`]: 0 } }));
  const trec = (order: string[], tag: string) => QUERIES.flatMap((q) => order.map((d, i) => `${q} Q0 ${q}${d} ${i + 1} ${10 - i} ${tag}`)).join('\n');
  return {
    'es/corpus.jsonl': corpus.join('\n'),
    'es/queries.jsonl': queries.join('\n'),
    'inpool.trec': `${trec(['r', 'n1', 'n2', 'u1', 'u2', 'u3'], 'in')}\n`,
    'outpool.trec': `${trec(['u1', 'u2', 'u3', 'r', 'n1', 'n2'], 'out')}\n`,
    'holes.yaml': `name: holes
evalset: { format: memory, path: es, qrels: pooled }
measures: [nDCG@10, Judged@10]
topK: 10
output: out
cache: cache
arms:
  - { id: inpool, kind: run-file, params: { path: inpool.trec } }
  - { id: outpool, kind: run-file, params: { path: outpool.trec } }
  - { id: g, kind: run-file, grid: { path: [outpool.trec, inpool.trec] } }
tune: { measure: nDCG@10, folds: 2, seed: 1 }
compare: { baseline: outpool, permutations: 2000, resamples: 200 }
gate: { candidate: inpool, measure: nDCG@10, rule: gain-overall }
`,
  };
}

describe('holes that could decide, in an ablation on pooled qrels', () => {
  it('shows nDCG@10 beside its condensed form and Bpref, and warns that the verdict and the tuned pick flip without the holes', async () => {
    const dir = await tempFolder('holes', holesFixture());
    const r = await runCaptured(['ablate', '--config', 'holes.yaml'], dir);
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const sub = readdirSync(join(dir, 'out')).find((d) => d.startsWith('holes-')) as string;
    const data = JSON.parse(readFileSync(join(dir, 'out', sub, 'report.json'), 'utf8')) as ReportData;
    const h = data.holes!;
    expect(h.measure).toBe('nDCG@10');
    expect(h.condensed).toBe("nDCG'@10");
    const row = (id: string) => h.rows.find((x) => x.run === id)!;
    expect(row('inpool')).toMatchObject({ measure: 1, condensed: 1, bpref: 1 });
    expect(row('outpool').measure).toBeCloseTo(1 / Math.log2(5), 10);
    expect(row('outpool')).toMatchObject({ condensed: 1, bpref: 1 });
    expect(h.gate).toMatchObject({ plain: 'ADOPT', condensed: 'INCONCLUSIVE' });
    expect(data.gateResult?.verdict).toBe('ADOPT');
    // Plain: the inpool member wins on both folds; condensed: the members tie and the earlier one (outpool) is kept.
    expect(h.picks).toHaveLength(1);
    expect(h.picks[0]!.plain.every((m) => m.includes('inpool'))).toBe(true);
    expect(h.picks[0]!.condensed.every((m) => m.includes('outpool'))).toBe(true);
    const holes = data.warnings.filter((w) => w.code === 'decision-depends-on-holes');
    expect(holes.map((w) => [w.severity, w.subject, w.gate])).toEqual([
      ['serious', 'gate', true],
      ['serious', 'g.tuned', false],
    ]);
    expect(holes[0]!.message).toContain("the gate says ADOPT on nDCG@10 but INCONCLUSIVE on nDCG'@10");
    expect(holes[1]!.message).toMatch(/^g\.tuned picks \S*inpool\S* \(2 of 2 folds\) on nDCG@10 but \S*outpool\S* \(2 of 2 folds\) on the condensed form/);
    const md = readFileSync(join(dir, 'out', sub, 'report.md'), 'utf8');
    expect(md).toContain("| system | nDCG@10 | nDCG'@10 | Bpref |");
    expect(md).toContain('| outpool | 0.4307 | 1.0000 | 1.0000 |');
    expect(md).toContain("**Gate on nDCG@10: ADOPT; on nDCG'@10: INCONCLUSIVE.**");
    const html = readFileSync(join(dir, 'out', sub, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Judgment holes</h2>');
    expect(html).toMatch(/<p><strong>Gate on nDCG@10: ADOPT; on nDCG(&#39;|&#x27;|')@10: INCONCLUSIVE\.<\/strong><\/p>/);
    expect(md.indexOf('## Judgment holes')).toBeGreaterThan(md.indexOf('## Other warnings'));
  });
});
