import { describe, expect, it } from 'vitest';
import { buildReportData } from '../decision/build.js';
import { gridModels, gridPlots } from './grid-plot.js';
import { renderHtml } from './html.js';
import { renderLatex } from './latex.js';
import { renderMarkdown } from './markdown.js';
import { gridStudyInput } from './testdata/grid-study.js';

// A report the size of rrf-vs-cc's: 41 systems and 3 tuned ones, 4 strata with the pooled row, 3 grids.
const data = buildReportData(gridStudyInput());

describe('decision first, at forty systems', () => {
  it('report.md: the question, then ## Gate within 30 lines; no fingerprint before the appendix; no infinite interval', () => {
    const md = renderMarkdown(data);
    const lines = md.split('\n');
    expect(lines.findIndex((l) => l.startsWith('**Question:**'))).toBeLessThan(lines.indexOf('## Gate'));
    expect(lines.indexOf('## Gate')).toBeGreaterThan(0);
    expect(lines.indexOf('## Gate')).toBeLessThan(30);
    const appendix = lines.indexOf('## Appendix');
    expect(appendix).toBeGreaterThan(lines.indexOf('## Gate'));
    const before = lines.slice(0, appendix).join('\n');
    const fingerprints = [data.configHash, data.evalset.fingerprint, ...data.runs.map((r) => r.fingerprint)];
    for (const fp of fingerprints) expect(before, fp).not.toContain(fp);
    // Every one of them is in the appendix.
    for (const fp of fingerprints) expect(lines.slice(appendix).join('\n'), fp).toContain(fp);
    expect(md).not.toMatch(/-inf|\+inf|Infinity|NaN/);
    // Holm over 512 exploratory tests asks levels 10,000 draws cannot reach: said in words.
    expect(data.comparisons.some((c) => c.ci[0] === null && c.ci[1] === null)).toBe(true);
    expect(md).toContain('not computable: 10,000 permutations cannot reach the corrected');
  });

  it('report.md: the gate, its warnings and the head-to-head table come before anything exploratory', () => {
    const lines = renderMarkdown(data).split('\n');
    const at = (h: string) => lines.indexOf(h);
    const order = [
      '## Gate',
      '### Warnings on the gate',
      '### rrf.tuned against bm25, per stratum',
      '## Other warnings',
      '## Grids',
      '## Exploratory comparisons',
      '## Legend',
      '## Appendix',
    ];
    for (const h of order) expect(at(h), h).toBeGreaterThan(0);
    expect(order.map(at)).toEqual(order.map(at).sort((a, b) => a - b));
    // Top and bottom per stratum, with where the rest is.
    expect(lines.filter((l) => /^### .*: 10 of \d+$/.test(l))).toHaveLength(4);
    expect(lines.join('\n')).toContain('Every comparison, on every measure, is in comparisons.csv');
  });

  it('report.md: the gate table holds the confirmatory comparisons only, one per stratum', () => {
    const md = renderMarkdown(data);
    const table = md.slice(md.indexOf('| stratum | n | delta |'), md.indexOf('Confirmatory family:'));
    expect(table.trim().split('\n')).toHaveLength(2 + 4);
    for (const s of ['exact', 'paraphrase', 'multi-hop', 'all']) expect(table).toContain(`| ${s} |`);
  });

  it('report.html: the gate, its confirmatory forest plot and the warnings on it open the page', () => {
    const html = renderHtml(data);
    const i = (s: string) => html.indexOf(s);
    expect(i('class="question"')).toBeGreaterThan(0);
    expect(i('class="question"')).toBeLessThan(i('class="verdict'));
    expect(i('class="verdict')).toBeLessThan(i('gate-forest'));
    expect(i('gate-forest')).toBeLessThan(i('<h3>Warnings on the gate</h3>'));
    expect(i('<h3>Warnings on the gate</h3>')).toBeLessThan(i('<h2>Other warnings</h2>'));
    expect(i('<h2>Other warnings</h2>')).toBeLessThan(i('<h2>Grids</h2>'));
    expect(i('<h2>Exploratory comparisons</h2>')).toBeLessThan(i('<h2 class="appendix">Appendix</h2>'));
    expect(html.slice(0, i('<h2 class="appendix">'))).not.toContain(data.runs[0]?.fingerprint);
    const gate = html.slice(i('<svg class="plot forest gate-forest"'), html.indexOf('</svg>', i('gate-forest')));
    // One row per confirmatory comparison, each with its level.
    expect(gate.match(/<circle /g)).toHaveLength(4);
    expect(gate.match(/ at \d+\.\d+%<\/text>/g)).toHaveLength(4);
  });

  it('report.html: one row per comparison in the exploratory table, with what its filters and sorts read', () => {
    const html = renderHtml(data);
    const rows = html.match(/<tr data-i="\d+"[^>]*>/g) ?? [];
    expect(rows).toHaveLength(data.comparisons.length);
    expect(rows[0]).toMatch(
      /data-system="[^"]+" data-baseline="bm25" data-group="[^"]*" data-stratum="\w[^"]*" data-measure="[^"]+" data-delta="-?[\d.e-]+" data-p="[\d.e-]*" data-sig="[01]"/,
    );
    for (const id of ['f-system', 'f-group', 'f-stratum', 'f-measure', 'f-sig', 'f-sort']) expect(html).toContain(`id="${id}"`);
    expect(html).toContain('<option value="cc-minmax">cc-minmax</option>');
  });
});

describe('grids as pictures', () => {
  it('a ranked dot plot for the input subsets, a line with bands for each one-parameter sweep', () => {
    const models = gridModels(data);
    expect(models.map((g) => [g.group, g.shape, g.keys])).toEqual([
      ['rrf', 'ranked', ['inputs', 'rrfK']],
      ['cc-tm2c2', 'line', ['alpha']],
      ['cc-minmax', 'line', ['alpha']],
    ]);
    const [ranked, line] = gridPlots(data) as [string, string, string];
    expect(ranked).toContain('class="plot grid ranked"');
    // 16 points in 4 strata: a band each; the oracle and the picked point marked in every stratum.
    expect(ranked.match(/stroke-opacity="0.45"/g)).toHaveLength(64);
    expect(ranked).toContain('(picked 4x, oracle)');
    expect(line).toContain('class="plot grid line"');
    expect(line.match(/<polygon /g)).toHaveLength(4);
    expect(line.match(/<polyline /g)).toHaveLength(4);
    expect(line.match(/<circle /g)).toHaveLength(44);
    // Per stratum: the oracle diamond, a triangle over each distinct pick, plus the legend's two.
    expect(line.match(/<path /g)).toHaveLength(4 * 3 + 2);
  });

  it('a band is the point mean ± a 95% paired t half-width against the baseline', () => {
    const g = gridModels(data)[1]!;
    const id = g.members[3]!.id;
    const idx = data.queries.flatMap((q, i) => (q.stratum === 'paraphrase' ? [i] : []));
    const v = data.perQuery[id]!['nDCG@10']!;
    const b = data.perQuery['bm25']!['nDCG@10']!;
    const d = idx.map((i) => v[i]! - b[i]!);
    const dm = d.reduce((a, x) => a + x, 0) / d.length;
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - dm) ** 2, 0) / (d.length - 1));
    const cell = g.cells.get(id)!.get('paraphrase')!;
    // t(0.975, 35) = 2.0301
    expect(cell.hi - cell.mean).toBeCloseTo((2.0301 * sd) / Math.sqrt(36), 4);
    expect(cell.mean - cell.lo).toBeCloseTo(cell.hi - cell.mean, 12);
  });

  it('a 200-point sweep stays a line: no dot per point, one path per stratum', () => {
    const wide = buildReportData(gridStudyInput({ alphaStep: 0.005, compare: { test: 't' } }));
    const line = gridPlots(wide)[1] as string;
    expect(gridModels(wide)[1]?.members).toHaveLength(201);
    expect(line.match(/<circle /g)).toBeNull();
    expect(line.match(/<polyline /g)).toHaveLength(4);
    expect(line.match(/<text /g)?.length).toBeLessThan(80);
  });

  it('a heat map for two parameters, the picked cells outlined', () => {
    const heat = buildReportData(gridStudyInput({ heat: true, compare: { test: 't' } }));
    const model = gridModels(heat).find((g) => g.group === 'cc-heat');
    expect(model?.shape).toBe('heat');
    const svg = gridPlots(heat)[3] as string;
    expect(svg).toContain('class="plot grid heat"');
    expect(svg.match(/<rect /g)).toHaveLength(6 * 4);
    expect(svg.match(/stroke-width="2"><title>/g)).toHaveLength(2 * 4);
  });
});

describe('report.tex, decision first', () => {
  it('opens with the gate table before the per-stratum tables', () => {
    const tex = renderLatex(data);
    expect(tex.indexOf('tab:grid-study-gate')).toBeGreaterThan(0);
    expect(tex.indexOf('tab:grid-study-gate')).toBeLessThan(tex.indexOf('tab:grid-study-exact'));
    expect(tex).toContain('INCONCLUSIVE');
    expect(tex).not.toMatch(/inf\]/);
  });
});
