import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { InputError } from '../harness/errors.js';
import { readCsv } from './csv.js';
import { idField, readJsonl, stringField, type JsonObject } from './lines.js';
import type { Document, EvalSet, JsonValue, Query } from './types.js';

export const MEMORY_CORPUS_FIELDS = ['id', 'text', 'title', 'date', 'category', 'importance', 'sensitive', 'metadata'] as const;
export const MEMORY_QUERY_FIELDS = ['id', 'text', 'stratum', 'qrels', 'scope', 'metadata'] as const;

/** The key in a memory's `metadata` that names the retrieval scope it belongs to (queries name it in `scope`). */
export const MEMORY_SCOPE_KEY = 'scope';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * Reads our own `memory` eval-set format (MEMORY-FORMAT.md; README "Eval-set formats"): a folder with
 * `corpus.jsonl` or `corpus.csv` and `queries.jsonl`.
 *
 * - Documents: `date` -> timestamp (ISO 8601 date or date-time, checked), metadata = `{category, importance,
 *   ...metadata}` (absent keys omitted), `sensitive` defaults to false.
 * - Queries: `qrels` is `{docId: grade}` with integer grades 0..3 (0 = judged not relevant).
 * - Scopes: a query's `scope` names the memories whose `metadata.scope` equals it; memories without one belong
 *   to no scope. A scope that no memory declares is an error at the query's line.
 * - Errors name file, line and field: unknown fields (typo protection, listing the known ones), wrong types,
 *   duplicate ids, a qrels doc id missing from the corpus. A query without any grade >= 1 is kept and counted in
 *   `notes`.
 */
export async function loadMemory(dir: string): Promise<EvalSet> {
  const root = resolve(dir);
  const jsonl = join(root, 'corpus.jsonl');
  const csv = join(root, 'corpus.csv');
  const hasJsonl = await isFile(jsonl);
  const hasCsv = await isFile(csv);
  if (hasJsonl && hasCsv) throw new InputError(root, undefined, 'both corpus.jsonl and corpus.csv exist; keep one');
  if (!hasJsonl && !hasCsv) throw new InputError(jsonl, undefined, 'no corpus: expected corpus.jsonl or corpus.csv');

  const documents: Document[] = [];
  const docIds = new Set<string>();
  const scopes = new Map<string, string[]>();
  const addDoc = (file: string, line: number, obj: JsonObject) => {
    const doc = memoryDocument(file, line, obj);
    if (docIds.has(doc.id)) throw new InputError(file, line, `duplicate memory id "${doc.id}"`);
    docIds.add(doc.id);
    documents.push(doc);
    const scope = doc.metadata?.[MEMORY_SCOPE_KEY];
    if (scope !== undefined) {
      if (typeof scope !== 'string' || scope === '') throw new InputError(file, line, `metadata.${MEMORY_SCOPE_KEY} must be a non-empty string`);
      const list = scopes.get(scope) ?? [];
      list.push(doc.id);
      scopes.set(scope, list);
    }
  };
  if (hasJsonl) {
    for await (const { obj, line } of readJsonl(jsonl)) addDoc(jsonl, line, obj);
  } else {
    const { header, rows } = await readCsv(csv);
    for (const h of header) checkKnown(csv, 1, h, MEMORY_CORPUS_FIELDS, 'column');
    for (const { cells, line } of rows) addDoc(csv, line, csvRecord(csv, line, header, cells));
  }

  const queriesPath = join(root, 'queries.jsonl');
  const queries: Query[] = [];
  const qrels = new Map<string, Map<string, number>>();
  const queryIds = new Set<string>();
  let noRelevant = 0;
  for await (const { obj, line } of readJsonl(queriesPath)) {
    for (const k of Object.keys(obj)) checkKnown(queriesPath, line, k, MEMORY_QUERY_FIELDS, 'field');
    const id = idField(queriesPath, line, obj, 'id');
    if (queryIds.has(id)) throw new InputError(queriesPath, line, `duplicate query id "${id}"`);
    queryIds.add(id);
    const text = stringField(queriesPath, line, obj, 'text', true);
    const stratum = stringField(queriesPath, line, obj, 'stratum', true);
    if (stratum.trim() === '') throw new InputError(queriesPath, line, `query "${id}": stratum is empty`);
    const scope = stringField(queriesPath, line, obj, 'scope', false);
    if (scope !== undefined && !scopes.has(scope)) {
      throw new InputError(queriesPath, line, `query "${id}": scope "${scope}" is not declared by any memory (metadata.${MEMORY_SCOPE_KEY})`);
    }
    const metadata = objectField(queriesPath, line, obj, 'metadata');
    const rawQrels = obj['qrels'];
    if (rawQrels === undefined) throw new InputError(queriesPath, line, `query "${id}": missing field "qrels"`);
    if (rawQrels === null || typeof rawQrels !== 'object' || Array.isArray(rawQrels)) {
      throw new InputError(queriesPath, line, `query "${id}": qrels must be an object {docId: grade}`);
    }
    const judged = new Map<string, number>();
    for (const [docId, grade] of Object.entries(rawQrels as JsonObject)) {
      if (!docIds.has(docId)) throw new InputError(queriesPath, line, `query "${id}": qrels doc id "${docId}" is not in the corpus`);
      if (typeof grade !== 'number' || !Number.isInteger(grade) || grade < 0 || grade > 3) {
        throw new InputError(queriesPath, line, `query "${id}": grade of "${docId}" must be an integer 0..3, got ${JSON.stringify(grade)}`);
      }
      judged.set(docId, grade);
    }
    if (![...judged.values()].some((g) => g >= 1)) noRelevant += 1;
    if (judged.size > 0) qrels.set(id, judged);
    queries.push({
      id,
      text,
      stratum,
      ...(scope === undefined ? {} : { scope }),
      ...(metadata === undefined ? {} : { metadata }),
    });
  }
  const notes = noRelevant > 0 ? [`${noRelevant} ${noRelevant === 1 ? 'query has' : 'queries have'} no relevant document (no grade >= 1)`] : [];
  return {
    name: basename(root),
    documents,
    queries,
    qrels,
    ...(scopes.size > 0 ? { scopes } : {}),
    notes,
  };
}

