import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { InputError } from '../harness/errors.js';
import { readCsv } from './csv.js';
import { checkDocumentText, checkQueryText, StrataCounter } from './limits.js';
import { idField, MAX_PROBLEMS, nameList, Problems, readJsonl, stringField, type JsonObject } from './lines.js';
import type { Document, EvalSet, JsonValue, Query } from './types.js';

export const MEMORY_CORPUS_FIELDS = ['id', 'text', 'title', 'date', 'category', 'importance', 'sensitive', 'metadata'] as const;
export const MEMORY_QUERY_FIELDS = ['id', 'text', 'stratum', 'qrels', 'scope', 'answer', 'metadata'] as const;

/** The key in a memory's `metadata` that names the retrieval scope it belongs to (queries name it in `scope`). */
export const MEMORY_SCOPE_KEY = 'scope';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * Reads our own `memory` eval-set format (MEMORY-FORMAT.md; README "Eval-set formats"): a folder with
 * `corpus.jsonl` or `corpus.csv` and `queries.jsonl`.
 *
 * - Documents: `date` -> timestamp (ISO 8601 date or date-time, checked), metadata = `{category, importance,
 *   ...metadata}` (absent keys omitted), `sensitive` defaults to false.
 * - Queries: `qrels` is `{docId: grade}` with integer grades 0..3 (0 = judged not relevant); an optional `answer`
 *   (a string, or a number kept as its decimal string) is the gold answer for answer measures.
 * - Scopes: a query's `scope` names the memories whose `metadata.scope` equals it; memories without one belong
 *   to no scope. A scope that no memory declares is an error at the query's line.
 * - Errors name file, line and field: unknown fields (typo protection, listing the known ones), wrong types,
 *   duplicate ids, a qrels doc id missing from the corpus. Every problem of both files is collected (up to
 *   {@link MAX_PROBLEMS}) and thrown at once. No value of a memory flagged sensitive appears in a message.
 * - A query with `"qrels": {}` (no judgment) is dropped and counted in `notes`, unless it has an `answer`: then it
 *   is kept for answer measures only (`metadata.answerOnly: true`, no qrels) and counted. A query without any
 *   grade >= 1 is kept and counted in `notes`.
 */
export async function loadMemory(dir: string): Promise<EvalSet> {
  const root = resolve(dir);
  const jsonl = join(root, 'corpus.jsonl');
  const csv = join(root, 'corpus.csv');
  const hasJsonl = await isFile(jsonl);
  const hasCsv = await isFile(csv);
  if (hasJsonl && hasCsv) throw new InputError(root, undefined, 'both corpus.jsonl and corpus.csv exist; keep one');
  if (!hasJsonl && !hasCsv) throw new InputError(jsonl, undefined, 'no corpus: expected corpus.jsonl or corpus.csv');

  // Every problem of both files is collected (up to a cap) and reported at once.
  const problems = new Problems();
  const documents: Document[] = [];
  // Ids of every memory line whose id parsed, valid or not: a query judging a broken memory is not also
  // reported as naming an unknown one.
  const docIds = new Set<string>();
  const scopes = new Map<string, string[]>();
  const addDoc = (file: string, line: number, obj: JsonObject) => {
    const doc = memoryDocument(file, line, obj, problems, docIds);
    if (doc === undefined) return;
    documents.push(doc);
    const scope = doc.metadata?.[MEMORY_SCOPE_KEY];
    if (scope !== undefined) {
      if (typeof scope !== 'string' || scope === '') {
        problems.add(new InputError(file, line, `memory "${doc.id}": metadata.${MEMORY_SCOPE_KEY} must be a non-empty string`));
        return;
      }
      const list = scopes.get(scope) ?? [];
      list.push(doc.id);
      scopes.set(scope, list);
    }
  };
  if (hasJsonl) {
    // A line that is not JSON usually still shows its id; registering it keeps the queries that judge that
    // memory from being blamed as well.
    const salvageId = (text: string) => {
      const m = /"id"\s*:\s*"([^"\s]+)"/.exec(text);
      if (m !== null) docIds.add(m[1]!);
    };
    for await (const { obj, line } of readJsonl(jsonl, problems, salvageId)) addDoc(jsonl, line, obj);
  } else {
    const { header, rows } = await readCsv(csv, problems);
    for (const h of header) problems.attempt(() => checkKnown(csv, 1, h, MEMORY_CORPUS_FIELDS, 'column'));
    for (const { cells, line } of rows) {
      const rec = problems.attempt(() => csvRecord(csv, line, header, cells));
      if (rec !== undefined) addDoc(csv, line, rec);
    }
  }

  const { queries, qrels, unjudged, answerOnly, noRelevant } = await readMemoryQueries(join(root, 'queries.jsonl'), problems, { docIds, scopes });
  problems.throwIfAny();
  const notes: string[] = [];
  if (unjudged.length > 0)
    notes.push(`${unjudged.length} ${unjudged.length === 1 ? 'query' : 'queries'} dropped: no judgments ("qrels": {}): ${nameList(unjudged)}`);
  if (answerOnly.length > 0) {
    notes.push(
      `${answerOnly.length} ${answerOnly.length === 1 ? 'query' : 'queries'} without judgments ("qrels": {}) kept for answer measures only (${answerOnly.length === 1 ? 'it has' : 'they have'} an answer): ${nameList(answerOnly)}`,
    );
  }
  if (noRelevant > 0) notes.push(`${noRelevant} ${noRelevant === 1 ? 'query has' : 'queries have'} no relevant document (no grade >= 1)`);
  return {
    name: basename(root),
    format: 'memory',
    documents,
    queries,
    qrels,
    ...(scopes.size > 0 ? { scopes } : {}),
    notes,
  };
}

