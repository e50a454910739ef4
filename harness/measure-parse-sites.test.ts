import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './testing/shared.js';

/**
 * Issue 45: a measure is read from text once, where the text comes in, and travels as a value from there (the
 * config loader's MeasureTable, a report's ReportedMeasure). These are the files that may read a measure's
 * spelling with `parseMeasure`, each an input boundary; anywhere else, take the value the boundary read.
 */
const PARSE_SITES: Readonly<Record<string, string>> = {
  'harness/metrics/measure.ts': 'the definition: the registry and its parser',
  'harness/metrics/public.ts': "the library API: evaluate() and relevanceLevelProblem() accept measure names from the caller's code",
  'harness/compare/measures.ts':
    "the one read of a wire spelling (reportedMeasure): the config loader's measures block, and a ReportInput or report.json listed by spelling",
  'harness/report/from-trec.ts': "`--measures` given beside trec_eval run files: the command line's text, read once into the report's measures",
  'harness/cli/compare.command.ts': '`--gate-measure`, and a run argument checked for reading as a measure: command-line text',
  'harness/cli/eval.command.ts': '`harness eval -m` arguments that are no trec_eval name: command-line text read to name the trec_eval spelling to use',
  'harness/cli/measures.command.ts': "`harness measures` prints each family's example spellings with their trec_eval form: the registry's examples are text",
};

/** The folders whose runtime code is checked: the harness and the arms. */
const SCANNED = ['harness', 'arms'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

function inModuleDeclaration(node: ts.Node): boolean {
  for (let n: ts.Node | undefined = node.parent; n !== undefined; n = n.parent) if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) return true;
  return false;
}

/**
 * The lines of `text` that use `parseMeasure`: a call, the function passed as a value (`.map(parseMeasure)`), or an
 * import under another name. Comments, strings and a plain import or re-export (which reads nothing) are not uses.
 */
function parseSites(file: string, text: string): number[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    const renamed = ts.isImportSpecifier(node) && node.propertyName?.text === 'parseMeasure' && node.name.text !== 'parseMeasure';
    const used = ts.isIdentifier(node) && node.text === 'parseMeasure' && !inModuleDeclaration(node);
    if (renamed || used) lines.push(src.getLineAndCharacterOfPosition(node.getStart(src)).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(src);
  return lines;
}

/** Project-relative path -> the lines using parseMeasure, for every scanned file that uses it. */
function usesByFile(): Map<string, number[]> {
  const uses = new Map<string, number[]>();
  for (const path of SCANNED.flatMap((dir) => sources(join(PROJECT_ROOT, dir)))) {
    const file = relative(PROJECT_ROOT, path);
    const lines = parseSites(file, readFileSync(path, 'utf8'));
    if (lines.length > 0) uses.set(file, lines);
  }
  return uses;
}

describe('measure parse sites (issue 45: measures travel as parsed values)', () => {
  const uses = usesByFile();

  it('only an input boundary reads a measure from text; elsewhere the value read there is taken', () => {
    const outside = [...uses].filter(([file]) => PARSE_SITES[file] === undefined).map(([file, lines]) => `${file}:${lines.join(',')}`);
    expect(
      outside,
      "take the ReportedMeasure/Measure the boundary read (measureNamed on the config loader's table), or add the file here with why it is a boundary",
    ).toEqual([]);
  });

  it('every allowed file still reads measures from text, so the list cannot outlive its reasons', () => {
    const stale = Object.keys(PARSE_SITES).filter((file) => !existsSync(join(PROJECT_ROOT, file)) || !uses.has(file));
    expect(stale, 'remove these from PARSE_SITES').toEqual([]);
  });

  it('the scanner finds calls, point-free uses and renamed imports, and passes comments, strings and plain imports', () => {
    const text = [
      "import { formatMeasure, parseMeasure } from './measure.js';",
      "export { parseMeasure } from './measure.js';",
      '// parseMeasure(x) in a comment',
      "const s = 'parseMeasure(x) in a string';",
      "const a = parseMeasure('AP');",
      'const b = names.map(parseMeasure);',
      "import { parseMeasure as read } from './measure.js';",
      "const c = m.parseMeasure('AP');",
    ].join('\n');
    expect(parseSites('x.ts', text)).toEqual([5, 6, 7, 8]);
  });
});
