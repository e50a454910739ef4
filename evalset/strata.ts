import { InputError } from '../harness/errors.js';
import { StrataCounter } from './limits.js';
import { checkId, Problems, readLines } from './lines.js';
import type { EvalSet, Query } from './types.js';

/**
 * Reads a strata file: one `queryId<TAB>stratum` per line; blank lines and lines starting with `#` are skipped.
 * A query id the eval set does not have, a duplicate id or an empty stratum is an error naming the line; every
 * such line is reported at once (up to the cap of {@link Problems}).
 */
export async function readStrataFile(file: string, knownQueryIds: ReadonlySet<string>): Promise<Map<string, string>> {
  const strata = new Map<string, string>();
  const problems = new Problems();
  const distinct = new StrataCounter(file);
  for await (const { text, line } of readLines(file)) {
    if (text.trim() === '' || text.startsWith('#')) continue;
    const stratum = problems.attempt(() => strataLine(file, line, text, knownQueryIds, strata));
    // Past the limit the file is wrong as a whole: stop here rather than collect a problem per line.
    if (stratum !== undefined) distinct.add(stratum, line);
  }
  problems.throwIfAny();
  return strata;
}

function strataLine(file: string, line: number, text: string, knownQueryIds: ReadonlySet<string>, strata: Map<string, string>): string {
  const cols = text.split('\t');
  if (cols.length !== 2) throw new InputError(file, line, `expected "queryId<TAB>stratum", got ${cols.length} tab-separated fields`);
  const [id, stratum] = cols as [string, string];
  checkId(file, line, 'query id', id);
  if (stratum.trim() === '') throw new InputError(file, line, `empty stratum for query "${id}"`);
  if (!knownQueryIds.has(id)) throw new InputError(file, line, `query "${id}" is not in the eval set`);
  if (strata.has(id)) throw new InputError(file, line, `query "${id}" is listed twice`);
  strata.set(id, stratum.trim());
  return stratum.trim();
}

/** A copy of `es` whose listed queries take the strata file's stratum; unlisted queries keep theirs. */
export async function applyStrataFile(es: EvalSet, file: string): Promise<EvalSet> {
  const strata = await readStrataFile(file, new Set(es.queries.map((q) => q.id)));
  const queries: Query[] = es.queries.map((q) => {
    const s = strata.get(q.id);
    return s === undefined ? q : { ...q, stratum: s };
  });
  const unlisted = es.queries.length - strata.size;
  const notes = [...(es.notes ?? [])];
  notes.push(`strata file ${file}: ${strata.size} queries restratified${unlisted > 0 ? `, ${unlisted} kept their stratum` : ''}`);
  return { ...es, queries, notes };
}