/**
 * The queries of `queries.jsonl` with their judgments, the ids of those without any (dropped, or kept for answer
 * measures only when they have an answer) and the count of those without a relevant document. A query past the
 * size limit, or a stratum past the strata limit, stops the load at its line.
 */
async function readMemoryQueries(
  queriesPath: string,
  problems: Problems,
  known: { docIds: ReadonlySet<string>; scopes: ReadonlyMap<string, readonly string[]> },
): Promise<{ queries: Query[]; qrels: Map<string, Map<string, number>>; unjudged: string[]; answerOnly: string[]; noRelevant: number }> {
  const queries: Query[] = [];
  const qrels = new Map<string, Map<string, number>>();
  const queryIds = new Set<string>();
  const unjudged: string[] = [];
  const answerOnly: string[] = [];
  let noRelevant = 0;
  const strata = new StrataCounter(queriesPath);
  for await (const { obj, line } of readJsonl(queriesPath, problems)) {
    const q = memoryQuery(queriesPath, line, obj, problems, { queryIds, ...known });
    if (q === undefined) continue;
    checkQueryText(queriesPath, line, q.query.id, q.query.text);
    strata.add(q.query.stratum, line);
    // A query with `"qrels": {}` has no judgment: dropped and counted, like run queries absent from the qrels;
    // with an answer it still serves answer measures, marked so that retrieval measures skip it.
    if (q.judged.size === 0) {
      if (q.query.answer === undefined) {
        unjudged.push(q.query.id);
        continue;
      }
      answerOnly.push(q.query.id);
      queries.push({ ...q.query, metadata: { ...q.query.metadata, answerOnly: true } });
      continue;
    }
    if (![...q.judged.values()].some((g) => g >= 1)) noRelevant += 1;
    qrels.set(q.query.id, q.judged);
    queries.push(q.query);
  }
  return { queries, qrels, unjudged, answerOnly, noRelevant };
}

