import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every file under `roots` (recursively) whose bytes contain `secret`, for tests asserting that an API key or
 * credential reached no report, cache entry, manifest or log file. Empty means none did.
 */
export function filesContaining(roots: readonly string[], secret: string): string[] {
  if (secret.length < 8) throw new Error('filesContaining: use a secret of at least 8 characters, or matches are luck');
  const needle = Buffer.from(secret, 'utf8');
  const hits: string[] = [];
  const visit = (path: string): void => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (st.isFile() && readFileSync(path).includes(needle)) {
      hits.push(path);
    }
  };
  for (const root of roots) visit(root);
  return hits;
}
