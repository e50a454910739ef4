import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../harness/testing/shared.js';
import { type Loopback, startLoopback } from '../harness/testing/loopback.js';

/**
 * The package as a user gets it: `npm pack` of this checkout, installed with npm into a fresh project in the
 * temp directory, and its `harness` binary run as a child process. Nothing here imports the source.
 */

const execFileP = promisify(execFile);

/** What one command printed and how it ended. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A fresh project with the packed harness installed in its node_modules. */
export interface Installed {
  /** The project folder (cwd of every command unless told otherwise). */
  readonly dir: string;
  /** `<dir>/node_modules/harness`: the installed package. */
  readonly pkg: string;
  /** What `npm install` printed. */
  readonly install: Ran;
  /** Runs the installed `harness` binary. */
  harness(args: readonly string[], opts?: RunOptions): Promise<Ran>;
  /** Removes the project folder. */
  remove(): void;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Written to stdin, then stdin is closed. */
  readonly input?: string;
  readonly timeoutMs?: number;
}

/** Variables the unit tests set (vitest.config.ts) that a user's shell does not: the installed binary runs without. */
const TEST_ONLY_ENV = new Set(['INIT_CWD', 'LANCEDB_LOG', 'ORT_DISABLE_TELEMETRY']);

/**
 * The environment of a child command: this process's, less npm's own `npm_*` variables and the tests' own. `npm test` sets
 * `npm_config_local_prefix` and friends to this checkout, and an `npm install` that inherited them would
 * install into the checkout instead of the study.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_') && !TEST_ONLY_ENV.has(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

/** Runs `command args` and resolves with its exit code and output, whatever the code. */
export function run(command: string, args: readonly string[], opts: RunOptions & { cwd: string }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => void (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 300_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal === null ? 1 : 128), stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** One failed step's story: the command, its exit code and everything it printed. */
export function explain(step: string, args: readonly string[], ran: Ran): string {
  return `step "${step}": harness ${args.join(' ')} exited ${ran.code}\n--- stdout ---\n${ran.stdout.slice(-4000)}\n--- stderr ---\n${ran.stderr.slice(-8000)}`;
}

/** Runs a step and throws with its story unless it exits `code` (default 0). */
export async function step(installed: Installed, name: string, args: readonly string[], opts: RunOptions & { code?: number } = {}): Promise<Ran> {
  const ran = await installed.harness(args, opts);
  if (ran.code !== (opts.code ?? 0)) throw new Error(`expected exit ${opts.code ?? 0}; ${explain(name, args, ran)}`);
  return ran;
}

/** What package.json's `prepack` runs after the build to drop `prepare` from the packed package.json. */
const DROP_PREPARE = ['pkg', 'delete', 'scripts.prepare'] as const;

/**
 * `npm pack` of this checkout's built package into `dest`, as a user's `npm pack` makes it; the tarball's path.
 * The build is already there (npm test builds first), so the pack runs with --ignore-scripts, which also skips
 * `prepack` (and test files packing at once must not edit the shared package.json): the packed package.json
 * is then made the way `prepack` makes it, by the same npm command, in a copy, and packed again.
 */
export async function pack(dest: string): Promise<string> {
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'bin.js'))) {
    throw new Error('dist/ is not built: run `npm run build` (npm test builds first)');
  }
  const scripts = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  if (!scripts['prepack']?.endsWith(`npm ${DROP_PREPARE.join(' ')}`))
    throw new Error(`package.json's prepack no longer ends with npm ${DROP_PREPARE.join(' ')}`);
  const raw = await npmPack(PROJECT_ROOT, dest);
  const stage = join(dest, 'stage');
  await mkdir(stage);
  await execFileP('tar', ['xzf', raw, '-C', stage]);
  rmSync(raw);
  await execFileP('npm', [...DROP_PREPARE], { cwd: join(stage, 'package'), env: cleanEnv() });
  const tarball = await npmPack(join(stage, 'package'), dest);
  rmSync(stage, { recursive: true, force: true });
  return tarball;
}

