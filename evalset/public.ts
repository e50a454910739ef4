/**
 * The functions of `harness/evalset` that take eval-set data, as the Library exports them: Qrels, Runs and an
 * EvalSet's maps may be Maps or plain objects (`{ q1: { d1: 1 } }`); they are checked and converted here
 * (input.ts) and passed to the Map-based functions the workbench calls directly. A wrong shape is a TypeError
 * naming the argument and what to pass.
 */
import { stderrLogger, type Logger } from '../harness/log.js';
import { kindOf, toCorpus, toEvalSet, toQrels, toRun, type EvalSetLike, type QrelsLike, type RunLike } from './input.js';
import { evalSetFingerprint as evalSetFingerprintOf, corpusFingerprint as corpusFingerprintOf } from './fingerprint.js';
import { loadEvalSet as loadEvalSetWith, loadEvalSetChecked as loadEvalSetCheckedWith, type EvalSetSpec } from './load.js';
import { applyStrataFile as applyStrataFileTo, readStrataFile as readStrataFileOf } from './strata.js';
import {
  formatTrecQrels as formatTrecQrelsOf,
  formatTrecRun as formatTrecRunOf,
  writeTrecQrels as writeTrecQrelsOf,
  writeTrecRun as writeTrecRunOf,
} from './trec.js';
import type { Corpus, EvalSet } from './types.js';
import { validateEvalSet as validateEvalSetOf, type Validation } from './validate.js';

function checkString(fn: string, arg: string, v: unknown): void {
  if (typeof v !== 'string') throw new TypeError(`${fn}: ${arg} must be a string; got ${kindOf(v)}`);
}

function checkSpec(fn: string, spec: unknown): EvalSetSpec {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
    throw new TypeError(
      `${fn}: spec must be an object { format, path, split?, strata?, options? }, e.g. { format: 'beir', path: 'data/scifact' }; got ${kindOf(spec)}`,
    );
  }
  const s = spec as Readonly<Record<string, unknown>>;
  checkString(fn, 'spec.format', s['format']);
  checkString(fn, 'spec.path', s['path']);
  for (const k of ['split', 'strata', 'source']) if (s[k] !== undefined) checkString(fn, `spec.${k}`, s[k]);
  return spec as EvalSetSpec;
}

/** Where a Library caller passes no Logger: warnings to stderr, progress and counts not at all. */
const quietLogger = (): Logger => stderrLogger({ quiet: true });

/**
 * Loads, restratifies and validates an eval set, returning the validation instead of throwing on its problems.
 * `log` defaults to warnings on stderr only.
 */
export async function loadEvalSetChecked(spec: EvalSetSpec, log?: Logger): Promise<{ evalSet: EvalSet; validation: Validation }> {
  return loadEvalSetCheckedWith(checkSpec('loadEvalSetChecked', spec), log ?? quietLogger());
}

/**
 * Loads an eval set of any format (`beir`, `memory`, `locomo`, `longmemeval`; see evalSetFormats), applies the
 * strata file and validates it: any validation problem is an InputError. `log` defaults to warnings on
 * stderr only.
 */
export async function loadEvalSet(spec: EvalSetSpec, log?: Logger): Promise<EvalSet> {
  return loadEvalSetWith(checkSpec('loadEvalSet', spec), log ?? quietLogger());
}

/**
 * Structural checks every eval set must pass before it is scored (duplicate or ill-formed ids, qrels naming
 * unknown documents or queries, scopes and unit maps naming unknown documents, ...). Its qrels, scopes and
 * units may be Maps or plain objects.
 */
export function validateEvalSet(es: EvalSetLike): Validation {
  return validateEvalSetOf(toEvalSet('validateEvalSet', 'evalSet', es));
}

/** sha256 over the Documents of a Corpus, in order. */
export function corpusFingerprint(docs: Corpus): string {
  return corpusFingerprintOf(toCorpus('corpusFingerprint', 'docs', docs));
}

/** sha256 over documents, queries, qrels, scopes and units; the same for Maps and plain objects of the same data. */
export function evalSetFingerprint(es: EvalSetLike): string {
  return evalSetFingerprintOf(toEvalSet('evalSetFingerprint', 'evalSet', es));
}

/**
 * Reads a strata file (`queryId<TAB>stratum` per line); `knownQueryIds` (a Set or an array) are the ids it may
 * name.
 */
export async function readStrataFile(file: string, knownQueryIds: ReadonlySet<string> | readonly string[]): Promise<Map<string, string>> {
  const fn = 'readStrataFile';
  checkString(fn, 'file', file);
  if (Array.isArray(knownQueryIds)) return readStrataFileOf(file, new Set(knownQueryIds as readonly string[]));
  if (!(knownQueryIds instanceof Set)) throw new TypeError(`${fn}: knownQueryIds must be a Set or an array of query ids; got ${kindOf(knownQueryIds)}`);
  return readStrataFileOf(file, knownQueryIds);
}

/** A copy of `es` whose listed queries take the strata file's stratum; unlisted queries keep theirs. */
export async function applyStrataFile(es: EvalSetLike, file: string): Promise<EvalSet> {
  const fn = 'applyStrataFile';
  const evalSet = toEvalSet(fn, 'evalSet', es);
  checkString(fn, 'file', file);
  return applyStrataFileTo(evalSet, file);
}

/** TREC run text of `run` (a Map or a plain object): queries in id order, each ranked in trec_eval order. */
export function formatTrecRun(run: RunLike, tag: string): string {
  checkString('formatTrecRun', 'tag', tag);
  return formatTrecRunOf(toRun('formatTrecRun', 'run', run), tag);
}

/** Writes `run` (a Map or a plain object) as a TREC run file, atomically. */
export async function writeTrecRun(path: string, run: RunLike, tag: string): Promise<void> {
  const fn = 'writeTrecRun';
  checkString(fn, 'path', path);
  checkString(fn, 'tag', tag);
  return writeTrecRunOf(path, toRun(fn, 'run', run), tag);
}

/** TREC qrels text of `qrels` (a Map or a plain object): queries and documents in id order, iter column 0. */
export function formatTrecQrels(qrels: QrelsLike): string {
  return formatTrecQrelsOf(toQrels('formatTrecQrels', 'qrels', qrels));
}

/** Writes `qrels` (a Map or a plain object) as a TREC qrels file, atomically. */
export async function writeTrecQrels(path: string, qrels: QrelsLike): Promise<void> {
  const fn = 'writeTrecQrels';
  checkString(fn, 'path', path);
  return writeTrecQrelsOf(path, toQrels(fn, 'qrels', qrels));
}