/** One query line, or undefined when any of its fields has a problem (each recorded in `problems`). */
function memoryQuery(
  file: string,
  line: number,
  obj: JsonObject,
  problems: Problems,
  known: { queryIds: Set<string>; docIds: ReadonlySet<string>; scopes: ReadonlyMap<string, readonly string[]> },
): { query: Query; judged: Map<string, number> } | undefined {
  const before = problems.count;
  const field = <T>(fn: () => T) => problems.attempt(fn);
  for (const k of Object.keys(obj)) field(() => checkKnown(file, line, k, MEMORY_QUERY_FIELDS, 'field'));
  const id = field(() => idField(file, line, obj, 'id'));
  const who = id === undefined ? 'query' : `query "${id}"`;
  if (id !== undefined) {
    if (known.queryIds.has(id)) problems.add(new InputError(file, line, `duplicate query id "${id}"`));
    known.queryIds.add(id);
  }
  const text = field(() => stringField(file, line, obj, 'text', true));
  const stratum = field(() => {
    const s = stringField(file, line, obj, 'stratum', true);
    if (s.trim() === '') throw new InputError(file, line, `${who}: stratum is empty`);
    return s;
  });
  const scope = field(() => {
    const s = stringField(file, line, obj, 'scope', false);
    if (s !== undefined && !known.scopes.has(s)) {
      throw new InputError(file, line, `${who}: scope "${s}" is not declared by any memory (metadata.${MEMORY_SCOPE_KEY})`);
    }
    return s;
  });
  const answer = field(() => answerField(file, line, obj, who));
  const metadata = field(() => objectField(file, line, obj, 'metadata'));
  const judged = new Map<string, number>();
  const rawQrels = obj['qrels'];
  if (rawQrels === undefined) problems.add(new InputError(file, line, `${who}: missing field "qrels"`));
  else if (rawQrels === null || typeof rawQrels !== 'object' || Array.isArray(rawQrels)) {
    problems.add(new InputError(file, line, `${who}: qrels must be an object {docId: grade}`));
  } else {
    for (const [docId, grade] of Object.entries(rawQrels as JsonObject)) {
      if (!known.docIds.has(docId)) problems.add(new InputError(file, line, `${who}: qrels doc id "${docId}" is not in the corpus`));
      else if (typeof grade !== 'number' || !Number.isInteger(grade) || grade < 0 || grade > 3) {
        problems.add(new InputError(file, line, `${who}: grade of "${docId}" must be an integer 0..3, got ${JSON.stringify(grade)}`));
      } else judged.set(docId, grade);
    }
  }
  if (problems.count > before || id === undefined || text === undefined || stratum === undefined) return undefined;
  return {
    query: {
      id,
      text,
      stratum,
      ...(scope === undefined ? {} : { scope }),
      ...(answer === undefined ? {} : { answer }),
      ...(metadata === undefined ? {} : { metadata }),
    },
    judged,
  };
}

/**
 * What an error may show of a memory's field value. Nothing at all for a memory flagged sensitive, or whose flag
 * is itself malformed (it may be meant as sensitive): only the field's type. Otherwise the value, shortened.
 */
