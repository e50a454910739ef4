import { describe, expect, it } from 'vitest';
import { renderAdr } from '../report/adr.js';
import { buildReportData } from './build.js';
import { fmtCI, fmtCompCI } from './format.js';
import { renderHtml } from '../report/html.js';
import { renderLatex } from '../report/latex.js';
import { renderMarkdown } from '../report/markdown.js';
import { fixtureInput } from '../report/testdata/fixture.js';

describe('intervals that cannot be computed', () => {
  it('print in words with the reason, never as [-inf, +inf]', () => {
    expect(fmtCI([null, null])).toBe('not computable');
    expect(fmtCI([null, 0.1])).toBe('[-inf, +0.1000]');
    expect(fmtCompCI({ ci: [null, null], ciLevel: 0.999, permutations: 100 })).toBe('not computable: 100 permutations cannot reach the corrected 99.90% level');
    expect(fmtCompCI({ ci: [null, null], ciLevel: 0.95, permutations: null })).toBe('not computable: no shift can be rejected at the 95.0% level');
  });

  it('in every rendering: Markdown, HTML, LaTeX, the ADR and the gate reason', () => {
    // 100 sign flips and 18 exploratory tests: several intervals have no bound on either side.
    const few = buildReportData(fixtureInput({ compare: { permutations: 100 }, gate: { candidate: 'hybrid', measure: 'R@10' } }));
    expect(few.comparisons.some((c) => c.ci[0] === null && c.ci[1] === null)).toBe(true);
    const adr = renderAdr(few, { number: 1, title: 'T', date: '2026-01-01', reportLink: '.' });
    for (const text of [renderMarkdown(few), renderHtml(few), renderLatex(few), adr, few.gateResult?.reason ?? '']) {
      expect(text).not.toMatch(/\[-inf, \+inf\]/);
      expect(text).not.toMatch(/NaN/);
    }
  });
});
