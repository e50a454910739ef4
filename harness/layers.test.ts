import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './testing/shared.js';

/** One layer of the code base: folders (project-relative, every one that holds .ts files) that may import each other. */
interface Layer {
  readonly name: string;
  readonly folders: readonly string[];
}

/**
 * The layers of harness/, arms/ and evalset/, lowest first. A runtime file may import from its own layer and
 * the layers below it, never from a higher one (type-only and dynamic imports included), so each layer can be
 * used and tested without the ones above it. The order follows the imports as they are:
 *
 * - foundation: errors, log and JsonValue (harness/*.ts), helpers, the kernel sets' loader;
 * - kernels: statistics, the PPR graph kernel, the content-addressed cache;
 * - eval sets: the vocabulary (Corpus, Query, Qrels, Run in its Map form and its tie order), readers and TREC
 *   formats;
 * - measures: trec_eval's measures and fusion, which read Qrels and Runs through the eval-set layer (hence
 *   above it), with the Run's typed form (PackedRun) and its one conversion each way (harness/fusion/run-form.ts);
 * - the trec_eval clone (`harness eval`'s evaluator: streamed qrels and runs, worker threads, fast kernels),
 *   which computes the measures of the registry (hence above them) and which only the cli uses;
 * - arms and the recipes they share (stop words, entity resolver);
 * - comparisons: paired tests over measured runs;
 * - systems and config: the pipeline nodes, and the config loader that plans them;
 * - plan execution: runPlan, the one way anything gets runs (probe, run cache, serial or worker threads);
 * - decision: the decision stage, from a scored study to one Decision (comparisons, gate, judge health, holes,
 *   warnings, the verdict sentence and its exit code): what every rendering and the CLI read, and never render;
 * - runs: ablate, answer (readers, answer judges, answers files), judge (which pools an ablation's runs), report (renders a decision, decides nothing), kappa,
 *   init, evidence (reads human labels for the decision stage);
 * - cli: the commands, `harness evalset build` included.
 */
const LAYERS: readonly Layer[] = [
  { name: 'foundation', folders: ['harness', 'harness/util'] },
  { name: 'kernels', folders: ['harness/stats', 'harness/graph', 'harness/cache'] },
  { name: 'eval sets', folders: ['evalset', 'evalset/adapters', 'evalset/datasets'] },
  { name: 'measures', folders: ['harness/metrics', 'harness/metrics/kernels', 'harness/fusion'] },
  { name: 'trec_eval clone', folders: ['harness/trec-eval', 'harness/trec-eval/fast'] },
  {
    name: 'arms',
    folders: [
      'arms',
      'arms/bm25',
      'arms/dense',
      'arms/dense/hosted',
      'arms/fake',
      'arms/graph',
      'arms/hash-embed',
      'arms/remote',
      'arms/remote/command',
      'arms/remote/http',
      'arms/remote/mcp',
      'arms/postgres',
      'arms/run-file',
      'arms/sqlite-fts5',
      'harness/recipes',
      'harness/llm',
    ],
  },
  { name: 'comparisons', folders: ['harness/compare'] },
  { name: 'systems and config', folders: ['harness/systems', 'harness/config'] },
  { name: 'plan execution', folders: ['harness/execution'] },
  { name: 'decision', folders: ['harness/decision'] },
  { name: 'runs', folders: ['harness/ablate', 'harness/answer', 'harness/judge', 'harness/report', 'harness/kappa', 'harness/init', 'harness/evidence'] },
  { name: 'cli', folders: ['harness/cli', 'harness/evalset-build'] },
];

/** Folders of test code only (helpers, fixtures): outside the layers, and no runtime file may import them. */
const TEST_ONLY: readonly string[] = ['harness/testing', 'harness/report/testdata'];

const ROOT_EXPORT = "the package's root export (package.json '.') re-exports the library layers";
/** Upward imports allowed, `file -> imported file`, each with its reason. */
const EXCEPTIONS: Readonly<Record<string, string>> = {
  'harness/index.ts -> evalset/index.ts': ROOT_EXPORT,
  'harness/index.ts -> harness/metrics/index.ts': ROOT_EXPORT,
  'harness/index.ts -> harness/stats/index.ts': ROOT_EXPORT,
};

