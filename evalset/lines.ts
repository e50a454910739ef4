import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { InputError, InputProblems } from '../harness/errors.js';
import { LIMITS } from './limits.js';
import type { JsonValue } from './types.js';

/**
 * Shared line-level plumbing for the eval-set readers: streaming line iteration (BEIR corpora reach gigabytes,
 * so files are never slurped whole), JSON-object lines and id checks that all report `file:line`.
 */

export type JsonObject = { readonly [k: string]: JsonValue };

/**
 * Every line of a UTF-8 text file with its 1-based number; a trailing `\r` is removed, and so is a byte-order
 * mark at the start (editors on Windows write one; it would otherwise become part of the first id).
 * Missing file: InputError.
 */
export async function* readLines(file: string): AsyncGenerator<{ text: string; line: number }> {
  await assertFile(file);
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const raw of rl) {
      line += 1;
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      yield { text: line === 1 ? stripBom(text) : text, line };
    }
  } catch (err) {
    // A line longer than V8's largest string (2^29 - 24 characters) fails inside readline with a bare RangeError.
    if (!(err instanceof RangeError)) throw err;
    throw new InputError(file, line + 1, `the line is longer than the ${MAX_STRING_LENGTH.toLocaleString('en-US')} characters one line may hold`, {
      hint: 'one line is one record: check the file is JSONL or TSV with newlines (limits: docs/limits.md)',
    });
  } finally {
    rl.close();
  }
}

/** V8's largest string on 64-bit platforms, in UTF-16 code units: one line of an input must fit in one. */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

/** `text` without a leading U+FEFF byte-order mark. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** How many problems a loader collects before it stops and reports them. */
export const MAX_PROBLEMS = 50;

/**
 * The problems a loader meets, collected so one run reports every mistake (up to `max`) instead of the first.
 * Loaders wrap each line (or field) in {@link Problems.attempt}; an InputError is recorded and loading goes on,
 * any other error propagates. At `max` problems loading stops with all of them.
 */
export class Problems {
  private readonly list: InputError[] = [];
  constructor(readonly max = MAX_PROBLEMS) {}

  get count(): number {
    return this.list.length;
  }

  add(err: unknown): void {
    if (!(err instanceof InputError)) throw err;
    this.list.push(err);
    if (this.list.length >= this.max) throw new InputProblems(this.list, { truncated: true });
  }

  /** `fn()`, or undefined when it threw an InputError (recorded). */
  attempt<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.add(err);
      return undefined;
    }
  }

  /** Throws what was collected: the one InputError as itself, several as one InputProblems. */
  throwIfAny(): void {
    if (this.list.length === 1) throw this.list[0]!;
    if (this.list.length > 1) throw new InputProblems(this.list);
  }
}

/**
 * V8's JSON.parse message without the quoted text around the error: the line may be a sensitive document,
 * so only the position is kept ("Unexpected token 'x', \"...\" is not valid JSON" quotes the input).
 */
export function jsonSyntaxMessage(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  if (/ is not valid JSON$/.test(msg) || msg.includes('"')) return 'not valid JSON (unexpected character)';
  return `not valid JSON (${msg})`;
}

export async function assertFile(file: string): Promise<void> {
  const st = await stat(file).catch(() => undefined);
  if (st === undefined) throw new InputError(file, undefined, 'file not found');
  if (!st.isFile()) throw new InputError(file, undefined, 'not a regular file');
}

/**
 * The JSON objects of a JSONL file. Blank lines are skipped (a trailing newline is common); anything else
 * that is not a JSON object is an error naming the line, so a truncated file never loads as a shorter one.
 * With `problems`, a bad line is recorded there and skipped instead of thrown, and handed to `onBadLine`.
 */
export async function* readJsonl(file: string, problems?: Problems, onBadLine?: (text: string) => void): AsyncGenerator<{ obj: JsonObject; line: number }> {
  for await (const { text, line } of readLines(file)) {
    if (text.trim() === '') continue;
    let value: unknown;
    let error: InputError | undefined;
    try {
      value = JSON.parse(text);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) error = new InputError(file, line, 'expected a JSON object on this line');
    } catch (e) {
      error = new InputError(file, line, jsonSyntaxMessage(e), {
        hint: 'each line must be one complete JSON object; a truncated download ends mid-line',
      });
    }
    if (error === undefined) yield { obj: value as JsonObject, line };
    else if (problems === undefined) throw error;
    else {
      onBadLine?.(text);
      problems.add(error);
    }
  }
}

