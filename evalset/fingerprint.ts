import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from '../harness/cache/index.js';
import type { Corpus, Document, EvalSet, JsonValue, Query } from './types.js';

/**
 * Content fingerprints: sha256 over a canonical, order-preserving serialisation. Streaming into the hash keeps
 * memory flat on large corpora. The eval-set name and loader notes are not content and are excluded, so the
 * same data loaded from a renamed folder has the same fingerprint; document order is content (ties in some
 * arms depend on it).
 */
export function corpusFingerprint(docs: Corpus): string {
  const h = createHash('sha256');
  h.update('corpus.v1\n');
  hashDocs(h, docs);
  return h.digest('hex');
}

/** sha256 over documents, queries, qrels (sorted by query then doc), scopes and units. */
export function evalSetFingerprint(es: EvalSet): string {
  const h = createHash('sha256');
  h.update('evalset.v1\n');
  hashDocs(h, es.documents);
  h.update('queries\n');
  for (const q of es.queries) h.update(`${canonicalJson(queryJson(q))}\n`);
  h.update('qrels\n');
  for (const qid of [...es.qrels.keys()].sort()) {
    const judged = es.qrels.get(qid)!;
    for (const did of [...judged.keys()].sort()) h.update(`${qid}\t${did}\t${judged.get(did)}\n`);
  }
  h.update('scopes\n');
  for (const s of [...(es.scopes?.keys() ?? [])].sort()) h.update(`${canonicalJson([s, [...es.scopes!.get(s)!]])}\n`);
  h.update('units\n');
  for (const u of [...(es.units?.keys() ?? [])].sort()) {
    const map = es.units!.get(u)!;
    for (const d of [...map.keys()].sort()) h.update(`${u}\t${d}\t${map.get(d)}\n`);
  }
  return h.digest('hex');
}

function hashDocs(h: Hash, docs: Corpus): void {
  for (const d of docs) h.update(`${canonicalJson(docJson(d))}\n`);
}

function docJson(d: Document): JsonValue {
  return {
    id: d.id,
    text: d.text,
    title: d.title ?? null,
    timestamp: d.timestamp ?? null,
    metadata: d.metadata ?? null,
    sensitive: d.sensitive === true,
  };
}

function queryJson(q: Query): JsonValue {
  // The gold answer is part of what answer measures score against; sets without answers keep their fingerprint.
  return {
    id: q.id,
    text: q.text,
    stratum: q.stratum,
    scope: q.scope ?? null,
    metadata: q.metadata ?? null,
    ...(q.answer === undefined ? {} : { answer: q.answer }),
  };
}
