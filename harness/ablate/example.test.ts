import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { buildReportData } from '../decision/build.js';
import { chromiumAvailable, inspectReportPage } from '../report/testdata/chromium.js';
import type { ReportData, ReportInput } from '../decision/types.js';
import { withoutTimings } from '../testing/timings.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

// The bundled example end to end: `harness ablate --config configs/example.yaml` into a temp folder, then the
// rendered report is pinned by snapshot, opened in a browser, and turned into an ADR.
const work = tempDir('harness-example');
let reportDir = '';

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(args, { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: PROJECT_ROOT });
  return { code, out };
}

beforeAll(async () => {
  const r = await cli(['ablate', '--config', 'configs/example.yaml', '--verify', '--output', join(work, 'reports'), '--cache', join(work, 'cache')]);
  expect(r.code, r.out).toBe(0);
  expect(r.out).toContain('  OK     bm25             nDCG@10    expected 0.5572 actual 0.5572');
  // The verdict is printed with the means, not only in the report.
  expect(r.out).toMatch(/\ngate: REJECT: significant loss in nDCG@10 in exact \(n=36\)/);
  const [name] = readdirSync(join(work, 'reports'));
  reportDir = join(work, 'reports', name!);
});

describe('the bundled example report', () => {
  it('renders report.md and report.html exactly as pinned', async () => {
    // Timings measure the machine, not the data: the snapshots hold everything else.
    await expect(withoutTimings('report.md', readFileSync(join(reportDir, 'report.md'), 'utf8'))).toMatchFileSnapshot('__snapshots__/example.report.md');
    await expect(withoutTimings('report.html', readFileSync(join(reportDir, 'report.html'), 'utf8'))).toMatchFileSnapshot('__snapshots__/example.report.html');
  });

  it('on its complete qrels: no serious warning, no holes check, the same REJECT (issue 41)', () => {
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    const data = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as ReportData;
    expect(data.evalset.qrelsCompleteness).toBe('complete');
    expect(data.holes).toBeUndefined();
    expect(data.warnings.filter((w) => w.severity === 'serious')).toEqual([]);
    expect(data.warnings.map((w) => w.code)).not.toContain('judged-holes');
    expect(md).not.toContain('**serious**');
    expect(md).not.toContain('Judgment holes');
    expect(data.decision).toMatchObject({ verdict: 'REJECT', basis: 'gold', qualifiers: [], exitCode: 3 });
    expect(md).toContain('**REJECT**: significant loss in nDCG@10 in exact (n=36)');
  });

  it('reports every stratum with its query count', () => {
    const md = readFileSync(join(reportDir, 'report.md'), 'utf8');
    for (const [stratum, n] of [
      ['exact', 36],
      ['paraphrase', 36],
      ['multi-hop', 34],
      ['all', 106],
    ] as const) {
      expect(md).toContain(`| ${stratum} | ${n} |`);
    }
  });

  it('drafts an ADR whose numbers equal the report', async () => {
    const adrDir = join(work, 'adr');
    mkdirSync(adrDir);
    const r = await cli(['adr', '--report', reportDir, '--title', 'Keep BM25 or move to FTS5', '--adr-dir', adrDir, '--date', '2026-11-22']);
    expect(r.code).toBe(0);
    const [file] = readdirSync(adrDir);
    expect(file).toBe('0001-keep-bm25-or-move-to-fts5.md');
    const adr = readFileSync(join(adrDir, file!), 'utf8');
    const report = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as {
      comparisons: {
        stratum: string;
        measure: string;
        baseline: string;
        system: string;
        baselineMean: number;
        systemMean: number;
        delta: number;
        pAdjusted: number | null;
      }[];
      gateResult: { verdict: string };
    };
    expect(adr).toContain(report.gateResult.verdict);
    const rows = adr
      .slice(adr.indexOf('## Evidence'))
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| stratum') && !l.startsWith('| ---'))
      .map((l) =>
        l
          .slice(1, -1)
          .split('|')
          .map((c) => c.trim()),
      );
    expect(rows.length).toBeGreaterThan(0);
    // Columns: stratum, n, measure, baseline, system, baseline mean, system mean, delta, ...
    for (const [stratum, , measure, baseline, system, baselineMean, systemMean, delta] of rows) {
      expect([baseline, system]).toEqual(['bm25', 'fts5']);
      const c = report.comparisons.find((x) => x.stratum === stratum && x.measure === measure && x.system === system && x.baseline === baseline);
      expect(c, `${stratum} ${measure}`).toBeDefined();
      expect(Number(baselineMean!.replace(/\*/g, ''))).toBeCloseTo(c!.baselineMean, 4);
      expect(Number(systemMean!.replace(/\*/g, ''))).toBeCloseTo(c!.systemMean, 4);
      expect(Number(delta!.replace(/\*/g, ''))).toBeCloseTo(c!.delta, 4);
    }
  });

  it.skipIf(!chromiumAvailable('the example report.html'))('opens in headless Chromium with every plot drawn and a screenshot saved', async () => {
    const shot = join(reportDir, 'screenshot.png');
    const { plots, problems } = await inspectReportPage(join(reportDir, 'report.html'), shot);
    expect(plots.length).toBeGreaterThan(3);
    for (const p of plots) {
      expect(p.width, p.cls).toBeGreaterThan(100);
      expect(p.drawn, p.cls).toBeGreaterThan(2);
      expect(p.drawnWithBox, p.cls).toBe(p.drawn);
    }
    expect(problems).toEqual([]);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
  });

  it('the gate verdict and its p do not move when exploratory arms and measures are added or removed', () => {
    const data = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as ReportData;
    const { name, configHash, evalset, runs, measures, queries, perQuery, compare, gate, command } = data;
    const full: ReportInput = { name, configHash, evalset, runs, measures, queries, perQuery, compare, ...(gate ? { gate } : {}), command };
    // Only the gate's two arms and its measure: 4 tests, the gate's family and nothing else.
    const pick = (ids: string[], ms: string[]) =>
      Object.fromEntries(ids.map((id) => [id, Object.fromEntries(ms.map((m) => [m, perQuery[id]?.[m] as readonly number[]]))]));
    const minimal: ReportInput = {
      ...full,
      runs: runs.filter((r) => r.id === 'bm25' || r.id === 'fts5'),
      measures: ['nDCG@10'],
      perQuery: pick(['bm25', 'fts5'], ['nDCG@10']),
    };
    // Two more exploratory arms and three more measures (synthetic values: only the gate's numbers matter here).
    const extraMeasures = ['P@5', 'nDCG@5', 'Success@5'];
    const derive = (v: readonly number[], k: number) => v.map((x, i) => Math.min(1, Math.max(0, x * (0.5 + 0.1 * k) + ((i * 7) % 5) * 0.01)));
    const extended: ReportInput = {
      ...full,
      runs: [...runs, { id: 'extra-a', kind: 'fake', fingerprint: 'a' }, { id: 'extra-b', kind: 'fake', fingerprint: 'b' }],
      measures: [...measures, ...extraMeasures],
      perQuery: Object.fromEntries(
        [...runs.map((r) => r.id), 'extra-a', 'extra-b'].map((id, j) => {
          const source = perQuery[id] ?? (perQuery[j % 2 === 0 ? 'bm25' : 'fts5-plain'] as Record<string, readonly number[]>);
          const own = Object.fromEntries(
            measures.map((m) => [m, id in perQuery ? (source[m] as readonly number[]) : derive(source[m] as readonly number[], j)]),
          );
          return [id, { ...own, ...Object.fromEntries(extraMeasures.map((m, k) => [m, derive(source['R@10'] as readonly number[], k)])) }];
        }),
      ),
    };
    const reports = [minimal, full, extended].map((input) => buildReportData(input));
    const exploratory = reports.map((r) => r.comparisons.filter((c) => c.role === 'exploratory').length);
    // pairs x strata x tested measures (answer measures F1-LoCoMo and EM included), less the gate's 4:
    // 1 x 4 x 1 - 4, 3 x 4 x 7 - 4, 5 x 4 x 10 - 4.
    expect(exploratory).toEqual([0, 80, 196]);
    const gates = reports.map((r) => ({ result: r.gateResult, comparisons: r.comparisons.filter((c) => c.role === 'confirmatory') }));
    // With every comparison in one family the shipped config said INCONCLUSIVE and the two-arm one REJECT.
    expect(gates[1]?.result?.verdict).toBe('REJECT');
    expect(gates[1]?.comparisons).toHaveLength(4);
    expect(gates[0]).toEqual(gates[1]);
    expect(gates[2]).toEqual(gates[1]);
  });

  it('every interval agrees with its test: a bar clear of zero is a significant comparison, and only then', () => {
    const data = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as ReportData;
    const clear = data.comparisons.filter((c) => (c.ci[0] !== null && c.ci[0] > 0) || (c.ci[1] !== null && c.ci[1] < 0));
    expect(clear.map((c) => `${c.system} ${c.measure} ${c.stratum}`)).toEqual(
      data.comparisons.filter((c) => c.significant).map((c) => `${c.system} ${c.measure} ${c.stratum}`),
    );
    expect(clear.length).toBeGreaterThan(0);
  });

  it('harness compare on the same runs gives the same p-values to the last digit', async () => {
    // The example's qrels and strata as TREC files: compare reads queries in id order, ablate in eval-set order.
    const lines = readFileSync(join(PROJECT_ROOT, 'evalset/examples/alex-memory/queries.jsonl'), 'utf8').trim().split('\n');
    const queries = lines.map((l) => JSON.parse(l) as { id: string; stratum: string; qrels: Record<string, number> });
    const dir = join(work, 'compare');
    mkdirSync(dir);
    writeFileSync(join(dir, 'qrels.txt'), `${queries.flatMap((q) => Object.entries(q.qrels).map(([d, g]) => `${q.id} 0 ${d} ${g}`)).join('\n')}\n`);
    writeFileSync(join(dir, 'strata.tsv'), `${queries.map((q) => `${q.id}\t${q.stratum}`).join('\n')}\n`);
    const runs = ['bm25', 'fts5', 'fts5-plain'].map((id) => join(reportDir, 'runs', `${id}.trec`));
    const r = await cli([
      'compare',
      ...runs,
      '--qrels',
      join(dir, 'qrels.txt'),
      '--strata',
      join(dir, 'strata.tsv'),
      '--baseline',
      'bm25',
      '--measures',
      'nDCG@10,RR',
      '--out',
      join(dir, 'out'),
    ]);
    expect(r.code, r.out).toBe(0);
    type Row = { stratum: string; measure: string; system: string; baseline: string; p: number | null; delta: number };
    const compared = (JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8')) as { comparisons: Row[] }).comparisons;
    const ablated = (JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as { comparisons: Row[] }).comparisons;
    expect(compared).toHaveLength(2 * 4 * 2);
    for (const c of compared) {
      const a = ablated.find((x) => x.stratum === c.stratum && x.measure === c.measure && x.system === c.system && x.baseline === c.baseline);
      expect(a, `${c.system} ${c.measure} ${c.stratum}`).toBeDefined();
      expect([c.delta, c.p]).toEqual([a?.delta, a?.p]);
    }
  });

  it('carries what a memory engineer decides on: the qrels and strata it scored, recall at every depth, cost, and the queries that differ most', () => {
    const data = JSON.parse(readFileSync(join(reportDir, 'report.json'), 'utf8')) as ReportData;
    const queries = readFileSync(join(PROJECT_ROOT, 'evalset/examples/alex-memory/queries.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; text: string; stratum: string; qrels: Record<string, number> });
    // qrels.trec and strata.tsv hold exactly the eval set's judgments and strata, so other tools can recompute.
    const qrelsLines = readFileSync(join(reportDir, 'qrels.trec'), 'utf8').trim().split('\n');
    expect(qrelsLines).toHaveLength(queries.reduce((n, q) => n + Object.keys(q.qrels).length, 0));
    expect(qrelsLines).toContain(`qe01 0 m0034 ${queries[0]!.qrels['m0034']}`);
    expect(readFileSync(join(reportDir, 'strata.tsv'), 'utf8')).toBe(queries.map((q) => `${q.id}\t${q.stratum}\n`).join(''));
    // Recall curves at every usual depth up to topK 100, per stratum and overall, independent of the measures.
    expect(data.curves?.cutoffs).toEqual([1, 2, 3, 5, 10, 20, 30, 50, 100]);
    const r10 = data.curves!.means['bm25']!['all']![4]!;
    expect(r10).toBeCloseTo(data.summary.find((x) => x.run === 'bm25' && x.stratum === 'all' && x.measure === 'R@10')!.mean, 12);
    // Cost per system from the arms' own index statistics.
    expect(data.costs?.['bm25']?.indexStats['documents']).toBe(351);
    // The gate pair's most different queries, with query text; sensitive memories by id only.
    const ex = data.examples!;
    expect([ex.baseline, ex.system, ex.measure]).toEqual(['bm25', 'fts5', 'nDCG@10']);
    expect(ex.queries.length).toBeGreaterThan(0);
    const sensitive = new Set(
      readFileSync(join(PROJECT_ROOT, 'evalset/examples/alex-memory/corpus.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; sensitive?: boolean })
        .filter((m) => m.sensitive)
        .map((m) => m.id),
    );
    const shown = ex.queries.flatMap((q) => [...q.baselineTop, ...q.systemTop]);
    expect(shown.some((d) => sensitive.has(d.docId))).toBe(true);
    for (const d of shown) expect(d.text === undefined, d.docId).toBe(sensitive.has(d.docId));
    for (const q of ex.queries) {
      const i = data.queries.findIndex((x) => x.id === q.queryId);
      expect(q.systemValue - q.baselineValue, q.queryId).toBeCloseTo(data.perQuery['fts5']!['nDCG@10']![i]! - data.perQuery['bm25']!['nDCG@10']![i]!, 12);
      expect(q.kind === 'gain' ? q.systemValue > q.baselineValue : q.systemValue < q.baselineValue).toBe(true);
    }
  });
});
