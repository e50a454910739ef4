import { accessSync, constants, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { idPattern } from '../config/schema.js';
import { HarnessError, UsageError } from '../errors.js';
import { projectRoot } from '../util/project.js';

/**
 * `harness init`: a **study** is a folder holding one ablation config (`study.yaml`) and, under `data/`, what
 * must stay private: the memory store the config's eval set names, the judgments, the report folders and the
 * cache. `.gitignore` ignores `data/`, so the config can be committed and shared while nothing it reads or
 * writes can be. The store starts as a copy of the bundled example, so the study runs as soon as it exists.
 */

/** The config file a study is run by. */
export const STUDY_CONFIG = 'study.yaml';
/** The bundled example the sample store is copied from, relative to the package root. */
const SAMPLE_DIR = 'evalset/examples/alex-memory';
const SAMPLE_FILES = ['corpus.jsonl', 'queries.jsonl', 'README.md'] as const;
/** Where the sample store goes, relative to the study folder. */
const STORE_DIR = 'data/store';
/** The config format's JSON Schema in the package (scripts/config-schema.ts writes it). */
const SCHEMA_PATH = 'configs/config.schema.json';

/** What the `.gitignore` of a study must hold, and the lines that already mean it. */
const IGNORED = { rule: 'data/', same: ['data', 'data/', '/data', '/data/', 'data/**', '/data/**'] } as const;
const IGNORE_COMMENT = '# harness study: the memory store, judgments, reports and cache stay private';

export interface StudyResult {
  /** The study folder, absolute. */
  readonly dir: string;
  readonly config: string;
  readonly name: string;
  /** Files written, relative to `dir`. */
  readonly written: readonly string[];
  readonly gitignore: 'created' | 'appended' | 'unchanged';
  /** The `$schema` path the config's first line names (relative to the config), or undefined without one. */
  readonly schema: string | undefined;
}

/** A report name from a folder name: the id rules of a config's `name:`, else `study`. */
export function studyName(dir: string): string {
  const name = basename(resolve(dir))
    .replace(/[^A-Za-z0-9._+=-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/-+$/, '');
  return idPattern.test(name) ? name : 'study';
}

/** A path as a YAML comment or config value names it: forward slashes on every platform. */
function portable(p: string): string {
  return p.split(sep).join('/');
}

/** Top-level YAML files of `dir` that read as a harness config (a mapping with evalset: and arms:). */
function harnessConfigsIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/i.test(f) && statSync(join(dir, f)).isFile())
    .filter((f) => {
      try {
        const doc: unknown = parse(readFileSync(join(dir, f), 'utf8'));
        return doc !== null && typeof doc === 'object' && !Array.isArray(doc) && 'evalset' in doc && 'arms' in doc;
      } catch {
        return false;
      }
    });
}

/**
 * Refuses (UsageError, exit 2) a folder that is a file, holds a harness config, or holds any path the
 * scaffold writes; nothing is written then. Other files (a README, a .gitignore, code) are left alone.
 */
function checkTarget(dir: string, shown: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new UsageError(`init: ${shown} is a file, not a folder; name a new or existing folder`);
  const clashes = [...new Set([STUDY_CONFIG, ...harnessConfigsIn(dir), STORE_DIR])].filter((p) => existsSync(join(dir, p)));
  if (clashes.length > 0) {
    throw new UsageError(
      `init: ${shown} already holds ${clashes.map((c) => `${shown === '.' ? '' : `${portable(shown)}/`}${c}`).join(', ')}; init writes nothing over them`,
      {
        hint: `run the study that is there (harness ablate --config <its config>), or init a new folder: harness init ${shown === '.' ? 'my-study' : `${portable(shown)}-2`}`,
      },
    );
  }
}

/** The error codes of a folder the user may not write to: the fix is the folder or its permissions, not the input. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS']);

/** A write `init` could not make, naming `folder` (exit 1); anything else is rethrown as it is. */
function notWritable(folder: string, err: unknown): HarnessError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === undefined || (!UNWRITABLE.has(code) && code !== 'ENOSPC')) throw err;
  const why = code === 'ENOSPC' ? 'no space left on the device' : code === 'EROFS' ? 'read-only file system' : 'permission denied';
  return new HarnessError(`init: cannot write in ${folder}: ${why} (${code})`, {
    hint: 'init a folder you can write to, or make this one writable (ls -ld shows its owner and mode)',
    cause: err,
  });
}

/**
 * Refuses a target this user cannot write into before anything is written: the folder itself, or the nearest
 * folder above it that exists (where it would be created).
 */
function checkWritable(dir: string): void {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw notWritable(at, err);
  }
}

