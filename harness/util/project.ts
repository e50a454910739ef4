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

/** Versions of Node, harness and its runtime dependencies, for manifests. */
export function packageVersions(): Record<string, string> {
  const root = projectRoot();
  const pj = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string;
    dependencies?: Record<string, string>;
  };
  const out: Record<string, string> = { node: process.versions.node, harness: pj.version };
  for (const dep of Object.keys(pj.dependencies ?? {}).sort()) {
    const file = join(root, 'node_modules', dep, 'package.json');
    out[dep] = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : 'missing';
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
