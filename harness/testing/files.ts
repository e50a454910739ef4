import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './temp.js';

/**
 * A fresh temp folder holding `files` (relative path -> text), for tests that read eval sets from disk. Removed
 * when the test that asked for it finishes (or, asked for outside a test, when the test file does): see temp.ts.
 */
export async function tempFolder(prefix: string, files: Readonly<Record<string, string>>): Promise<string> {
  const dir = tempDir(prefix);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}
