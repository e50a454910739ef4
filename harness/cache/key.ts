import { createHash } from 'node:crypto';
import type { JsonValue } from '../json.js';

/** JSON with object keys sorted at every depth, so equal values always give equal text (and equal hashes). */
export function canonicalJson(value: JsonValue | undefined): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`canonicalJson: non-finite number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v as JsonValue)).join(',')}]`;
  const obj = value as { readonly [k: string]: JsonValue };
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export type CacheNamespace = 'index' | 'embed' | 'judge' | 'run';
export type CacheKey = string & { readonly __brand: 'CacheKey' };

/**
 * sha256 over canonical JSON of `{ v, ns, ...inputs }`. `inputs` must hold everything that changes the
 * output and nothing secret (no API keys, no auth headers): keys are written to disk as file names.
 */
export function cacheKey(ns: CacheNamespace, v: number, inputs: Readonly<Record<string, JsonValue>>): CacheKey {
  return sha256Hex(canonicalJson({ ...inputs, v, ns })) as CacheKey;
}
