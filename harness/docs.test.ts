import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './testing/shared.js';

/**
 * The decision records stay decisions, and every pointer to them or to docs/perf/ keeps resolving. An ADR
 * states context, options, decision and consequences; the measurements it rests on live in docs/perf/, so a
 * record that grows past this is collecting lab notes.
 */
const MAX_ADR_LINES = 150;
/** Settled statuses only: a `proposed` record whose code is in use is out of date. `rejected` is settled too. */
const STATUS = /^(accepted|rejected|deprecated|superseded by (\d{4}))$/;
const SECTIONS = ['## Context and Problem Statement', '## Decision Outcome', '### Consequences'] as const;

const ADR_DIR = join(PROJECT_ROOT, 'docs', 'adr');
const TEMPLATE = '0000-template.md';
/** Folders git ignores or that hold generated output: nothing in them is a citation to keep. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', 'data', 'cache', '.cache', 'results', 'reports', '.tmp']);
/** Files whose `docs/adr/` paths are not citations, each with its reason. */
const NOT_CITATIONS: Readonly<Record<string, string>> = {
  'harness/report/adr.test.ts': 'the path `harness adr` prints for a draft it writes into a temporary folder',
};

const adrNames = readdirSync(ADR_DIR).filter((f) => /^\d{4}-.+\.md$/.test(f) && f !== TEMPLATE);
const adrText = (name: string) => readFileSync(join(ADR_DIR, name), 'utf8');
const adrByNumber = (n: string) => adrNames.find((f) => f.startsWith(`${n}-`));

function status(markdown: string): string | undefined {
  return /^---\nstatus: ([^\n]*)\n/.exec(markdown)?.[1]?.trim();
}

/** Project-relative paths of the .ts and .md files, generated and ignored folders left out. */
function sourceFiles(dir = PROJECT_ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return SKIPPED_DIRS.has(e.name) ? [] : sourceFiles(join(dir, e.name));
    return e.isFile() && /\.(ts|md)$/.test(e.name) ? [relative(PROJECT_ROOT, join(dir, e.name))] : [];
  });
}

/** A file's text with comment line breaks (` * `, `// `) and line breaks folded into single spaces. */
function prose(file: string): string {
  return readFileSync(join(PROJECT_ROOT, file), 'utf8').replace(/\s*\n\s*(?:\*(?!\*)|\/\/)?\s*/g, ' ');
}

/** `docs/adr/<name>` or `docs/perf/<name>` resolves: an existing file, or the number of one ADR. */
function pathResolves(folder: string, name: string): boolean {
  if (existsSync(join(PROJECT_ROOT, 'docs', folder, name))) return true;
  return folder === 'adr' && /^\d{4}$/.test(name) && adrByNumber(name) !== undefined;
}

/** Heading lines of an ADR, backticks dropped and lower-cased, so a citation may quote a heading in part. */
function headings(markdown: string): string[] {
  return markdown
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .map((l) => l.replaceAll('`', '').toLowerCase());
}

/** The problems of every citation in `file`: paths under docs/adr or docs/perf, ADR numbers, quoted sections. */
function citationProblems(file: string): string[] {
  const text = prose(file);
  const problems: string[] = [];
  for (const [, folder = '', name = ''] of text.matchAll(/docs\/(adr|perf)\/([\w.-]*[\w])/g)) {
    if (!name.startsWith('NNNN') && !pathResolves(folder, name)) problems.push(`${file}: docs/${folder}/${name} does not exist`);
  }
  for (const [, n = ''] of text.matchAll(/\bADRs? (\d{4})\b/g)) {
    if (adrByNumber(n) === undefined) problems.push(`${file}: ADR ${n} does not exist`);
  }
  // A section is cited, in quotes, after the ADR's number or its file name (`ADR <number>, "<heading>"`).
  for (const [, n = '', title = ''] of text.matchAll(/\b(?:ADR |docs\/adr\/)(\d{4})[\w.-]*,? "([^"]+)"/g)) {
    const adr = adrByNumber(n);
    const wanted = title.replaceAll('`', '').toLowerCase();
    if (adr !== undefined && !headings(adrText(adr)).some((h) => h.includes(wanted))) {
      problems.push(`${file}: ADR ${n} has no section "${title}"`);
    }
  }
  return problems;
}

/** Relative links to Markdown files from the pages of docs/adr and docs/perf that do not resolve. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
  return [...text.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z]+:/.test(target) && !target.includes('reports/'))
    .filter((target) => !existsSync(join(PROJECT_ROOT, dirname(file), target)))
    .map((target) => `${file}: link to ${target} does not resolve`);
}

describe('ADRs as decisions', () => {
  it('finds the records', () => {
    expect(adrNames.length).toBeGreaterThan(20);
  });

  it.each(adrNames)('%s: settled status, context / decision / consequences, at most 150 lines', (name) => {
    const text = adrText(name);
    const settled = STATUS.exec(status(text) ?? '');
    expect(settled, `${name}: status "${status(text)}"`).not.toBeNull();
    const successor = settled?.[2];
    if (successor !== undefined) expect(adrByNumber(successor), `${name}: superseded by a missing ADR`).toBeDefined();
    for (const section of SECTIONS) expect(text.split('\n'), `${name}: no "${section}"`).toContain(section);
    expect(text.trimEnd().split('\n').length, `${name}: over ${MAX_ADR_LINES} lines; move measurements to docs/perf/`).toBeLessThanOrEqual(MAX_ADR_LINES);
  });
});

describe('citations of docs/adr and docs/perf', () => {
  const files = sourceFiles().filter((f) => NOT_CITATIONS[f] === undefined);

  it('name files that exist, ADRs that exist and sections those ADRs have', () => {
    expect(files.flatMap(citationProblems)).toEqual([]);
  });

  it('link, from docs/adr and docs/perf, to Markdown files that exist', () => {
    const pages = files.filter((f) => /^docs\/(adr|perf)\//.test(f));
    expect(pages.length).toBeGreaterThan(adrNames.length);
    expect(pages.flatMap(brokenLinks)).toEqual([]);
  });
});