const TREES = ['harness', 'arms', 'evalset'] as const;

/** file -> the project files it imports (relative imports only), paths project-relative. */
type ImportGraph = ReadonlyMap<string, readonly string[]>;

/** Relative specifiers a TypeScript text imports: static, type-only, re-exported, side-effect and dynamic. */
function importSpecifiers(text: string): string[] {
  const pattern = /\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*['"](\.{1,2}\/[^'"]+)['"]/g;
  return [...text.matchAll(pattern)].map((m) => (m[1] ?? m[2] ?? m[3]) as string);
}

/** The project-relative .ts path a specifier of `file` names (`./x.js` is `./x.ts` in the sources). */
function resolveImport(file: string, spec: string): string {
  return relative(PROJECT_ROOT, resolve(PROJECT_ROOT, dirname(file), spec)).replace(/\.js$/, '.ts');
}

/** Every .ts file under `dir` (project-relative), node_modules left out. */
function tsFiles(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function projectGraph(): ImportGraph {
  const files = TREES.flatMap((t) => tsFiles(t));
  return new Map(files.map((f) => [f, importSpecifiers(readFileSync(join(PROJECT_ROOT, f), 'utf8')).map((s) => resolveImport(f, s))]));
}

const inFolder = (file: string, folder: string) => file.startsWith(`${folder}/`);

/** Test code: `*.test.ts`, a `testing.ts` helper, or a file in a test-only folder. */
function isTestCode(file: string, testOnly: readonly string[]): boolean {
  return file.endsWith('.test.ts') || basename(file) === 'testing.ts' || testOnly.some((f) => inFolder(file, f));
}

/** Folders holding .ts files that neither a layer nor the test-only list names. */
function unlistedFolders(folders: Iterable<string>, layers: readonly Layer[], testOnly: readonly string[]): string[] {
  const listed = new Set([...layers.flatMap((l) => l.folders), ...testOnly]);
  return [...new Set(folders)]
    .filter((f) => !listed.has(f))
    .sort()
    .map((f) => `${f}/ holds .ts files but is in no layer: add it to LAYERS (or TEST_ONLY) in harness/layers.test.ts`);
}

/** Imports of runtime files into a folder of a higher layer, less the listed exceptions. */
function upwardImports(graph: ImportGraph, layers: readonly Layer[], testOnly: readonly string[], exceptions: Readonly<Record<string, string>>): string[] {
  const level = new Map(layers.flatMap((l, i) => l.folders.map((f) => [f, i] as const)));
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const from = level.get(dirname(file));
    if (from === undefined || isTestCode(file, testOnly)) continue;
    for (const target of targets) {
      const to = level.get(dirname(target));
      const edge = `${file} -> ${target}`;
      if (to !== undefined && to > from && !(edge in exceptions))
        found.push(`${edge}: layer "${layers[from]?.name}" imports layer "${layers[to]?.name}" above it`);
    }
  }
  return found;
}

/** Imports of runtime files into test code, or out of harness/, arms/ and evalset/ (scripts/ are tools, not the library). */
function testOrToolImports(graph: ImportGraph, testOnly: readonly string[]): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    if (isTestCode(file, testOnly)) continue;
    for (const target of targets) {
      if (!TREES.some((t) => inFolder(target, t))) found.push(`${file} -> ${target}: runtime code imports from outside ${TREES.join('/, ')}/`);
      else if (isTestCode(target, testOnly)) found.push(`${file} -> ${target}: runtime code imports test code`);
    }
  }
  return found;
}

/** Imports of any file, tests and test helpers included, from scripts/: the tools build on the library, never the reverse. */
function scriptImports(graph: ImportGraph): string[] {
  return [...graph].flatMap(([file, targets]) => targets.filter((t) => inFolder(t, 'scripts')).map((t) => `${file} -> ${t}: imports from scripts/`));
}

