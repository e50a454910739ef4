import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { studyConfig, studyName } from '../init/study.js';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';
import { projectRoot } from '../util/project.js';

const SCHEMA = join(projectRoot(), 'configs', 'config.schema.json');

/** Runs the CLI in `cwd`; `err` is what it wrote to stderr and the logger. */
async function cli(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  const r = await runCaptured(args, cwd);
  return { code: r.code, out: r.out, err: [...r.log, r.stderr].join('\n') };
}

describe('harness init', () => {
  it('scaffolds a study that harness ablate runs as it is, writing only under data/', async () => {
    const parent = tempDir('init');
    const made = await cli(['init', 'my-study'], parent);
    expect(made.code, made.err).toBe(0);
    expect(made.out).toMatch(/^ {2}harness ablate --config my-study\/study\.yaml /m);
    expect(made.out).toMatch(/harness kappa --judgments my-study\/data\/judgments/);
    const dir = join(parent, 'my-study');
    expect(readdirSync(dir).sort()).toEqual(['.gitignore', 'data', 'study.yaml']);
    expect(readdirSync(join(dir, 'data', 'store')).sort()).toEqual(['README.md', 'corpus.jsonl', 'queries.jsonl']);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8').split('\n')).toContain('data/');

    // The config names the installed package's schema on its first line, and the schema accepts it.
    const text = readFileSync(join(dir, 'study.yaml'), 'utf8');
    const first = /^# yaml-language-server: \$schema=(\S+)\n/.exec(text);
    expect(first, text.slice(0, 200)).not.toBeNull();
    expect(resolve(dir, first![1]!)).toBe(SCHEMA);
    expect(existsSync(resolve(dir, first![1]!))).toBe(true);
    const validate = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, validateFormats: false }).compile(
      JSON.parse(readFileSync(SCHEMA, 'utf8')) as object,
    );
    const cfg = parse(text) as Record<string, unknown>;
    expect(validate(cfg), JSON.stringify(validate.errors)).toBe(true);
    expect(cfg).toMatchObject({ name: 'my-study', output: 'data/reports', cache: 'data/cache', judgments: 'data/judgments' });
    expect(cfg['arms']).toEqual([expect.objectContaining({ kind: 'bm25' }), expect.objectContaining({ kind: 'sqlite-fts5' })]);

    const ran = await cli(['ablate', '--config', 'my-study/study.yaml'], parent);
    expect(ran.code, ran.err).toBe(0);
    expect(ran.out).toMatch(/report: my-study\/data\/reports\/my-study-[0-9a-f]{8}\/report\.md/);
    const reports = readdirSync(join(dir, 'data', 'reports'));
    expect(reports).toEqual([expect.stringMatching(/^my-study-[0-9a-f]{8}$/)]);
    for (const f of ['report.json', 'report.md', 'report.html', 'summary.csv', 'manifest.json'])
      expect(existsSync(join(dir, 'data', 'reports', reports[0]!, f)), f).toBe(true);
    expect(existsSync(join(dir, 'data', 'cache'))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['.gitignore', 'data', 'study.yaml']);
  });

  it('scaffolds into the current folder by default, named after it', async () => {
    const dir = join(tempDir('init'), 'Notes 2025');
    mkdirSync(dir);
    const made = await cli(['init'], dir);
    expect(made.code, made.err).toBe(0);
    expect(made.out).toMatch(/^ {2}harness ablate --config study\.yaml /m);
    expect(parse(readFileSync(join(dir, 'study.yaml'), 'utf8'))).toMatchObject({ name: 'Notes-2025' });
  });

  it('refuses (exit 2) a folder holding a study, a harness config or a store, writing nothing', async () => {
    const parent = tempDir('init');
    const cases: [string, Record<string, string>, RegExp][] = [
      ['has-study', { 'study.yaml': 'name: x\n' }, /already holds has-study\/study\.yaml/],
      ['has-config', { 'mine.yml': 'name: x\nevalset: { format: memory, path: s }\narms: []\n' }, /already holds has-config\/mine\.yml/],
      ['has-store', { 'data/store/corpus.jsonl': '{"id":"m1","text":"mine"}\n' }, /already holds has-store\/data\/store/],
    ];
    for (const [name, files, message] of cases) {
      const dir = join(parent, name);
      for (const [f, text] of Object.entries(files)) {
        mkdirSync(join(dir, f, '..'), { recursive: true });
        writeFileSync(join(dir, f), text);
      }
      const before = readdirSync(dir, { recursive: true }).sort();
      const r = await cli(['init', name], parent);
      expect(r.code, name).toBe(2);
      expect(r.err, name).toMatch(message);
      expect(readdirSync(dir, { recursive: true }).sort(), name).toEqual(before);
      for (const [f, text] of Object.entries(files)) expect(readFileSync(join(dir, f), 'utf8')).toBe(text);
    }
    writeFileSync(join(parent, 'a-file'), 'x');
    expect(await cli(['init', 'a-file'], parent)).toMatchObject({ code: 2, err: expect.stringMatching(/a-file is a file, not a folder/) });
    expect(await cli(['init', 'new', '--name', 'bad name'], parent)).toMatchObject({ code: 2, err: expect.stringMatching(/--name bad name/) });
    expect(existsSync(join(parent, 'new'))).toBe(false);
  });

  it('adds data/ to an existing .gitignore once and leaves other files alone', async () => {
    const dir = tempDir('init');
    writeFileSync(join(dir, '.gitignore'), 'node_modules');
    writeFileSync(join(dir, 'README.md'), '# my project\n');
    expect((await cli(['init', '.'], dir)).code).toBe(0);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe(
      'node_modules\n# harness study: the memory store, judgments, reports and cache stay private\ndata/\n',
    );
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# my project\n');

    const other = tempDir('init');
    writeFileSync(join(other, '.gitignore'), '/data/\n');
    const r = await cli(['init'], other);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/already ignores data\//);
    expect(readFileSync(join(other, '.gitignore'), 'utf8')).toBe('/data/\n');
  });

  it('names a study after its folder, within the id rules', () => {
    expect(studyName('/x/my-study')).toBe('my-study');
    expect(studyName('/x/Notes 2025!')).toBe('Notes-2025');
    expect(studyName('/x/__')).toBe('study');
    expect(studyName('/x/2025')).toBe('2025');
    // A name YAML would read as a number or a boolean stays a string.
    for (const name of ['2025', 'true', 'my-study']) expect(parse(studyConfig(name, undefined))).toMatchObject({ name });
  });
});

