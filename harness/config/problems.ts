import type { z } from 'zod';
import { closest, didYouMean } from '../util/suggest.js';

/**
 * Zod issues as `dotted.path: message` lines, the one shape of every config problem, so that each owner of a
 * block (arm kinds, node kinds, eval-set formats) validates its own params and the loader reports all at once.
 */
export type Path = readonly (string | number)[];

export function dotted(path: Path): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : `.${p}`;
  return s === '' ? '(top level)' : s;
}

/** The value at `path` inside `input`, or undefined where the path leaves it. */
function valueAt(input: unknown, path: Path): unknown {
  let v = input;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[p] : undefined;
  return v;
}

/**
 * The paths of absent keys that an unknown key of the same object is a near miss of (`measurs` for a missing
 * `measures`): the typo is the one root cause, so the "missing key" problem it causes is not reported again.
 */
export function nearMissTargets(unknownKeys: readonly string[], known: readonly string[], isAbsent: (key: string) => boolean): string[] {
  return unknownKeys.flatMap((key) => {
    const near = closest(key, known);
    return near !== undefined && isAbsent(near) ? [near] : [];
  });
}

/**
 * Messages for zod issues, with "did you mean" for unknown keys taken from the schema that rejected them. Given
 * the `input` that was parsed, a missing key that an unknown key is a near miss of is left to the unknown key's
 * line (one typo, one problem).
 */
export function zodProblems(issues: readonly z.core.$ZodIssue[], prefix: Path, knownKeysAt: (path: Path) => readonly string[], input?: unknown): string[] {
  const out: string[] = [];
  const impliedMissing = new Set<string>();
  if (input !== undefined) {
    for (const issue of issues) {
      if (issue.code !== 'unrecognized_keys') continue;
      const at = issue.path as (string | number)[];
      for (const near of nearMissTargets(issue.keys, knownKeysAt(at), (k) => valueAt(input, [...at, k]) === undefined))
        impliedMissing.add(dotted([...at, near]));
    }
  }
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as (string | number)[])];
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path as Path);
      for (const key of issue.keys) {
        out.push(`${dotted([...path, key])}: unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`);
      }
    } else if (!impliedMissing.has(dotted(issue.path as Path))) {
      out.push(`${dotted(path)}: ${issue.message}`);
    }
  }
  return out;
}

/** The keys a zod object schema accepts at `path`, unwrapping optional/default/array layers. */
export function keysOf(schema: z.ZodType, path: Path): readonly string[] {
  let s: unknown = schema;
  const unwrap = () => {
    for (;;) {
      const def = (s as { def?: { type?: string; innerType?: unknown; element?: unknown; in?: unknown } }).def;
      if (def && (def.type === 'optional' || def.type === 'default' || def.type === 'prefault' || def.type === 'nullable')) s = def.innerType;
      // A schema with a transform is a pipe: its keys are those of the schema it reads.
      else if (def && def.type === 'pipe') s = def.in;
      else return;
    }
  };
  unwrap();
  for (const p of path) {
    const def = (s as { def?: { type?: string; element?: unknown; valueType?: unknown } }).def;
    if (typeof p === 'number' && def?.type === 'array') s = def.element;
    else if (def?.type === 'record') s = def.valueType;
    else if (typeof p === 'string' && (s as { shape?: Record<string, unknown> }).shape) s = (s as { shape: Record<string, unknown> }).shape[p];
    else return [];
    unwrap();
  }
  const shape = (s as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}