/** `npm pack --ignore-scripts` of the package in `dir` into `dest`; the tarball's path. */
async function npmPack(dir: string, dest: string): Promise<string> {
  const { stdout } = await execFileP('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dest], {
    cwd: dir,
    env: cleanEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  const [info] = JSON.parse(stdout) as { filename: string }[];
  if (info === undefined) throw new Error('npm pack wrote no tarball');
  return join(dest, basename(info.filename));
}

/**
 * better-sqlite3's prebuilt binary for this platform, as its install script (prebuild-install) downloads it from
 * the project's GitHub releases: a tar.gz of `build/Release/better_sqlite3.node`. Served from 127.0.0.1 out of
 * this checkout's own build, so the study's install takes the path users take (download a prebuilt binary)
 * instead of compiling SQLite for two minutes, and needs no network.
 */
async function prebuildHost(study: string, work: string): Promise<{ host: Loopback; cached: string }> {
  const pkgDir = join(PROJECT_ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  const tarball = join(work, 'prebuild.tar.gz');
  await execFileP('tar', ['czf', tarball, '-C', pkgDir, 'build/Release/better_sqlite3.node']);
  const body = readFileSync(tarball);
  const libc =
    process.platform === 'linux' && !(process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })?.header?.glibcVersionRuntime ? 'musl' : '';
  const file = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
  const host = await startLoopback((req) => (req.path === `/v${version}/${file}` ? { body } : { status: 404, body: 'no such prebuild' }));
  const url = `${host.url}/v${version}/${file}`;
  // prebuild-install keeps each download in npm's cache under a digest of its URL; the test removes its own.
  const cacheRoot = process.env['npm_config_cache'] ?? join(homedir(), '.npm');
  const cached = join(cacheRoot, '_prebuilds', `${createHash('sha512').update(url).digest('hex').slice(0, 6)}-${file.replace(/[^a-zA-Z0-9.]+/g, '-')}`);
  // prebuild-install reads its options with rc, which finds `.prebuild-installrc` in the study's folder (an
  // `npm_config_*` variable would make npm warn, and a shell drops variable names with a hyphen).
  await writeFile(join(study, '.prebuild-installrc'), `download=${url}\n`);
  return { host, cached };
}

/** The package.json fields a user's project needs for harness: install-script approvals and overrides. */
export interface StudyFields {
  readonly allowScripts: Readonly<Record<string, boolean>>;
  readonly overrides?: Readonly<Record<string, unknown>>;
}

/**
 * The fields README.md tells a user to put in their project's package.json: the JSON block after the line
 * `<!-- study package.json -->`. The suite installs with exactly these, so the README cannot drift from what works.
 */
export function readmeStudyFields(): StudyFields {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const block = /<!-- study package\.json -->\s*```json\n([\s\S]*?)\n```/.exec(readme);
  if (block?.[1] === undefined) throw new Error('README.md has no ```json block after <!-- study package.json -->');
  return JSON.parse(block[1]) as StudyFields;
}

/** Packs this checkout and installs the tarball (and `add`: the dense packages) into a fresh project in the temp dir. */
export async function installPackage(add: readonly string[] = []): Promise<Installed> {
  const dir = await mkdtemp(join(tmpdir(), 'harness-e2e-'));
  const work = join(dir, '.e2e');
  await mkdir(work);
  const tarball = await pack(work);
  const fields = readmeStudyFields();
  // Exactly the README's fields: the packed package.json has no `prepare`, so npm asks to approve no script of harness's.
  const study = { name: 'harness-e2e-study', private: true, type: 'module', ...fields };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(study, null, 2)}\n`);
  const prebuild = await prebuildHost(dir, work);
  let install: Ran;
  try {
    install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...add], {
      cwd: dir,
      env: cleanEnv(),
      timeoutMs: 600_000,
    });
  } finally {
    await prebuild.host.close();
    rmSync(prebuild.cached, { force: true });
  }
  if (install.code !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`npm install of the packed tarball exited ${install.code}\n${install.stdout}\n${install.stderr}`);
  }
  const bin = join(dir, 'node_modules', '.bin', 'harness');
  return {
    dir,
    pkg: join(dir, 'node_modules', 'harness'),
    install,
    harness: (args, opts = {}) => run(bin, args, { ...opts, cwd: opts.cwd ?? dir, env: cleanEnv(opts.env) }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
