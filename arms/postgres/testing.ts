import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Document, Query } from '../../evalset/types.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';

/**
 * The work folder of this checkout's own cache (`.cache/work`), where the embedded database keeps its snapshot
 * of a fresh data folder: tests share it, so only the first test run of a checkout pays PGlite's initdb.
 */
export const SHARED_WORK_DIR = join(PROJECT_ROOT, '.cache', 'work');

function jsonl<T>(file: string): T[] {
  return readFileSync(join(PROJECT_ROOT, 'evalset/examples/alex-memory', file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T);
}

/** The bundled example's corpus (351 memories) and queries, as Documents and Queries. */
export function alexMemory(): { corpus: Document[]; queries: Query[] } {
  const corpus = jsonl<{ id: string; text: string }>('corpus.jsonl').map((d) => ({ id: d.id, text: d.text }));
  const queries = jsonl<{ id: string; text: string; stratum: string }>('queries.jsonl').map((q) => ({ id: q.id, text: q.text, stratum: q.stratum }));
  return { corpus, queries };
}