function shown(value: unknown, sensitive: boolean): string {
  if (sensitive) {
    const type = value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value;
    return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} (value not shown: sensitive memory)`;
  }
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * One memory, or undefined when any field has a problem (each recorded in `problems`). Its id joins `docIds`
 * as soon as it parses. Errors name the memory by id and line only: no field value of a sensitive memory is
 * ever quoted (see {@link shown}).
 */
function memoryDocument(file: string, line: number, obj: JsonObject, problems: Problems, docIds: Set<string>): Document | undefined {
  const before = problems.count;
  const field = <T>(fn: () => T) => problems.attempt(fn);
  const rawSensitive = obj['sensitive'];
  const secret = rawSensitive !== undefined && rawSensitive !== false;
  for (const k of Object.keys(obj)) field(() => checkKnown(file, line, k, MEMORY_CORPUS_FIELDS, 'field'));
  const id = field(() => {
    const v = obj['id'];
    // The shared idField quotes a non-string id; a sensitive memory's id field may hold anything.
    if (secret && v !== undefined && typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v))) {
      throw new InputError(file, line, `field "id" must be a string, got ${shown(v, true)}`);
    }
    return idField(file, line, obj, 'id');
  });
  const who = id === undefined ? 'memory' : `memory "${id}"`;
  if (id !== undefined) {
    if (docIds.has(id)) problems.add(new InputError(file, line, `duplicate memory id "${id}"`));
    docIds.add(id);
  }
  const str = (name: string, required: boolean): string | undefined =>
    field(() => {
      const v = obj[name];
      if (v === undefined || (v === null && !required)) {
        if (required) throw new InputError(file, line, `${who}: missing field "${name}"`);
        return undefined;
      }
      if (typeof v !== 'string') throw new InputError(file, line, `${who}: field "${name}" must be a string, got ${shown(v, secret)}`);
      return v;
    });
  const text = str('text', true);
  if (text !== undefined && text.trim() === '') problems.add(new InputError(file, line, `${who}: text is empty`));
  if (text !== undefined && id !== undefined) field(() => checkDocumentText(file, line, id, text));
  const title = str('title', false);
  const date = str('date', false);
  if (date !== undefined && (!ISO_DATE.test(date) || Number.isNaN(Date.parse(date)))) {
    problems.add(new InputError(file, line, `${who}: date ${shown(date, secret)} is not ISO 8601 (2024-03-05 or 2024-03-05T14:30:00Z)`));
  }
  const category = str('category', false);
  const importance = obj['importance'];
  if (importance !== undefined && (typeof importance !== 'number' || !(importance >= 0 && importance <= 1))) {
    problems.add(new InputError(file, line, `${who}: importance must be a number in [0, 1], got ${shown(importance, secret)}`));
  }
  if (rawSensitive !== undefined && typeof rawSensitive !== 'boolean') {
    problems.add(new InputError(file, line, `${who}: sensitive must be true or false, got ${shown(rawSensitive, true)}`));
  }
  const extra = field(() => objectField(file, line, obj, 'metadata'));
  if (problems.count > before || id === undefined || text === undefined) return undefined;
  const metadata: Record<string, JsonValue> = {
    ...(category === undefined ? {} : { category }),
    ...(importance === undefined ? {} : { importance: importance as number }),
    ...extra,
  };
  return {
    id,
    text,
    ...(title === undefined ? {} : { title }),
    ...(date === undefined ? {} : { timestamp: date }),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    sensitive: rawSensitive === true,
  };
}

/**
 * CSV cells are text: an empty cell is an absent field; importance, sensitive and metadata are converted. A
 * cell that does not convert is named by its column only (the row may be a sensitive memory).
 */
function csvRecord(file: string, line: number, header: readonly string[], cells: readonly string[]): JsonObject {
  const rec: Record<string, JsonValue> = {};
  header.forEach((h, i) => {
    const cell = cells[i] ?? '';
    if (cell === '') return;
    if (h === 'importance') {
      const n = Number(cell);
      if (!Number.isFinite(n)) throw new InputError(file, line, 'importance is not a number');
      rec[h] = n;
    } else if (h === 'sensitive') {
      if (cell !== 'true' && cell !== 'false') throw new InputError(file, line, 'sensitive must be true or false');
      rec[h] = cell === 'true';
    } else if (h === 'metadata') {
      try {
        rec[h] = JSON.parse(cell) as JsonValue;
      } catch {
        throw new InputError(file, line, 'metadata must be a JSON object in the cell');
      }
    } else {
      rec[h] = cell;
    }
  });
  return rec;
}

/**
 * A query's gold answer: a non-empty string, or a number (gold answers such as a count or a year), kept as its
 * decimal string so every answer measure compares text with text. Absent or null: no answer.
 */
function answerField(file: string, line: number, obj: JsonObject, who: string): string | undefined {
  const v = obj['answer'];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw new InputError(file, line, `${who}: field "answer" must be a string or a number, got ${shown(v, false)}`);
  if (v.trim() === '') throw new InputError(file, line, `${who}: answer is empty`, { hint: 'leave the field out when the query has no gold answer' });
  return v;
}

function objectField(file: string, line: number, obj: JsonObject, field: string): Record<string, JsonValue> | undefined {
  const v = obj[field];
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InputError(file, line, `field "${field}" must be a JSON object`);
  return v as Record<string, JsonValue>;
}

function checkKnown(file: string, line: number, key: string, known: readonly string[], what: string): void {
  if (!known.includes(key)) {
    throw new InputError(file, line, `unknown ${what} "${key}"`, { hint: `known ${what}s: ${known.join(', ')}` });
  }
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isFile() === true;
}
