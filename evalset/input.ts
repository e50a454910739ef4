/**
 * What a caller of the Library may pass where the workbench holds Maps: Qrels, Runs, unit maps and the maps of
 * an EvalSet, as Maps or in the plain-object form (`{ q1: { d1: 1 } }`, the shape ranx, ir_measures and
 * pytrec_eval take), or a mix of both. The public functions of the package entries normalise their arguments
 * here, once, at the call; the code behind them keeps its Map types and behaviour. A Map that is already valid
 * is returned as it is (no copy). Anything else is a TypeError naming the function, the argument, the entry
 * and what to pass, never a number computed from a wrong shape. No message quotes a Document's text.
 */
import type { Corpus, Document, EvalSet, Qrels, Query, Run } from './types.js';

/** String-keyed data as a Map or as a plain object. */
export type MapLike<V> = ReadonlyMap<string, V> | Readonly<Record<string, V>>;

/** Qrels as Maps or plain objects: `{ queryId: { docId: grade } }`, every grade an integer. */
export type QrelsLike = MapLike<MapLike<number>>;

/** A Run as Maps or plain objects: `{ queryId: { docId: score } }`, every score a finite number. */
export type RunLike = MapLike<MapLike<number>>;

/** An EvalSet whose Qrels, scopes and unit maps may be plain objects. */
export interface EvalSetLike {
  readonly name: string;
  readonly documents: Corpus;
  readonly queries: readonly Query[];
  readonly qrels: QrelsLike;
  readonly scopes?: MapLike<readonly string[]>;
  readonly units?: MapLike<MapLike<string>>;
  readonly notes?: readonly string[];
}

/** How a value looks, for messages: its kind, never its content (a Document's text may be Sensitive). */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Map) return 'a Map';
  if (v instanceof Set) return 'a Set';
  if (typeof v === 'object') {
    const name = (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' && name !== '' && name !== 'Object' ? `a ${name}` : 'an object';
  }
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'undefined') return 'undefined';
  return `a ${typeof v}`;
}

/** A plain object: an object literal, JSON.parse output or Object.create(null), from any realm; not an array. */
export function isPlainObject(v: unknown): v is Readonly<Record<string, unknown>> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** A Map, or another object that reads like a ReadonlyMap (get, has and entries methods, iterable). */
function isMapLike(v: unknown): v is ReadonlyMap<unknown, unknown> {
  if (v instanceof Map) return true;
  if (typeof v !== 'object' || v === null) return false;
  const m = v as Partial<ReadonlyMap<unknown, unknown>>;
  return typeof m.get === 'function' && typeof m.has === 'function' && typeof m.entries === 'function' && typeof m[Symbol.iterator] === 'function';
}

const key = (k: string): string => `[${JSON.stringify(k)}]`;

function notMap(fn: string, path: string, shape: string, got: unknown): TypeError {
  return new TypeError(`${fn}: ${path} must be a Map or a plain object of ${shape}; got ${kindOf(got)}`);
}

function notStringKey(fn: string, path: string, what: string, k: unknown): TypeError {
  return new TypeError(`${fn}: ${path} has a key that is ${kindOf(k)}; every ${what} must be a string`);
}

type Check<V> = (v: unknown, path: () => string) => V;

/**
 * `value` as a ReadonlyMap<string, V>, each value passed through `each` (which throws on a bad one and returns
 * the value itself when it needs no change). A Map whose values all come back unchanged is returned as is.
 */
