import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import type { CliIo } from '../cli/io.js';
import { memoryLogger } from '../log.js';
import { EVIDENCE_COLUMNS, kebabTitle, nextAdrNumber, renderAdr } from './adr.js';
import { fmtLevel } from '../decision/format.js';
import { fixtureInput } from './testdata/fixture.js';
import type { ReportData, ReportInput, ReportRun } from '../decision/types.js';
import { readReport, writeReport } from './write.js';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';

function testIo(cwd: string): CliIo & { stdout: string[] } {
  const stdout: string[] = [];
  return { stdout, out: (t) => void stdout.push(t), log: memoryLogger(), env: {}, cwd };
}

/** The rows of the first Markdown table after `## Evidence`, as arrays of cells. */
function evidenceTable(md: string): string[][] {
  const lines = md.split('\n');
  const start = lines.indexOf('## Evidence');
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (line.startsWith('|'))
      rows.push(
        line
          .slice(1, -1)
          .split('|')
          .map((c) => c.trim()),
      );
    else if (rows.length > 0) break;
  }
  return rows;
}

const num = (s: string): number => Number(s.replace(/\*/g, ''));

describe('kebabTitle and nextAdrNumber', () => {
  it('kebab-cases titles', () => {
    expect(kebabTitle('Use RRF over BM25 + MiniLM!')).toBe('use-rrf-over-bm25-minilm');
    expect(kebabTitle('Café  déjà vu')).toBe('cafe-deja-vu');
    expect(kebabTitle(`${'x'.repeat(30)} ${'y'.repeat(40)}`).length).toBeLessThanOrEqual(60);
  });

  it('takes the next number after the highest NNNN-*.md', () => {
    expect(nextAdrNumber([])).toBe(1);
    expect(nextAdrNumber(['0000-template.md'])).toBe(1);
    expect(nextAdrNumber(['0000-template.md', '0003-a.md', '0012-b.md', 'README.md', '0099-c.txt'])).toBe(13);
  });
});

