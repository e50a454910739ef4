import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

/** The folder of harness's own package.json, found from this file whether run from source or from dist/. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'harness') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('harness: cannot find its own package.json');
    dir = up;
  }
}

/** harness's own package.json: its version, dependency and peer ranges. */
export interface OwnPackage {
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

/** harness's own package.json, from the package root (source, dist/ and an install alike). */
export function ownPackage(): OwnPackage {
  return JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as OwnPackage;
}

/**
 * The version of package `name` as Node would load it from `root`: `node_modules/<name>` in `root` or the
 * nearest folder above it that has one (an installed harness finds its dependencies in the user's project).
 */
function installedVersion(root: string, name: string): string | undefined {
  for (let dir = root; ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    if (dirname(dir) === dir) return undefined;
  }
}

/** Versions of Node, harness and its runtime dependencies (optional peers too, when installed), for manifests. */
export function packageVersions(): Record<string, string> {
  const root = projectRoot();
  const pj = ownPackage();
  const out: Record<string, string> = { node: process.versions.node, harness: pj.version };
  const required = new Set(Object.keys(pj.dependencies ?? {}));
  for (const dep of [...required, ...Object.keys(pj.peerDependencies ?? {})].sort()) {
    const v = installedVersion(root, dep) ?? (required.has(dep) ? 'missing' : undefined);
    if (v !== undefined) out[dep] = v;
  }
  return out;
}

/** `{ sha, dirty }` of the git checkout holding `dir`, or undefined outside one. */
export function gitState(dir: string): { sha: string; dirty: boolean } | undefined {
  try {
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    return { sha, dirty: status.trim() !== '' };
  } catch {
    return undefined;
  }
}
