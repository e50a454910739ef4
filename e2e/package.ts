import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
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

/** Variables the tests set (TEST_ENV in vitest.config.ts) that a user's shell does not: the installed binary runs without. */
const TEST_ONLY_ENV = new Set(['INIT_CWD', 'LANCEDB_LOG', 'ORT_DISABLE_TELEMETRY']);

/**
 * The environment of a child command: this process's, less npm's own `npm_*` variables and the tests' own. `npm run test:e2e` sets
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
 * The build is already there (npm run test:e2e builds first), so the pack runs with --ignore-scripts, which also skips
 * `prepack` (which edits the package.json it packs, here the checkout's own): the packed package.json
 * is then made the way `prepack` makes it, by the same npm command, in a copy, and packed again.
 */
export async function pack(dest: string): Promise<string> {
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'bin.js'))) {
    throw new Error('dist/ is not built: run `npm run build` (npm run test:e2e builds first)');
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

/**
 * The installs the e2e files run from: `light`, the tarball alone; `postgres`, plus what
 * configs/example-postgres.yaml loads; `full`, plus every optional peer. Each is the light one with its peers
 * added by `npm install <peers>`, the command a dense config on the light install tells a user to run.
 */
export type InstallKind = 'light' | 'postgres' | 'full';

/** One install, made once per run by e2e/global-setup.ts: its project folder and what npm printed making it. */
export interface PackedInstall {
  readonly dir: string;
  readonly install: Ran;
}

/** Every install of the run, by kind: what e2e/global-setup.ts provides to the test files. */
export type PackedInstalls = Readonly<Record<InstallKind, PackedInstall>>;

/** The peers configs/example-postgres.yaml needs: PGlite with pgvector, and transformers.js for its GloVe model. */
const POSTGRES_PEERS = ['@electric-sql/pglite', '@electric-sql/pglite-pgvector', '@huggingface/transformers'] as const;

/** The `name@range` specs of the optional peers `kind` adds to the light install, ranges from package.json. */
function peersOf(kind: Exclude<InstallKind, 'light'>): string[] {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  const names = kind === 'full' ? Object.keys(pkg.peerDependencies) : POSTGRES_PEERS;
  return names.map((name) => `${name}@${pkg.peerDependencies[name]}`);
}

/** `npm install <specs>` in the project `dir`, as a user runs it; throws with what npm printed unless it exits 0. */
async function npmInstall(dir: string, specs: readonly string[]): Promise<Ran> {
  const ran = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...specs], { cwd: dir, env: cleanEnv(), timeoutMs: 600_000 });
  if (ran.code !== 0) throw new Error(`npm install ${specs.join(' ')} in ${dir} exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** What two npm commands printed, one after the other: the light install and the peers added to it. */
const both = (a: Ran, b: Ran): Ran => ({ code: b.code, stdout: a.stdout + b.stdout, stderr: a.stderr + b.stderr });

/**
 * Packs this checkout once and installs the tarball once into a fresh project under `root` (with exactly the
 * README's package.json fields), then adds each kind's peers to a copy of it. The peer installs run at once:
 * npm's cache takes concurrent writers.
 */
async function installAll(root: string): Promise<PackedInstalls> {
  const work = join(root, '.e2e');
  await mkdir(work);
  const tarball = await pack(work);
  const light = join(root, 'light');
  await mkdir(light);
  // Exactly the README's fields: the packed package.json has no `prepare`, so npm asks to approve no script of harness's.
  const study = { name: 'harness-e2e-study', private: true, type: 'module', ...readmeStudyFields() };
  await writeFile(join(light, 'package.json'), `${JSON.stringify(study, null, 2)}\n`);
  // Up for the peer installs too: should npm run better-sqlite3's install script again, it finds its binary here.
  const prebuild = await prebuildHost(light, work);
  try {
    const lightInstall = await npmInstall(light, [tarball]);
    const added = async (kind: Exclude<InstallKind, 'light'>): Promise<PackedInstall> => {
      const dir = join(root, kind);
      // A real copy, not links: npm rewrites files of the project it installs into.
      await cp(light, dir, { recursive: true, verbatimSymlinks: true });
      return { dir, install: both(lightInstall, await npmInstall(dir, peersOf(kind))) };
    };
    const [postgres, full] = await Promise.all([added('postgres'), added('full')]);
    return { light: { dir: light, install: lightInstall }, postgres, full };
  } finally {
    await prebuild.host.close();
    rmSync(prebuild.cached, { force: true });
  }
}

/**
 * The run's installs in a fresh folder of the temp directory, and how to remove them (e2e/global-setup.ts). The
 * removal (over a gigabyte) is asynchronous: vitest's main process, which runs it, must keep answering the
 * test workers it is stopping meanwhile, or it reports them as timing out.
 */
export async function packAndInstall(): Promise<{ installs: PackedInstalls; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'harness-e2e-packed-'));
  const remove = () => rm(root, { recursive: true, force: true });
  try {
    return { installs: await installAll(root), remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/**
 * Copies the folder `from` to `to` with every file hard-linked, not copied: a copy of an install costs the
 * folders alone. The files are shared with the run's install, so a test must not write into one in place
 * (none does: they write new files into their own project, and a new file in a copied folder is its own).
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const [src, dest] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) linkTree(src, dest);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(src), dest);
    else linkSync(src, dest);
  }
}

/**
 * A project of the test file's own with the packed harness installed: a linked copy (linkTree) of the run's
 * install of `kind`, made once by e2e/global-setup.ts, so each file gets fresh folders to write in without
 * packing or installing again.
 */
export async function installPackage(kind: InstallKind = 'light'): Promise<Installed> {
  const installs = inject('packedInstalls') as PackedInstalls | undefined;
  if (installs === undefined) throw new Error('no packed install was provided: run e2e files with `npx vitest run --config vitest.e2e.config.ts`');
  const template = installs[kind];
  const dir = await mkdtemp(join(tmpdir(), 'harness-e2e-'));
  linkTree(template.dir, dir);
  const bin = join(dir, 'node_modules', '.bin', 'harness');
  return {
    dir,
    pkg: join(dir, 'node_modules', 'harness'),
    install: template.install,
    harness: (args, opts = {}) => run(bin, args, { ...opts, cwd: opts.cwd ?? dir, env: cleanEnv(opts.env) }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