/** An id field: a non-empty string without whitespace (TREC formats split on whitespace). Integers are accepted as their decimal text. */
export function idField(file: string, line: number, obj: JsonObject, field: string): string {
  const v = obj[field];
  if (v === undefined) throw new InputError(file, line, `missing field "${field}"`);
  const id = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
  if (typeof id !== 'string') throw new InputError(file, line, `field "${field}" must be a string, got ${JSON.stringify(v)}`);
  checkId(file, line, field, id);
  return id;
}

export function checkId(file: string, line: number | undefined, what: string, id: string): void {
  if (id === '') throw new InputError(file, line, `${what} is empty`);
  if (/\s/.test(id))
    throw new InputError(file, line, `${what} ${JSON.stringify(id)} contains whitespace`, {
      hint: 'ids must not contain whitespace: TREC qrels and run files split on it',
    });
}

/** A string field; `required` makes absence an error, an empty string is allowed (callers decide). */
export function stringField(file: string, line: number, obj: JsonObject, field: string, required: true): string;
export function stringField(file: string, line: number, obj: JsonObject, field: string, required: false): string | undefined;
export function stringField(file: string, line: number, obj: JsonObject, field: string, required: boolean): string | undefined {
  const v = obj[field];
  if (v === undefined || (v === null && !required)) {
    if (required) throw new InputError(file, line, `missing field "${field}"`);
    return undefined;
  }
  if (typeof v !== 'string') throw new InputError(file, line, `field "${field}" must be a string, got ${JSON.stringify(v)}`);
  return v;
}

/** A relevance grade: an integer written in decimal (trec_eval reads grades with atol; we refuse anything else). */
export function parseGrade(file: string, line: number, text: string): number {
  if (!/^-?\d+$/.test(text)) {
    throw new InputError(file, line, `relevance grade ${JSON.stringify(text)} is not an integer`);
  }
  return Number.parseInt(text, 10);
}

/** Parses a whole JSON file; a syntax error names the line (from V8's "at position N") and hints at truncation. */
export async function readJsonFile(file: string): Promise<unknown> {
  await assertFile(file);
  const text = stripBom(await readFile(file, 'utf8'));
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const msg = (e as Error).message;
    const pos = /at position (\d+)/.exec(msg);
    const line = pos === null ? text.split('\n').length : text.slice(0, Number(pos[1])).split('\n').length;
    throw new InputError(file, line, jsonSyntaxMessage(e), { hint: 'the file may be truncated; download it again' });
  }
}

/** Options of {@link readJsonArray}. */
export interface JsonArrayOptions {
  /**
   * The longest string (or key) read, in characters: a longer one is refused naming the file and the element,
   * before it is built whole. Default {@link LIMITS.documentChars}: no string of a record may be longer than a
   * Document's text (docs/limits.md).
   */
  readonly maxStringChars?: number;
}

/** The tokens that start a value: at depth 1 (the top array), the next element. */
const ELEMENT_STARTS = new Set(['startObject', 'startArray', 'startString', 'numberValue', 'nullValue', 'trueValue', 'falseValue']);

/** A token of stream-json's parser (the names the string guard reads). */
interface JsonToken {
  readonly name: string;
  readonly value?: unknown;
}

/**
 * A pipeline stage between stream-json's parser and its array streamer that builds each string from the chunks
 * the parser streams, and stops at the first one past `max` characters: the parser's own packing would build a
 * 600 MB string whole and fail with V8's bare "Invalid string length", naming nothing. Strings come out packed,
 * as the streamer expects. Counts the array's elements, and remembers the `question_id` of the current one, to
 * name where the string is.
 */
function stringGuard(file: string, max: number, skip: symbol): (t: JsonToken) => JsonToken | symbol {
  let depth = 0;
  let index = -1;
  let id: string | undefined;
  let idNext = false;
  let parts: string[] = [];
  let length = 0;
  const packed = (name: string, d: number): JsonToken => {
    const value = parts.join('');
    parts = [];
    length = 0;
    if (d === 2 && name === 'stringValue' && idNext) id = value;
    idNext = d === 2 && name === 'keyValue' && value === 'question_id';
    return { name, value };
  };
  return (t) => {
    if (depth === 1 && ELEMENT_STARTS.has(t.name)) {
      index += 1;
      id = undefined;
    }
    switch (t.name) {
      case 'startString':
      case 'startKey':
        return skip;
      case 'stringChunk':
        length += (t.value as string).length;
        if (length > max) throw stringTooLong(file, index, id, max);
        parts.push(t.value as string);
        return skip;
      case 'endString':
        return packed('stringValue', depth);
      case 'endKey':
        return packed('keyValue', depth);
      case 'startObject':
      case 'startArray':
        depth += 1;
        return t;
      case 'endObject':
      case 'endArray':
        depth -= 1;
        return t;
      default:
        return t;
    }
  };
}

