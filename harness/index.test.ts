import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as evalset from '../evalset/index.js';
import * as root from './index.js';
import * as metrics from './metrics/index.js';
import * as stats from './stats/index.js';
import { PROJECT_ROOT } from './testing/shared.js';
import { tempDir } from './testing/temp.js';

/** Packages that must not load when a user imports the Library: model runtimes, vector stores, the CLI's own. */
const HEAVY = [
  '@huggingface/transformers',
  '@lancedb/lancedb',
  'onnxruntime-node',
  'onnxruntime-web',
  '@energetic-ai/core',
  '@energetic-ai/embeddings',
  'better-sqlite3',
  'openai',
  'voyageai',
  '@modelcontextprotocol/sdk',
  'yargs',
  'playwright-core',
];
/** Project folders the Library must not load: the CLI, the Arms (dense, lancedb, remote ...), the runner. */
const HEAVY_DIRS = ['harness/cli', 'arms', 'harness/ablate', 'harness/report', 'harness/systems', 'harness/judge'];

describe('the package root (harness/index.ts)', () => {
  it('re-exports every value of harness/metrics, harness/stats and harness/evalset, as the same binding', () => {
    const rootExports = new Map(Object.entries(root));
    for (const [name, sub] of Object.entries({ metrics, stats, evalset })) {
      for (const [key, value] of Object.entries(sub)) expect(rootExports.get(key), `${name}.${key}`).toBe(value);
    }
    const all = new Set([...Object.keys(metrics), ...Object.keys(stats), ...Object.keys(evalset)]);
    expect(Object.keys(root).sort()).toEqual([...all].sort());
  });

  it('statically imports no CLI, Arm or model code (the import graph of its sources)', () => {
    const { files, packages } = staticGraph(join(PROJECT_ROOT, 'harness', 'index.ts'));
    expect(packages.filter((p) => HEAVY.some((h) => p === h || p.startsWith(`${h}/`)))).toEqual([]);
    expect(files.filter((f) => HEAVY_DIRS.some((d) => f.startsWith(`${d}/`)))).toEqual([]);
    // The walk did follow the re-exports.
    expect(files).toEqual(expect.arrayContaining(['harness/metrics/index.ts', 'harness/stats/index.ts', 'evalset/index.ts', 'evalset/load.ts']));
  });

  const built = existsSync(join(PROJECT_ROOT, 'dist', 'harness', 'index.js'));
  if (!built) process.stderr.write('[skip] package root load check: dist/harness/index.js is not built (npm test builds it first)\n');
  it.skipIf(!built)('loads no heavy module and has no side effect when node imports the built root', () => {
    const dir = tempDir('harness-root');
    const log = join(dir, 'resolved.log');
    writeFileSync(log, '');
    // Every module node resolves (ESM, and CJS reached from ESM) is logged by a resolve hook; CJS loaded from
    // CJS is in require.cache.
    writeFileSync(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}`,
    );
    writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
    const script = `
      import { createRequire } from 'node:module';
      const before = Object.getOwnPropertyNames(globalThis).sort();
      const m = await import(${JSON.stringify(pathToFileURL(join(PROJECT_ROOT, 'dist', 'harness', 'index.js')).href)});
      const after = Object.getOwnPropertyNames(globalThis).sort();
      const cjs = Object.keys(createRequire(import.meta.url).cache);
      const ev = m.evaluate({ q1: { d1: 1 } }, { q1: { d1: 0.9, d2: 0.1 } }, ['AP']);
      process.stdout.write(JSON.stringify({ newGlobals: after.filter((g) => !before.includes(g)), cjs, ap: ev.perQuery.get('AP').get('q1') }));`;
    const out = execFileSync(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, '--input-type=module', '-e', script], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
    const got = JSON.parse(out) as { newGlobals: string[]; cjs: string[]; ap: number };
    expect(got.ap).toBe(1);
    // zod (evalset's config options) keeps its registry on globalThis; nothing of ours is added.
    expect(got.newGlobals.filter((g) => !g.startsWith('__zod_'))).toEqual([]);
    const loaded = [...readFileSync(log, 'utf8').split('\n').filter(Boolean), ...got.cjs.map((f) => pathToFileURL(f).href)];
    const heavy = loaded.filter((u) => HEAVY.some((h) => u.includes(`/node_modules/${h}/`)));
    expect(heavy).toEqual([]);
    const dist = pathToFileURL(join(PROJECT_ROOT, 'dist')).href;
    const ours = loaded.filter((u) => u.startsWith(`${dist}/`)).map((u) => u.slice(dist.length + 1));
    expect(ours.filter((f) => HEAVY_DIRS.some((d) => f.startsWith(`${d}/`)))).toEqual([]);
    expect(ours).toContain('harness/metrics/index.js');
  });
});

/**
 * The project files and packages `entry` loads through static imports and re-exports (`import type` and
 * `export type` are erased; `import()` is lazy and left out), following relative `.js` specifiers to `.ts`.
 */
function staticGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    const rel = relative(PROJECT_ROOT, file);
    if (files.has(rel)) return;
    files.add(rel);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
    for (const s of source.statements) {
      let spec: ts.Expression | undefined;
      if (ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly) spec = s.moduleSpecifier;
      else if (ts.isExportDeclaration(s) && !s.isTypeOnly) spec = s.moduleSpecifier;
      if (spec === undefined || !ts.isStringLiteral(spec)) continue;
      const text = spec.text;
      if (text.startsWith('.')) visit(resolve(dirname(file), text.replace(/\.js$/, '.ts')));
      else packages.add(text.startsWith('@') ? text.split('/').slice(0, 2).join('/') : (text.split('/')[0] as string));
    }
  };
  visit(entry);
  return { files: [...files], packages: [...packages] };
}
