import { statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The part of `path` that stops it from being a folder: `path` itself when it exists and is not a folder, else
 * the nearest folder-to-be above it that is a file. Undefined when every existing part is a folder. Node's
 * ENOTDIR and EEXIST name the path asked for, not the file in the way, which is what the user must move.
 */
export function fileInTheWay(path: string): string | undefined {
  for (let p = path; ; p = dirname(p)) {
    let isDir: boolean | undefined;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      // ENOENT: this part does not exist yet; ENOTDIR: a part above it is a file. Either way, look higher.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
    }
    if (isDir === false) return p;
    if (isDir === true || dirname(p) === p) return undefined;
  }
}

/** Node's error code of a failed file-system call, if it has one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