describe('harness adr', () => {
  it('drafts an ADR whose evidence numbers equal the report', async () => {
    const root = tempDir('harness-adr');
    const reportDir = join(root, 'reports', 'fixture-study-01234567');
    await writeReport(reportDir, fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    const adrDir = join(root, 'docs', 'adr');
    await mkdir(adrDir, { recursive: true });
    await writeFile(join(adrDir, '0000-template.md'), '');
    await writeFile(join(adrDir, '0007-earlier.md'), '');
    const io = testIo(root);
    const code = await runCli(['adr', '--report', 'reports/fixture-study-01234567', '--title', 'Adopt dense retrieval', '--date', '2026-01-02'], io);
    expect(code).toBe(0);
    expect(io.stdout.join('')).toBe('docs/adr/0008-adopt-dense-retrieval.md\n');
    const adr = await readFile(join(adrDir, '0008-adopt-dense-retrieval.md'), 'utf8');
    const data = JSON.parse(await readFile(join(reportDir, 'report.json'), 'utf8')) as ReportData;
    const reportMd = await readFile(join(reportDir, 'report.md'), 'utf8');

    expect(adr.startsWith('---\nstatus: proposed\ndate: 2026-01-02\n---\n\n# 0008. Adopt dense retrieval\n')).toBe(true);
    for (const heading of ['## Context and Problem Statement', '## Considered Options', '## Decision Outcome', '### Consequences', '## Evidence']) {
      expect(adr).toContain(`\n${heading}\n`);
    }
    expect(adr).toContain('- Strata: exact 12, paraphrase 12, all 24.');
    expect(adr).toContain('Chosen option: "dense", because the gate says ADOPT; dense is a substitute.');
    expect(adr).toContain(`\`ADOPT; dense is a substitute\`: ${data.gateResult?.reason}.`);
    expect(adr).toContain('[../../reports/fixture-study-01234567/report.md](../../reports/fixture-study-01234567/report.md)');
    expect(adr).toContain('```sh\nharness ablate --config configs/fixture-study.yaml\n```');
    // Only the warnings that bear on the gate become caveats; the others are counted, not copied.
    for (const w of data.warnings) {
      const line = `- Caveat (${w.severity}, \`${w.code}\`): ${w.message}.`;
      if (w.gate) expect(adr).toContain(line);
      else expect(adr).not.toContain(line);
    }
    expect(data.warnings.some((w) => !w.gate)).toBe(true);
    expect(adr).toContain('none bearing on the gate');

    const table = evidenceTable(adr);
    expect(table[0]).toEqual([...EVIDENCE_COLUMNS]);
    const rows = table.slice(2);
    // dense vs bm25 on the three tested measures (gate measure first) x three strata.
    expect(rows.map((r) => `${r[2]} ${r[0]}`)).toEqual([
      'nDCG@10 exact',
      'nDCG@10 paraphrase',
      'nDCG@10 all',
      'R@10 exact',
      'R@10 paraphrase',
      'R@10 all',
      'R@100 exact',
      'R@100 paraphrase',
      'R@100 all',
    ]);
    for (const r of rows) {
      const [stratum, n, measure, baseline, system, bMean, sMean, delta, ci, p] = r as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      const c = data.comparisons.find((x) => x.stratum === stratum && x.measure === measure && x.baseline === baseline && x.system === system);
      expect(c, `${stratum} ${measure}`).toBeDefined();
      if (!c) continue;
      expect(Number(n)).toBe(c.n);
      // Four decimals: each quoted number is within half a unit in the last place of report.json's value.
      expect(Math.abs(num(bMean) - c.baselineMean)).toBeLessThanOrEqual(0.00005 + 1e-12);
      expect(Math.abs(num(sMean) - c.systemMean)).toBeLessThanOrEqual(0.00005 + 1e-12);
      expect(Math.abs(num(delta) - c.delta)).toBeLessThanOrEqual(0.00005 + 1e-12);
      // `[lo, hi] (level%)`
      const [bounds, level] = ci.split(' (') as [string, string];
      const [lo, hi] = bounds.slice(1, -1).split(', ').map(Number) as [number, number];
      expect(Math.abs(lo - (c.ci[0] as number))).toBeLessThanOrEqual(0.00005 + 1e-12);
      expect(Math.abs(hi - (c.ci[1] as number))).toBeLessThanOrEqual(0.00005 + 1e-12);
      expect(level).toBe(`${fmtLevel(c.ciLevel)})`);
      if (p !== '<0.0001') expect(Math.abs(Number(p) - (c.pAdjusted as number))).toBeLessThanOrEqual(0.00005 + 1e-12);
      // ... and character for character what report.md prints for the same comparison (the first part of its
      // row where a wide table is split for a code host, report/md-table.ts).
      const mdRow = `| ${system} | ${baseline} | ${measure} | ${r[11]} | ${sMean} | ${bMean} | ${delta} | ${bounds} | ${level.slice(0, -1)} |`;
      expect(reportMd, mdRow).toContain(mdRow);
    }
  });

  it('never overwrites, and refuses a folder without report.json', async () => {
    const root = tempDir('harness-adr');
    const io = testIo(root);
    const missing = await runCaptured(['adr', '--report', 'nowhere', '--title', 'X'], root);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`harness: ${join(root, 'nowhere', 'report.json')}: no report.json here`);
    await writeReport(join(root, 'r'), fixtureInput());
    expect(await runCli(['adr', '--report', 'r', '--title', 'No gate here', '--adr-dir', 'adr', '--date', '2026-01-02'], io)).toBe(0);
    expect(await runCli(['adr', '--report', 'r', '--title', 'No gate here', '--adr-dir', 'adr', '--date', '2026-01-02'], io)).toBe(0);
    expect((await readdir(join(root, 'adr'))).sort()).toEqual(['0001-no-gate-here.md', '0002-no-gate-here.md']);
    const adr = await readFile(join(root, 'adr', '0001-no-gate-here.md'), 'utf8');
    expect(adr).toContain('No option chosen: the report has no `gate:` block');
    // Without a gate the evidence is every run against the baseline on the first tested measure.
    expect(
      evidenceTable(adr)
        .slice(2)
        .map((r) => `${r[4]} ${r[0]}`),
    ).toEqual(['dense exact', 'hybrid exact', 'dense paraphrase', 'hybrid paraphrase', 'dense all', 'hybrid all']);
    const date = await runCaptured(['adr', '--report', 'r', '--title', 'X', '--adr-dir', 'adr', '--date', '2nd of May'], root);
    expect(date.code).toBe(2);
    expect(date.stderr).toContain('harness: --date 2nd of May: write it as YYYY-MM-DD');
  });
});

