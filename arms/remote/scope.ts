import type { Corpus } from '../../evalset/types.js';
import { sha256Hex } from '../../harness/cache/index.js';

/**
 * The name under which a remote arm stores one scope's corpus on its server: `prefix` and a hash of the
 * corpus's document ids. Two scopes never share a name, and the same corpus always gets the same one, so a
 * server keeps each scope apart without the harness ever deleting anything on it.
 */
export function scopeName(prefix: string, corpus: Corpus): string {
  return `${prefix}${sha256Hex(corpus.map((d) => d.id).join('\n')).slice(0, 16)}`;
}
