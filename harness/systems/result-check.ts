import { isReturnedId } from '../../arms/remote/text-match.js';
import type { ResultCheck, ResultFault, ScopeData, ScopeResults } from './types.js';

/**
 * The Result check: a System that returns nothing for most queries, or ids the eval set does not know, scores
 * 0 either way, and that 0 looks like a real total miss. So every System's merged results are counted against
 * its Scopes' Corpora (after the run, from the cached results as from fresh ones, so a cache hit warns too) and
 * a fault is raised where the numbers say the run cannot be read as retrieval quality.
 */

/** The ids of a Scope's Corpus, built once per Scope, not once per System. */
const idsOfScope = new WeakMap<ScopeData, ReadonlySet<string>>();

function scopeIds(scope: ScopeData): ReadonlySet<string> {
  let ids = idsOfScope.get(scope);
  if (ids === undefined) {
    ids = new Set(scope.documents.map((d) => d.id));
    idsOfScope.set(scope, ids);
  }
  return ids;
}

/** Counts of one System over every Scope: queries without results, returned ids, those no Corpus holds (Returned items, text the judge reads, aside). */
interface Counts {
  queries: number;
  empty: number;
  returned: number;
  unknown: number;
}

function countResults(runs: readonly { readonly results: ScopeResults }[], scopes: readonly ScopeData[]): Counts {
  const c: Counts = { queries: 0, empty: 0, returned: 0, unknown: 0 };
  runs.forEach((run, i) => {
    const scope = scopes[i] as ScopeData;
    const known = scopeIds(scope);
    for (const q of scope.queries) {
      const docs = run.results[q.id] ?? [];
      c.queries++;
      if (docs.length === 0) c.empty++;
      c.returned += docs.length;
      for (const [docId] of docs) if (!known.has(docId) && !isReturnedId(docId)) c.unknown++;
    }
  });
  return c;
}

/**
 * The faults of one System from its per-scope runs and its inputs' checks (in input order; undefined for a
 * healthy input). `empty`: no results for at least half the queries, raised on every System that is itself
 * empty (a Fusion of empty arms is empty too, and says so). `unknown`: more than half the returned ids are in
 * no Scope's Corpus, raised only where it starts: a System whose input already has it inherits the ids and is
 * not warned again. Undefined when healthy, so a healthy System's report is unchanged.
 */
export function checkResults(
  runs: readonly { readonly results: ScopeResults; readonly indexStats?: Readonly<Record<string, number>> }[],
  scopes: readonly ScopeData[],
  inputs: readonly { readonly id: string; readonly check: ResultCheck | undefined }[],
): ResultCheck | undefined {
  const c = countResults(runs, scopes);
  const faults: ResultFault[] = [];
  if (c.queries > 0 && c.empty * 2 >= c.queries) faults.push('empty');
  const inherited = inputs.some((i) => i.check?.faults.includes('unknown'));
  if (c.returned > 0 && c.unknown * 2 > c.returned && !inherited) faults.push('unknown');
  if (faults.length === 0) return undefined;
  const emptyInputs = inputs.filter((i) => i.check?.faults.includes('empty')).map((i) => i.id);
  const example = scopes.find((s) => s.documents.length > 0)?.documents[0]?.id;
  const stored = faults.includes('empty') ? storeCheckOf(runs) : undefined;
  return {
    ...c,
    faults,
    ...(emptyInputs.length > 0 ? { emptyInputs } : {}),
    ...(stored === undefined ? {} : { storeCheck: stored }),
    ...(faults.includes('unknown') && example !== undefined ? { knownId: example } : {}),
  };
}

/** The store check's counts over every Scope (index stats storeCheckSampled, storeCheckTop10), when it ran. */
function storeCheckOf(runs: readonly { readonly indexStats?: Readonly<Record<string, number>> }[]): ResultCheck['storeCheck'] {
  let sampled = 0;
  let found = 0;
  for (const r of runs) {
    sampled += r.indexStats?.['storeCheckSampled'] ?? 0;
    found += r.indexStats?.['storeCheckTop10'] ?? 0;
  }
  return sampled > 0 ? { sampled, found } : undefined;
}

/** The likely cause of an `empty` fault, from what is known: empty inputs, the store check's counts, or nothing. */
function emptyCause(check: ResultCheck): string {
  const inputs = check.emptyInputs;
  if (inputs !== undefined)
    return `its input${inputs.length === 1 ? '' : 's'} ${inputs.join(', ')} return${inputs.length === 1 ? 's' : ''} nothing for most queries too (see there)`;
  const stored = check.storeCheck;
  if (stored === undefined) return 'check the response mapping, whether the store step stored anything, or the server search';
  if (stored.found === 0)
    return `its store check found none of ${stored.sampled} sampled memories by their own text either: check whether the store step stored anything, and the response mapping`;
  return `the store is not empty (its store check found ${stored.found} of ${stored.sampled} sampled memories by their own text), so its search finds memories by their exact words but not by these queries: a substring or exact-match search (as the official memory server's) finds no question; check the server's search, or the search arguments and response mapping for queries`;
}

/**
 * The sentence of one fault, with its likely cause, for stderr (`<system>: <sentence>`) and the report's
 * warnings alike. The returned ids themselves are never quoted: a wrong mapping may have picked a Document's
 * text, and that text may be Sensitive; an id the eval set does know is shown beside the count instead.
 */
export function faultSentence(check: ResultCheck, fault: ResultFault): string {
  if (fault === 'unknown') {
    const like = check.knownId === undefined ? '' : ` (its ids look like "${check.knownId}")`;
    return `${check.unknown} of ${check.returned} returned ids are not in the eval set's corpus${like}, so they score as not relevant: ids the eval set does not know; check the docId mapping / id template`;
  }
  return `its search returns nothing for most queries: no results for ${check.empty} of ${check.queries} queries, which score 0 as if nothing relevant existed; ${emptyCause(check)}`;
}
