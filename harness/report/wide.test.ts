import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileReportTex, PDFLATEX, PDFLATEX_MISSING } from '../testing/pdflatex.js';
import { buildReportData } from '../decision/build.js';
import { renderLatex } from './latex.js';
import { renderMarkdown } from './markdown.js';
import { longestWord, MD_MAX_COLUMNS, MD_MAX_WIDTH, mdTable } from './md-table.js';
import { runKeys, type Win, winsText } from './run-keys.js';
import { fixtureInput } from './testdata/fixture.js';
import { manySystemsInput } from './testdata/many-systems.js';
import { tempDir } from '../testing/temp.js';

const many = buildReportData(manySystemsInput());

describe('run keys past 26 systems', () => {
  it('are letters up to 26 runs and numbers beyond', () => {
    const runs = (n: number) => ({ runs: Array.from({ length: n }, (_, i) => ({ id: `r${i}` })) }) as unknown as Parameters<typeof runKeys>[0];
    expect([...runKeys(runs(26)).values()].slice(-2)).toEqual(['y', 'z']);
    expect([...runKeys(runs(27)).values()].slice(-2)).toEqual(['26', '27']);
  });

  it('list wins as compact ranges, the gate win alone, and a count when too scattered', () => {
    const keys = runKeys({ runs: Array.from({ length: 60 }, (_, i) => ({ id: `r${i}` })) } as unknown as Parameters<typeof runKeys>[0]);
    const w = (index: number, gate = false): Win => ({ index, id: `r${index}`, gate });
    expect(
      winsText(
        keys,
        [0, 1, 2, 3, 4, 5, 7, 9, 10].map((i) => w(i)),
      ),
    ).toBe('1–6,8,10,11');
    expect(winsText(keys, [w(0), w(1, true), w(2), w(3), w(4)])).toBe('1,2†,3–5');
    const scattered = [0, 2, 4, 6, 8, 10, 12, 14].map((i) => w(i));
    expect(winsText(keys, scattered)).toBe('8 runs');
    expect(winsText(keys, [...scattered, w(20, true)])).toBe('21†,8 runs');
  });

  it('keep the means table readable: the baseline row names the dozens of runs it beats in a few ranges', () => {
    const md = renderMarkdown(many);
    expect(md).toContain('| 1 | bm25 | 0.6227<sup>2–6,8–34,36–42,49</sup> |');
    expect(md).toContain('Keys are numbers (there are more than 26 runs)');
  });
});

describe('Markdown tables a code host shows without scrolling', () => {
  it('split a wide table into narrow ones that repeat the key columns', () => {
    const head = ['system', 'baseline', ...Array.from({ length: 12 }, (_, i) => `m${i}`)];
    const lines = mdTable(
      head,
      head.map(() => 'l'),
      [head.map((h) => `${h}-value`)],
      2,
    );
    const heads = lines.filter((_l, i) => lines[i + 1]?.startsWith('| ---'));
    expect(heads.length).toBeGreaterThan(1);
    for (const h of heads) expect(h.startsWith('| system | baseline |')).toBe(true);
    expect(heads.flatMap((h) => h.split(' | ').slice(2)).length).toBe(12);
  });

  it('keeps every table of a 60-system report within the column and width limits', () => {
    const lines = renderMarkdown(many).split('\n');
    const tables = lines.flatMap((_l, i) => (lines[i + 1]?.startsWith('| --') ? [i] : []));
    expect(tables.length).toBeGreaterThan(20);
    for (const start of tables) {
      const rows: string[][] = [];
      for (let i = start; lines[i]?.startsWith('|'); i++) rows.push((lines[i] as string).slice(2, -2).split(/(?<!\\) \| /));
      const head = rows[0] as string[];
      expect(head.length, head.join('|')).toBeLessThanOrEqual(MD_MAX_COLUMNS);
      const width = head.reduce((s, _, c) => s + Math.max(...rows.map((r) => longestWord(r[c] ?? ''))) + 3, 0);
      expect(width, head.join('|')).toBeLessThanOrEqual(MD_MAX_WIDTH);
    }
  });
});

if (!PDFLATEX) process.stderr.write(`[skip] report.tex with pdflatex: ${PDFLATEX_MISSING}\n`);

describe.skipIf(!PDFLATEX)('report.tex compiles with pdflatex', () => {
  const compile = async (tex: string) => {
    const dir = tempDir('harness-tex');
    await writeFile(join(dir, 'report.tex'), tex);
    return compileReportTex(dir);
  };

  it('for 60 systems with LaTeX specials and non-ASCII in names', async () => {
    const tex = renderLatex(many);
    expect(tex).toContain('recipe\\_3 \\& "menage" \\#3');
    expect(tex).toContain('\\textsuperscript{2--6,}\\allowbreak\\textsuperscript{8--34,}');
    expect(await compile(tex)).toBe(true);
  }, 60_000);

  it('for the small fixture with a gate', async () => {
    expect(await compile(renderLatex(buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }))))).toBe(true);
  }, 60_000);
});