function mapOf<V>(fn: string, path: string, value: unknown, shape: string, keyName: string, each: Check<V>): ReadonlyMap<string, V> {
  if (isMapLike(value)) {
    let out: Map<string, V> | undefined = value instanceof Map ? undefined : new Map();
    let i = 0;
    for (const [k, v] of value) {
      if (typeof k !== 'string') throw notStringKey(fn, path, keyName, k);
      const c = each(v, () => `${path}${key(k)}`);
      if (out === undefined && c !== v) {
        out = new Map();
        let j = 0;
        for (const [k0, v0] of value as ReadonlyMap<string, V>) {
          if (j++ === i) break;
          out.set(k0, v0);
        }
      }
      out?.set(k, c);
      i++;
    }
    return out ?? (value as ReadonlyMap<string, V>);
  }
  if (isPlainObject(value)) {
    const out = new Map<string, V>();
    for (const k of Object.keys(value))
      out.set(
        k,
        each(value[k], () => `${path}${key(k)}`),
      );
    return out;
  }
  throw notMap(fn, path, shape, value);
}

/**
 * One query's `docId -> number` entries; `ok` says whether a number is allowed, `rule` says what is. The hot
 * path of large Runs: a Map is checked in one loop and returned as it is.
 */
function numbersOf(fn: string, path: string, value: unknown, shape: string, ok: (x: number) => boolean, rule: string): ReadonlyMap<string, number> {
  const bad = (k: string, x: unknown) => new TypeError(`${fn}: ${path}${key(k)} is ${kindOf(x)}; ${rule}`);
  if (value instanceof Map) {
    for (const [k, x] of value as Map<unknown, unknown>) {
      if (typeof k !== 'string') throw notStringKey(fn, path, 'document id', k);
      if (typeof x !== 'number' || !ok(x)) throw bad(k, x);
    }
    return value as ReadonlyMap<string, number>;
  }
  const out = new Map<string, number>();
  const put = (k: unknown, x: unknown) => {
    if (typeof k !== 'string') throw notStringKey(fn, path, 'document id', k);
    if (typeof x !== 'number' || !ok(x)) throw bad(k, x);
    out.set(k, x);
  };
  if (isMapLike(value)) for (const [k, x] of value) put(k, x);
  else if (isPlainObject(value)) for (const k of Object.keys(value)) put(k, value[k]);
  else throw notMap(fn, path, shape, value);
  return out;
}

const GRADE_RULE = 'a grade must be an integer (grades below the relevance level, default 1, are judged not relevant)';
const SCORE_RULE = 'a score must be a finite number (higher ranks first)';

/** One query's `docId -> score` entries (a Run's row), checked: ids strings, scores finite numbers. */
export function toScores(fn: string, arg: string, value: unknown): ReadonlyMap<string, number> {
  return numbersOf(fn, arg, value, 'docId -> score, e.g. { d1: 0.9, d2: 0.4 }', Number.isFinite, SCORE_RULE);
}

/** Qrels from Maps or plain objects, checked: ids strings, grades integers. */
export function toQrels(fn: string, arg: string, value: unknown): Qrels {
  return mapOf(fn, arg, value, 'queryId -> { docId: grade }, e.g. { q1: { d1: 1, d2: 0 } }', 'query id', (docs, at) =>
    numbersOf(fn, at(), docs, 'docId -> grade, e.g. { d1: 1, d2: 0 }', Number.isInteger, GRADE_RULE),
  );
}

/** A Run from Maps or plain objects, checked: ids strings, scores finite numbers. */
export function toRun(fn: string, arg: string, value: unknown): Run {
  return mapOf(fn, arg, value, 'queryId -> { docId: score }, e.g. { q1: { d1: 0.9, d2: 0.4 } }', 'query id', (docs, at) =>
    numbersOf(fn, at(), docs, 'docId -> score, e.g. { d1: 0.9, d2: 0.4 }', Number.isFinite, SCORE_RULE),
  );
}

/** A `docId -> unitId` map (a unit map) from a Map or a plain object. */
export function toUnitMap(fn: string, arg: string, value: unknown): ReadonlyMap<string, string> {
  return mapOf(fn, arg, value, 'docId -> unitId, e.g. { t1: "s1", t2: "s1" }', 'document id', (u, at) => {
    if (typeof u !== 'string') throw new TypeError(`${fn}: ${at()} is ${kindOf(u)}; a unit id must be a string`);
    return u;
  });
}

