import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Debian's pdflatex (texlive-latex-base + texlive-latex-recommended, which `.ci/run` installs), or the one
 * HARNESS_PDFLATEX names; undefined where neither is, and the report.tex tests then skip with that reason.
 */
export const PDFLATEX = ['/usr/bin/pdflatex', process.env['HARNESS_PDFLATEX'] ?? ''].find((p) => p !== '' && existsSync(p));

export const PDFLATEX_MISSING = 'no pdflatex here (apt-get install texlive-latex-base texlive-latex-recommended)';

/**
 * Compiles `report.tex` in `dir` with pdflatex; true when report.pdf came out. -halt-on-error makes the first
 * LaTeX error fail the run, with pdflatex's log in the thrown message.
 */
export function compileReportTex(dir: string): boolean {
  if (PDFLATEX === undefined) throw new Error(`compileReportTex: ${PDFLATEX_MISSING}`);
  execFileSync(PDFLATEX, ['-interaction=nonstopmode', '-halt-on-error', 'report.tex'], { cwd: dir, stdio: 'pipe' });
  return existsSync(join(dir, 'report.pdf'));
}
