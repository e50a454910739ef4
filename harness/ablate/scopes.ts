import { corpusFingerprint } from '../../evalset/fingerprint.js';
import { loadEvalSet } from '../../evalset/load.js';
import type { Document, EvalSet, Query } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import type { ResolvedConfig } from '../config/load.js';
import { ConfigError, HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ScopeData } from '../systems/types.js';

/** The config's eval set, at its split or at `split` (the dev split a grid is tuned on). */
export function loadConfiguredEvalSet(cfg: ResolvedConfig, log: Logger, split?: string): Promise<EvalSet> {
  const s = split ?? cfg.evalset.split;
  return loadEvalSet(
    {
      format: cfg.evalset.format,
      path: cfg.evalset.path,
      ...(s === undefined ? {} : { split: s }),
      ...(cfg.evalset.strata === undefined ? {} : { strata: cfg.evalset.strata }),
      options: cfg.evalset.options,
      source: cfg.file,
    },
    log,
  );
}

/**
 * The qrels and unit map to score with. With `unit:` set, each query's qrels move to that unit (a unit takes
 * the best grade of its judged members) and runs are mapped through the same map at evaluation.
 */
export function scoringUnit(cfg: Pick<ResolvedConfig, 'unit' | 'file'>, es: EvalSet): { qrels: EvalSet['qrels']; units?: ReadonlyMap<string, string> } {
  if (cfg.unit === undefined) return { qrels: es.qrels };
  const units = es.units?.get(cfg.unit);
  if (!units) {
    const known = [...(es.units?.keys() ?? [])];
    throw new ConfigError(cfg.file, [`unit: eval set ${es.name} has no unit "${cfg.unit}" (it defines: ${known.length > 0 ? known.join(', ') : 'none'})`]);
  }
  const qrels = new Map<string, Map<string, number>>();
  for (const [qid, judged] of es.qrels) {
    const mapped = new Map<string, number>();
    for (const [docId, grade] of judged) {
      const u = units.get(docId);
      if (u === undefined) throw new HarnessError(`eval set ${es.name}: judged document "${docId}" of query ${qid} has no ${cfg.unit} in the unit map`);
      mapped.set(u, Math.max(grade, mapped.get(u) ?? -Infinity));
    }
    qrels.set(qid, mapped);
  }
  return { qrels, units };
}

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