/** Adds the `data/` rule to `dir/.gitignore`, creating it if absent; never writes a line that is already there. */
function ignoreData(dir: string): StudyResult['gitignore'] {
  const file = join(dir, '.gitignore');
  const old = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const lines = (old ?? '').split(/\r?\n/).map((l) => l.trim());
  if (lines.some((l) => (IGNORED.same as readonly string[]).includes(l))) return 'unchanged';
  const add = [...(lines.includes(IGNORE_COMMENT) ? [] : [IGNORE_COMMENT]), IGNORED.rule];
  const sep = old === undefined || old === '' || old.endsWith('\n') ? '' : '\n';
  writeFileSync(file, `${old ?? ''}${sep}${add.join('\n')}\n`);
  return old === undefined ? 'created' : 'appended';
}

/** The `$schema` reference from the study folder to the installed package's config schema, if it is there. */
function schemaReference(dir: string): string | undefined {
  const schema = join(projectRoot(), SCHEMA_PATH);
  if (!existsSync(schema)) return undefined;
  const rel = relative(dir, schema);
  // On another drive (Windows) there is no relative path: a file URL then.
  return isAbsolute(rel) ? pathToFileURL(schema).href : portable(rel);
}

/** The config of a new study: lexical arms over `data/store`, everything it writes under `data/`. */
export function studyConfig(name: string, schema: string | undefined): string {
  // A name YAML would read as another type (2025, true, null) is quoted.
  const yamlName = parse(name) === name ? name : JSON.stringify(name);
  return `${schema === undefined ? '' : `# yaml-language-server: $schema=${schema}\n`}# A retrieval study, scaffolded by \`harness init\`. Run it, from this folder, with
#   harness ablate --config ${STUDY_CONFIG}
# Paths below are relative to this file. Every key is described in harness's README ("An ablation config"); an
# editor with the YAML language server completes and checks this file against the schema on the first line.

# The report folder is data/reports/<name>-<configHash8>/.
name: ${yamlName}
description: Lexical retrieval on a memory store; does SQLite FTS5, which many memory stores ship, match Lucene-style BM25?

# The eval set: a folder in harness's memory format. corpus.jsonl (or corpus.csv) holds one memory a line (id,
# text, date, category, importance, sensitive); queries.jsonl one question a line (id, text, stratum, qrels:
# memory id -> grade 0-3). data/store starts as a SAMPLE, the synthetic store of a fictional user bundled with
# harness, so the study runs as it is. To study your own store, put its corpus.jsonl and a queries.jsonl in
# data/store instead, or have questions written for it and point path: at their folder:
#   harness evalset build --corpus data/store/corpus.jsonl --out data/store-eval --model M --judge-model J ...
# and check a store with: harness evalset inspect --format memory --path data/store
evalset:
  format: memory
  path: ${STORE_DIR}

measures: [nDCG@10, R@10, R-all@10, RR, AP, Judged@10]   # \`harness measures\` lists every measure
topK: 100                                               # documents each arm returns per query

# The arms: lexical, offline, no API key. To add one, add an entry with a new id; \`harness arms\` lists every
# kind and its params. A grid sweeps params, one system per point, e.g.
#   - { id: bm25-sweep, kind: bm25, params: { preset: lucene }, grid: { k1: [0.6, 0.9, 1.2], b: [0.4, 0.75] } }
# Dense arms (onnx-embed, use-lite) need optional packages, hosted ones (voyage-embed, openai-embed) an API key
# and a sensitive: policy; the system you ship joins as an mcp, http, command or run-file arm.
arms:
  - id: bm25
    kind: bm25
    label: BM25 (Lucene preset, k1 0.9, b 0.4)
    params: { preset: lucene, k1: 0.9, b: 0.4 }
  - id: fts5
    kind: sqlite-fts5
    label: SQLite FTS5 bm25(), porter tokenizer
    params: { tokenizer: porter }

# Systems computed from other systems' runs, e.g. reciprocal rank fusion of both arms:
# systems:
#   - { id: rrf, kind: fuse, inputs: [bm25, fts5], params: { method: rrf } }

# Each system is compared with the baseline per stratum (paired tests, corrected p); the gate says whether the
# candidate should replace it: ADOPT, REJECT or INCONCLUSIVE.
compare: { baseline: bm25 }
gate: { candidate: fts5, measure: nDCG@10, rule: gain-overall-no-loss }

# What the study writes, relative to this file, all under data/ (which .gitignore keeps out of git: reports
# quote your questions and memories).
output: data/reports            # one folder per config: report.md, report.html, CSVs, runs, manifest.json
cache: data/cache               # finished runs; a rerun computes nothing (harness cache prune --config ${STUDY_CONFIG})
judgments: data/judgments       # written by harness judge, read by harness kappa and judged qrels

# Judging: qrels have holes (memories in a system's top 10 nobody graded; the report's Judged@10 says how many).
# Uncomment judge: for a local OpenAI-compatible server (llama-server, Ollama, vLLM), then
#   harness judge --config ${STUDY_CONFIG}                 # an LLM grades the pool's ungraded pairs
#   harness kappa --judgments data/judgments          # grade a sample yourself; trust the judge on PASS
# and uncomment qrels: gold+judged to score on both.
# judge:
#   model: qwen2.5-7b-instruct          # as the server names it; not the model that wrote the questions
#   baseURL: http://127.0.0.1:8080/v1   # llama-server's default; Ollama: http://127.0.0.1:11434/v1
#   local: true                         # only a judge on this machine is sent memories flagged sensitive
# qrels: gold+judged
`;
}

/**
 * Scaffolds a study in `target` (created if missing): the sample store under data/store, study.yaml, and the
 * data/ rule in .gitignore. Throws UsageError before writing anything when the folder holds a config or a path
 * it would write.
 */
export function initStudy(target: string, opts: { readonly cwd: string; readonly name?: string }): StudyResult {
  const dir = resolve(opts.cwd, target);
  const shown = relative(opts.cwd, dir) || '.';
  const name = opts.name ?? studyName(dir);
  if (!idPattern.test(name)) throw new UsageError(`init: --name ${name}: use letters, digits, '.', '_', '-', '+' and '=', starting with a letter or digit`);
  checkTarget(dir, shown);
  const sample = join(projectRoot(), SAMPLE_DIR);
  for (const f of SAMPLE_FILES) {
    if (!existsSync(join(sample, f))) throw new UsageError(`init: the bundled example ${SAMPLE_DIR}/${f} is missing from this installation of harness`);
  }

  checkWritable(dir);
  try {
    return scaffold(dir, sample, name);
  } catch (err) {
    // What the check above cannot see (root over a read-only mount, a full disk) still names the folder.
    throw notWritable(dir, err);
  }
}

/** Writes the study into `dir`: the sample store, the config, the .gitignore rule. */
function scaffold(dir: string, sample: string, name: string): StudyResult {
  mkdirSync(join(dir, STORE_DIR), { recursive: true });
  const written: string[] = [];
  for (const f of SAMPLE_FILES) {
    copyFileSync(join(sample, f), join(dir, STORE_DIR, f));
    written.push(`${STORE_DIR}/${f}`);
  }
  const schema = schemaReference(dir);
  // 'wx': a config that appeared since the check is never overwritten.
  writeFileSync(join(dir, STUDY_CONFIG), studyConfig(name, schema), { flag: 'wx' });
  written.push(STUDY_CONFIG);
  const gitignore = ignoreData(dir);
  if (gitignore !== 'unchanged') written.push('.gitignore');
  return { dir, config: join(dir, STUDY_CONFIG), name, written, gitignore, schema };
}

/** What `harness init` prints: what was made, then the commands to run next (paths relative to `cwd`). */
export function formatStudy(r: StudyResult, cwd: string): string {
  const rel = (p: string) => portable(relative(cwd, join(r.dir, p)) || '.');
  const config = rel(STUDY_CONFIG);
  const cmds: [string, string][] = [
    [`harness ablate --config ${config}`, `run the arms; the report goes to ${rel('data/reports')}/${r.name}-<configHash8>/`],
    [`harness evalset inspect --format memory --path ${rel(STORE_DIR)}`, 'check a store you put there'],
    [`harness judge --config ${config}`, "with the config's judge: block, an LLM grades the pool's holes"],
    [`harness kappa --judgments ${rel('data/judgments')}`, 'grade a sample yourself before trusting the judge'],
    [`harness report ${rel('data/reports')}/${r.name}-<configHash8>`, 're-render a report folder'],
  ];
  const width = Math.max(...cmds.map(([c]) => c.length));
  const gitignore = {
    created: 'created; ignores data/',
    appended: 'data/ added',
    unchanged: 'already ignores data/',
  }[r.gitignore];
  const files: [string, string][] = [
    [
      config,
      `the config: lexical arms over the sample store; its comments say what to change${r.schema === undefined ? '' : " (editors check it against harness's config schema)"}`,
    ],
    [`${rel(STORE_DIR)}/`, "a sample memory store (synthetic: harness's bundled example); replace it with yours"],
    [rel('.gitignore'), `${gitignore}: the store, judgments, reports and cache stay out of git`],
  ];
  const fileWidth = Math.max(...files.map(([f]) => f.length));
  return [
    `Created study ${r.name} in ${rel('.')}:`,
    ...files.map(([f, what]) => `  ${f.padEnd(fileWidth)}  ${what}`),
    '',
    'Next:',
    ...cmds.map(([c, what]) => `  ${c.padEnd(width)}  ${what}`),
    '',
  ].join('\n');
}