// Root writes anywhere, so as root the refusal is made by the kernel for user nobody, in a child process (the CLI
// through tsx, from this checkout, which nobody must be able to read); as any other user, the folder is read-only.
const asRoot = process.getuid?.() === 0;
const BIN = join(projectRoot(), 'harness', 'cli', 'bin.ts');

/** `harness init` into `target` as user nobody, its TMPDIR (tsx's cache) in `tmp`, which nobody may write. */
function initAsNobody(target: string, tmp: string) {
  const env = { ...process.env, TMPDIR: tmp, HOME: tmp };
  return spawnSync(process.execPath, ['--import', 'tsx', BIN, 'init', target], { cwd: projectRoot(), encoding: 'utf8', env, uid: 65534, gid: 65534 });
}

describe('harness init into a folder this user cannot write', () => {
  it('names the folder and says why (exit 1), not an unexpected failure, and writes nothing', async (ctx) => {
    const parent = tempDir('init-eacces');
    const locked = join(parent, 'locked');
    mkdirSync(locked);
    if (!asRoot) {
      chmodSync(locked, 0o555);
      const r = await cli(['init', join(locked, 'study')], parent);
      chmodSync(locked, 0o755);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`harness: init: cannot write in ${locked}: permission denied (EACCES)`);
      expect(readdirSync(locked)).toEqual([]);
      return;
    }
    // The run's private temp folder lets only its owner in: nobody passes through it for this test only.
    const up = dirname(parent);
    const mode = statSync(up).mode & 0o777;
    const tmp = join(parent, 'tmp');
    mkdirSync(tmp);
    chmodSync(tmp, 0o777);
    chmodSync(parent, 0o755);
    chmodSync(up, mode | 0o001);
    try {
      // Nobody must be able to load this checkout's CLI: a clone inside a mode 700 folder (as `mktemp -d`
      // makes) is closed to it, and then the refusal cannot be tested here.
      const env = { ...process.env, TMPDIR: tmp, HOME: tmp };
      const probe = spawnSync(process.execPath, ['--import', 'tsx', BIN, '--version'], { cwd: projectRoot(), env, uid: 65534, gid: 65534 });
      if (probe.status !== 0) {
        process.stderr.write(`[skip] init into an unwritable folder: user nobody cannot run ${BIN} (a folder above it is closed to others)\n`);
        ctx.skip();
      }
      for (const target of [locked, join(locked, 'new', 'study')]) {
        const r = initAsNobody(target, tmp);
        expect(r.stderr).toContain(`harness: init: cannot write in ${locked}: permission denied (EACCES)`);
        expect(r.stderr).toContain('hint: init a folder you can write to');
        expect(r.stderr).not.toContain('unexpected failure');
        expect(r.status).toBe(1);
      }
      expect(readdirSync(locked)).toEqual([]);
    } finally {
      chmodSync(up, mode);
    }
  }, 30_000);
});