/** One cycle per back edge a depth-first walk meets, as `a.ts > b.ts > a.ts`; imports of files outside the graph are left out. */
function importCycles(graph: ImportGraph): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const found: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].join(' > '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

describe('layers', () => {
  const graph = projectGraph();
  const folders = new Set([...graph.keys()].map((f) => dirname(f)));

  it('lists every folder of harness/, arms/ and evalset/ that holds .ts files', () => {
    expect(unlistedFolders(folders, LAYERS, TEST_ONLY)).toEqual([]);
  });

  it('lists no folder that holds no .ts files', () => {
    expect([...LAYERS.flatMap((l) => l.folders), ...TEST_ONLY].filter((f) => !folders.has(f))).toEqual([]);
  });

  it('has no runtime file importing from a higher layer', () => {
    expect(upwardImports(graph, LAYERS, TEST_ONLY, EXCEPTIONS)).toEqual([]);
  });

  it('has every exception still an upward import', () => {
    const upward = new Set(upwardImports(graph, LAYERS, TEST_ONLY, {}).map((v) => v.split(':')[0]));
    expect(Object.keys(EXCEPTIONS).filter((e) => !upward.has(e))).toEqual([]);
  });

  it('has no runtime file importing scripts/ or test code', () => {
    expect(testOrToolImports(graph, TEST_ONLY)).toEqual([]);
  });

  it('has no file, test code included, importing scripts/', () => {
    expect(scriptImports(graph)).toEqual([]);
  });

  it('has no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });
});

describe('the layer checker', () => {
  const layers: readonly Layer[] = [
    { name: 'low', folders: ['lib', 'lib/sub'] },
    { name: 'high', folders: ['app'] },
  ];

  it('reads static, type-only, re-exported, side-effect and dynamic imports, not packages', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export * from './c.js';",
      "import './d.js';",
      "const e = await import('./e.js');",
      "import {\n  f,\n} from './f.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importSpecifiers(text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js']);
  });

  it('names a folder the table does not list', () => {
    expect(unlistedFolders(['lib', 'lib/sub', 'app', 'lib/new'], layers, [])).toEqual([
      'lib/new/ holds .ts files but is in no layer: add it to LAYERS (or TEST_ONLY) in harness/layers.test.ts',
    ]);
  });

  it('reports an upward import, type-only or dynamic alike, but not one within a layer, an exception or a test', () => {
    const graph: ImportGraph = new Map([
      ['lib/a.ts', ['app/main.ts', 'lib/sub/b.ts']],
      ['lib/sub/b.ts', ['lib/a.ts']],
      ['lib/c.ts', ['app/main.ts']],
      ['lib/a.test.ts', ['app/main.ts']],
      ['app/main.ts', ['lib/a.ts']],
    ]);
    expect(upwardImports(graph, layers, [], { 'lib/c.ts -> app/main.ts': 'a reason' })).toEqual([
      'lib/a.ts -> app/main.ts: layer "low" imports layer "high" above it',
    ]);
  });

  it('reports runtime imports of scripts/ and test helpers, not those of tests', () => {
    const graph: ImportGraph = new Map([
      ['harness/a.ts', ['scripts/tool.ts', 'harness/x/testing.ts', 'harness/testing/temp.ts', 'harness/b.ts']],
      ['harness/a.test.ts', ['scripts/tool.ts', 'harness/testing/temp.ts']],
      ['harness/x/testing.ts', ['scripts/tool.ts']],
    ]);
    expect(testOrToolImports(graph, ['harness/testing'])).toEqual([
      'harness/a.ts -> scripts/tool.ts: runtime code imports from outside harness/, arms/, evalset/',
      'harness/a.ts -> harness/x/testing.ts: runtime code imports test code',
      'harness/a.ts -> harness/testing/temp.ts: runtime code imports test code',
    ]);
    expect(scriptImports(graph)).toEqual([
      'harness/a.ts -> scripts/tool.ts: imports from scripts/',
      'harness/a.test.ts -> scripts/tool.ts: imports from scripts/',
      'harness/x/testing.ts -> scripts/tool.ts: imports from scripts/',
    ]);
  });

  it('finds a cycle, and none in a graph without one', () => {
    const graph: ImportGraph = new Map([
      ['a.ts', ['b.ts', 'zod.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCycles(graph)).toEqual(['a.ts > b.ts > c.ts > a.ts']);
    expect(importCycles(new Map([...graph, ['c.ts', []]]))).toEqual([]);
  });
});