/** The lines of one `## ` section, up to the next heading of level 2 or 3. */
function section(md: string, heading: string): string[] {
  const lines = md.split('\n');
  const start = lines.indexOf(heading);
  const end = lines.findIndex((l, i) => i > start && /^#{2,3} /.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/**
 * The fixture as a grid study: an rrf Group of two points over bm25 and dense with its tuned system, and a cc
 * Group of two points without one; the gate decides on the tuned system.
 */
function gridStudy(): ReportInput {
  const base = fixtureInput({ gate: { candidate: 'rrf.tuned', measure: 'nDCG@10' } });
  const like = (from: string) => base.perQuery[from] as ReportInput['perQuery'][string];
  const point = (id: string, group: string, kind: string, p: Record<string, number>): ReportRun => ({
    id,
    kind,
    fingerprint: `fp-${id}`,
    node: 'fuse',
    inputs: ['bm25', 'dense'],
    group,
    point: p,
  });
  const tuned: ReportRun = {
    id: 'rrf.tuned',
    kind: 'tuned',
    fingerprint: 'tuned:rrf:folds',
    node: 'tune',
    group: 'rrf',
    tuning: {
      measure: 'nDCG@10',
      method: 'folds',
      choices: [
        { fold: '1', member: 'rrf.rrfK=60', trainMean: 0.4, queries: 12 },
        { fold: '2', member: 'rrf.rrfK=10', trainMean: 0.38, queries: 12 },
      ],
      oracle: { member: 'rrf.rrfK=60', mean: 0.41 },
    },
  };
  return {
    ...base,
    runs: [
      ...base.runs,
      point('rrf.rrfK=10', 'rrf', 'rrf', { rrfK: 10 }),
      point('rrf.rrfK=60', 'rrf', 'rrf', { rrfK: 60 }),
      tuned,
      point('cc.alpha=0', 'cc', 'cc', { alpha: 0 }),
      point('cc.alpha=1', 'cc', 'cc', { alpha: 1 }),
    ],
    perQuery: {
      ...base.perQuery,
      'rrf.rrfK=10': like('hybrid'),
      'rrf.rrfK=60': like('dense'),
      'rrf.tuned': like('dense'),
      'cc.alpha=0': like('bm25'),
      'cc.alpha=1': like('hybrid'),
    },
  };
}

describe('an ADR drafted from a grid study', () => {
  it('offers each group (its tuned pick and oracle) rather than every point, and weighs good and bad', async () => {
    const dir = join(tempDir('harness-adr'), 'report');
    await writeReport(dir, gridStudy());
    const data = await readReport(dir);
    const adr = renderAdr(data, { number: 31, title: 'Fuse', date: '2026-01-02', reportLink: '../report' });
    const options = section(adr, '## Considered Options').filter((l) => l.startsWith('- '));
    expect(options.map((l) => /^- (?:Grid )?`([^`]+)`/.exec(l)?.[1])).toEqual(['bm25', 'dense', 'hybrid', 'rrf', 'cc']);
    expect(options[3]).toMatch(
      /^- Grid `rrf` \(2 points of rrf over rrfK\): tuned `rrf\.tuned`, nDCG@10 [0-9.]+ in all, picking `rrf\.rrfK=60` in 1, `rrf\.rrfK=10` in 1 of 2 folds by nDCG@10; oracle `rrf\.rrfK=60` \(nDCG@10 0\.4100, /,
    );
    // Without a tuned system the group offers its best point on the test queries, said to be optimistic.
    const best = ['cc.alpha=0', 'cc.alpha=1'].sort(
      (a, b) =>
        (data.summary.find((r) => r.run === b && r.stratum === 'all' && r.measure === 'nDCG@10')?.mean ?? 0) -
        (data.summary.find((r) => r.run === a && r.stratum === 'all' && r.measure === 'nDCG@10')?.mean ?? 0),
    )[0];
    expect(options[4]).toContain(`no tuned system (add \`tune:\` to pick a point without the test queries); best on the test queries \`${best}\``);
    expect(adr).not.toContain('fp-rrf');

    const consequences = section(adr, '### Consequences');
    const confirmatory = data.comparisons.filter((c) => c.role === 'confirmatory');
    const good = consequences.filter((l) => l.startsWith('- Good, because'));
    const bad = consequences.filter((l) => l.startsWith('- Bad, because'));
    expect(good.length).toBe(confirmatory.filter((c) => c.delta > 0).length);
    expect(bad).toContain('- Bad, because `rrf.tuned` needs 2 arms (bm25, dense) indexed and queried where `bm25` needs 1.');
    expect(bad.filter((l) => l.includes('scores below')).length).toBe(confirmatory.filter((c) => c.delta < 0).length);
    expect(good.length + bad.length).toBeGreaterThan(1);
    // The evidence table stays: the gate's pair on every tested measure and stratum.
    expect(evidenceTable(adr).slice(2).length).toBe(data.testedMeasures.length * data.strata.length);
  });
});
