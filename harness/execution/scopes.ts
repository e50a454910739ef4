import { corpusFingerprint } from '../../evalset/fingerprint.js';
import type { Document, EvalSet, Query } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import type { ScopeData } from '../systems/types.js';

/** The retrieval scopes of `queries`: one per scope they name (unscoped queries search the whole corpus). */
export function scopesOf(es: EvalSet, queries: readonly Query[] = es.queries): ScopeData[] {
  const byId = new Map(es.documents.map((d) => [d.id, d] as const));
  const queriesByScope = new Map<string | undefined, Query[]>();
  for (const q of queries) {
    const list = queriesByScope.get(q.scope);
    if (list) list.push(q);
    else queriesByScope.set(q.scope, [q]);
  }
  const out: ScopeData[] = [];
  for (const [scope, qs] of queriesByScope) {
    let documents: readonly Document[];
    if (scope === undefined) documents = es.documents;
    else {
      const ids = es.scopes?.get(scope);
      if (!ids) throw new HarnessError(`eval set ${es.name}: query ${qs[0]!.id} names scope "${scope}", which the eval set does not define`);
      documents = ids.map((id) => {
        const d = byId.get(id);
        if (!d) throw new HarnessError(`eval set ${es.name}: scope "${scope}" lists document "${id}", which is not in the corpus`);
        return d;
      });
    }
    out.push({
      scope,
      documents,
      queries: qs,
      corpusFingerprint: corpusFingerprint(documents),
      queriesFingerprint: sha256Hex(canonicalJson(qs.map((q) => [q.id, q.text]))),
    });
  }
  return out;
}
