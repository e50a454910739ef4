import { isAbsolute, resolve } from 'node:path';

/** `p` as an absolute path: relative paths are read against `dir` (the config's folder, or the working directory for flags). */
export function resolvePath(dir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(dir, p);
}