/** A string past the guard's limit, named by the element it is in (never quoted: it may be Sensitive). */
function stringTooLong(file: string, index: number, id: string | undefined, max: number): InputError {
  const where = index < 0 ? 'the array' : `element [${index}]${id === undefined ? '' : ` (question_id ${id})`}`;
  return new InputError(file, undefined, `${where} holds a string of more than ${max.toLocaleString('en-US')} characters (read no further)`, {
    hint: 'no text of a record may be longer than a Document (limits: docs/limits.md); check the file is the dataset it should be',
  });
}

/** The UTF-8 byte-order mark, as the bytes a file starts with. */
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The elements of a file whose top level is one JSON array, one at a time, with their 0-based index: a streaming
 * parser (stream-json, docs/adr/0042-streamed-json-datasets.md) reads the file in 64 KiB pieces, so memory holds
 * one element and what the caller keeps, never the whole text (LongMemEval-M is 2.7 GB; one string holds at most
 * 512 MiB). Values equal what JSON.parse gives. A leading byte-order mark is skipped. A syntax error names the
 * bytes it was found in (these files are often one line, so a line number would say nothing); a top level that
 * is not an array is an error too. Missing file: InputError.
 */
export async function* readJsonArray(file: string, opts: JsonArrayOptions = {}): AsyncGenerator<{ value: unknown; index: number }> {
  await assertFile(file);
  let read = 0;
  let chunkStart = 0;
  const counted = (chunk: Buffer): Buffer => {
    chunkStart = read;
    read += chunk.length;
    return chunkStart === 0 && chunk.subarray(0, 3).equals(UTF8_BOM) ? chunk.subarray(3) : chunk;
  };
  // Loaded here, not at the top: every `harness eval` reads lines.ts and would pay 30-45 ms for a parser it never uses.
  const [{ chainUnchecked, none }, { parser }, { streamArray }] = await Promise.all([
    import('stream-chain'),
    import('stream-json/parser.js'),
    import('stream-json/streamers/stream-array.js'),
  ]);
  // Strings and keys are streamed, and packed by the guard, so none is built past its limit.
  const tokens = parser({ streamValues: false, packStrings: false, packKeys: false });
  const guard = stringGuard(file, opts.maxStringChars ?? LIMITS.documentChars, none);
  const pipeline = chainUnchecked([createReadStream(file), counted, tokens, guard, streamArray()]);
  try {
    for await (const item of pipeline as AsyncIterable<{ key: number; value: unknown }>) yield { value: item.value, index: item.key };
  } catch (e) {
    throw jsonStreamError(file, e, chunkStart, read);
  } finally {
    pipeline.destroy();
  }
}

/** What a failed streamed parse says: where, in bytes, and what it expected (stream-json never quotes the input). */
function jsonStreamError(file: string, e: unknown, from: number, to: number): unknown {
  if (e instanceof InputError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  if (/Top-level object should be an array/.test(msg)) {
    return new InputError(file, undefined, 'expected a JSON array at the top level', { hint: 'the file must be one JSON array of records' });
  }
  if (!/^Parser /.test(msg)) return e;
  const where = to === 0 ? 'in an empty file' : `within bytes ${from.toLocaleString('en-US')}-${(to - 1).toLocaleString('en-US')}`;
  return new InputError(file, undefined, `not valid JSON ${where} (${msg.replace(/^Parser (cannot parse input: |has )/, '')})`, {
    hint: 'the file may be truncated; download it again',
  });
}

/** Formats zod issues as `path: message` lines for an InputError about a JSON document's structure. */
export function describeIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[], max = 5): string {
  const lines = issues.slice(0, max).map((i) => `${formatPath(i.path)}: ${i.message}`);
  if (issues.length > max) lines.push(`... and ${issues.length - max} more`);
  return lines.join('; ');
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out === '' ? '(root)' : out;
}

/** Names for a note: all of them up to `max`, then a count of the rest, so notes stay readable on big sets. */
export function nameList(items: readonly string[], max = 20): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')}, ... (${items.length - max} more)`;
}