function memoryDocument(file: string, line: number, obj: JsonObject): Document {
  for (const k of Object.keys(obj)) checkKnown(file, line, k, MEMORY_CORPUS_FIELDS, 'field');
  const id = idField(file, line, obj, 'id');
  const text = stringField(file, line, obj, 'text', true);
  if (text.trim() === '') throw new InputError(file, line, `memory "${id}": text is empty`);
  const title = stringField(file, line, obj, 'title', false);
  const date = stringField(file, line, obj, 'date', false);
  if (date !== undefined && (!ISO_DATE.test(date) || Number.isNaN(Date.parse(date)))) {
    throw new InputError(file, line, `memory "${id}": date ${JSON.stringify(date)} is not ISO 8601 (2024-03-05 or 2024-03-05T14:30:00Z)`);
  }
  const category = stringField(file, line, obj, 'category', false);
  const importance = obj['importance'];
  if (importance !== undefined && (typeof importance !== 'number' || !(importance >= 0 && importance <= 1))) {
    throw new InputError(file, line, `memory "${id}": importance must be a number in [0, 1], got ${JSON.stringify(importance)}`);
  }
  const sensitive = obj['sensitive'];
  if (sensitive !== undefined && typeof sensitive !== 'boolean') {
    throw new InputError(file, line, `memory "${id}": sensitive must be true or false, got ${JSON.stringify(sensitive)}`);
  }
  const extra = objectField(file, line, obj, 'metadata');
  const metadata: Record<string, JsonValue> = {
    ...(category === undefined ? {} : { category }),
    ...(importance === undefined ? {} : { importance }),
    ...extra,
  };
  return {
    id,
    text,
    ...(title === undefined ? {} : { title }),
    ...(date === undefined ? {} : { timestamp: date }),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    sensitive: sensitive === true,
  };
}

/** CSV cells are text: an empty cell is an absent field; importance, sensitive and metadata are converted. */
function csvRecord(file: string, line: number, header: readonly string[], cells: readonly string[]): JsonObject {
  const rec: Record<string, JsonValue> = {};
  header.forEach((h, i) => {
    const cell = cells[i] ?? '';
    if (cell === '') return;
    if (h === 'importance') {
      const n = Number(cell);
      if (!Number.isFinite(n)) throw new InputError(file, line, `importance ${JSON.stringify(cell)} is not a number`);
      rec[h] = n;
    } else if (h === 'sensitive') {
      if (cell !== 'true' && cell !== 'false') throw new InputError(file, line, `sensitive must be true or false, got ${JSON.stringify(cell)}`);
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