function stringField(fn: string, path: string, obj: Readonly<Record<string, unknown>>, field: string, optional: boolean): void {
  const v = obj[field];
  if (v === undefined && optional) return;
  if (typeof v !== 'string') throw new TypeError(`${fn}: ${path}.${field} must be a string; got ${kindOf(v)}`);
}

function arrayOf(fn: string, path: string, value: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(value)) throw new TypeError(`${fn}: ${path} must be an array of ${what}; got ${kindOf(value)}`);
  return value;
}

/** A Corpus, checked: an array of Documents, each with a string `id` and `text` (messages name ids only). */
export function toCorpus(fn: string, arg: string, value: unknown): Corpus {
  const docs = arrayOf(fn, arg, value, 'Documents { id, text, title?, timestamp?, metadata?, sensitive? }');
  docs.forEach((d, i) => {
    const at = `${arg}[${i}]`;
    if (typeof d !== 'object' || d === null || Array.isArray(d)) throw new TypeError(`${fn}: ${at} must be a Document { id, text, ... }; got ${kindOf(d)}`);
    const doc = d as Readonly<Record<string, unknown>>;
    stringField(fn, at, doc, 'id', false);
    stringField(fn, at, doc, 'text', false);
    stringField(fn, at, doc, 'title', true);
    stringField(fn, at, doc, 'timestamp', true);
  });
  return docs as readonly Document[];
}

function toQueries(fn: string, arg: string, value: unknown): readonly Query[] {
  const queries = arrayOf(fn, arg, value, 'Queries { id, text, stratum, scope? }');
  queries.forEach((q, i) => {
    const at = `${arg}[${i}]`;
    if (typeof q !== 'object' || q === null || Array.isArray(q)) throw new TypeError(`${fn}: ${at} must be a Query { id, text, stratum }; got ${kindOf(q)}`);
    const query = q as Readonly<Record<string, unknown>>;
    for (const f of ['id', 'text', 'stratum']) stringField(fn, at, query, f, false);
    stringField(fn, at, query, 'scope', true);
  });
  return queries as readonly Query[];
}

/**
 * An EvalSet from an object whose qrels, scopes and units may be Maps or plain objects, checked. Returns
 * `value` itself when nothing needed converting.
 */
export function toEvalSet(fn: string, arg: string, value: unknown): EvalSet {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || isMapLike(value)) {
    throw new TypeError(`${fn}: ${arg} must be an EvalSet object { name, documents, queries, qrels, scopes?, units? }; got ${kindOf(value)}`);
  }
  const es = value as Readonly<Record<string, unknown>>;
  stringField(fn, arg, es, 'name', false);
  toCorpus(fn, `${arg}.documents`, es['documents']);
  toQueries(fn, `${arg}.queries`, es['queries']);
  const qrels = toQrels(fn, `${arg}.qrels`, es['qrels']);
  const scopes =
    es['scopes'] === undefined
      ? undefined
      : mapOf(fn, `${arg}.scopes`, es['scopes'], 'scopeId -> docIds, e.g. { conv1: ["d1", "d2"] }', 'scope id', (ids, at) => {
          const list = arrayOf(fn, at(), ids, 'document ids');
          list.forEach((d, i) => {
            if (typeof d !== 'string') throw new TypeError(`${fn}: ${at()}[${i}] is ${kindOf(d)}; a document id must be a string`);
          });
          return list as readonly string[];
        });
  const units =
    es['units'] === undefined
      ? undefined
      : mapOf(fn, `${arg}.units`, es['units'], 'unit -> { docId: unitId }, e.g. { session: { t1: "s1" } }', 'unit name', (m, at) => toUnitMap(fn, at(), m));
  if (qrels === es['qrels'] && scopes === es['scopes'] && units === es['units']) return value as EvalSet;
  return { ...(value as EvalSet), qrels, ...(scopes === undefined ? {} : { scopes }), ...(units === undefined ? {} : { units }) };
}
