import type { z } from 'zod';
import { didYouMean } from '../util/suggest.js';

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

/** Messages for zod issues, with "did you mean" for unknown keys taken from the schema that rejected them. */
export function zodProblems(issues: readonly z.core.$ZodIssue[], prefix: Path, knownKeysAt: (path: Path) => readonly string[]): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as (string | number)[])];
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path as Path);
      for (const key of issue.keys) {
        out.push(`${dotted([...path, key])}: unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`);
      }
    } else {
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
