import type { EvalSet } from './types.js';

export interface Validation {
  /** Inconsistencies that would make a number wrong; `harness evalset inspect` exits 2 on any. */
  readonly problems: string[];
  /** Facts worth printing that do not invalidate the set (counts of items without relevant documents, ...). */
  readonly notes: string[];
}

const MAX_LISTED = 5;

/**
 * Structural checks every loaded eval set must pass before it is scored. Problems: duplicate document or
 * query ids, ids with whitespace, empty query texts, qrels naming a document or query that does not exist,
 * a query whose scope names no scope, a scope listing an unknown document, a unit map naming an unknown document,
 * a judged relevant document outside the query's scope (it could never be retrieved). Notes: documents with
 * neither text nor title, queries with no relevant document (no grade >= 1; they score 0 under `-c`).
 */
export function validateEvalSet(es: EvalSet): Validation {
  const problems: string[] = [];
  const notes: string[] = [];
  const report = (list: string[], what: string, items: readonly string[]) => {
    if (items.length === 0) return;
    const shown = items.slice(0, MAX_LISTED).join(', ');
    list.push(`${items.length} ${what}: ${shown}${items.length > MAX_LISTED ? ', ...' : ''}`);
  };

  const docIds = new Set<string>();
  const dupDocs: string[] = [];
  const spacedDocs: string[] = [];
  const emptyDocs: string[] = [];
  for (const d of es.documents) {
    if (docIds.has(d.id)) dupDocs.push(d.id);
    docIds.add(d.id);
    if (/\s/.test(d.id) || d.id === '') spacedDocs.push(JSON.stringify(d.id));
    if (d.text.trim() === '' && (d.title ?? '').trim() === '') emptyDocs.push(d.id);
  }
  report(problems, 'duplicate document ids', dupDocs);
  report(problems, 'document ids empty or with whitespace', spacedDocs);
  report(notes, 'documents with neither text nor title', emptyDocs);

  const queryIds = new Set<string>();
  const dupQueries: string[] = [];
  const spacedQueries: string[] = [];
  const emptyQueries: string[] = [];
  const badScope: string[] = [];
  const noRelevant: string[] = [];
  const outOfScope: string[] = [];
  const scopeSets = new Map<string, Set<string>>();
  for (const [s, ids] of es.scopes ?? []) scopeSets.set(s, new Set(ids));
  for (const q of es.queries) {
    if (queryIds.has(q.id)) dupQueries.push(q.id);
    queryIds.add(q.id);
    if (/\s/.test(q.id) || q.id === '') spacedQueries.push(JSON.stringify(q.id));
    if (q.text.trim() === '') emptyQueries.push(q.id);
    const judged = es.qrels.get(q.id);
    if (judged === undefined || ![...judged.values()].some((g) => g >= 1)) noRelevant.push(q.id);
    if (q.scope !== undefined) {
      const members = scopeSets.get(q.scope);
      if (members === undefined) badScope.push(`${q.id} -> ${q.scope}`);
      else for (const [d, g] of judged ?? []) if (g >= 1 && !members.has(d)) outOfScope.push(`${q.id} -> ${d}`);
    }
  }
  report(problems, 'duplicate query ids', dupQueries);
  report(problems, 'query ids empty or with whitespace', spacedQueries);
  report(problems, 'queries with empty text', emptyQueries);
  report(problems, 'queries whose scope names no scope', badScope);
  report(problems, "relevant documents outside their query's scope", outOfScope);
  report(notes, 'queries with no relevant document', noRelevant);

  const unknownQrelQueries: string[] = [];
  const unknownQrelDocs: string[] = [];
  for (const [qid, judged] of es.qrels) {
    if (!queryIds.has(qid)) unknownQrelQueries.push(qid);
    for (const d of judged.keys()) if (!docIds.has(d)) unknownQrelDocs.push(`${qid} -> ${d}`);
  }
  report(problems, 'qrels queries not in the queries', unknownQrelQueries);
  report(problems, 'qrels documents not in the corpus', unknownQrelDocs);

  const unknownScopeDocs: string[] = [];
  for (const [s, ids] of es.scopes ?? []) for (const d of ids) if (!docIds.has(d)) unknownScopeDocs.push(`${s} -> ${d}`);
  report(problems, 'scope members not in the corpus', unknownScopeDocs);

  for (const [unit, map] of es.units ?? []) {
    const unknown = [...map.keys()].filter((d) => !docIds.has(d));
    report(problems, `unit "${unit}" entries naming no document`, unknown);
    const unmapped = es.documents.filter((d) => !map.has(d.id)).map((d) => d.id);
    report(problems, `documents with no "${unit}" unit`, unmapped);
  }
  return { problems, notes };
}
