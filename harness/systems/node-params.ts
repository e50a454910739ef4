import type { z } from 'zod';
import type { JsonValue } from '../../evalset/types.js';
import { keysOf, zodProblems } from '../config/problems.js';

/**
 * A node kind's params checked against its strict schema: the parsed value with defaults filled, or the
 * `params.<path>: message` problems the config loader reports with every other one.
 */
export function parseNodeParams<S extends z.ZodType>(schema: S, raw: unknown): { readonly data: z.output<S> } | { readonly problems: string[] } {
  const r = schema.safeParse(raw);
  if (!r.success) return { problems: zodProblems(r.error.issues, ['params'], (p) => keysOf(schema, p)) };
  return { data: r.data };
}

/** Params as reports print them: a JSON copy, so an absent optional key is left out rather than `undefined`. */
export function shownParams(p: unknown): JsonValue {
  return JSON.parse(JSON.stringify(p)) as JsonValue;
}

/** Per-query milliseconds of a node that handles a scope's queries together: its time shared equally. */
export function evenQueryMs(qids: readonly string[], ms: number): Record<string, number> {
  const each = qids.length === 0 ? 0 : ms / qids.length;
  return Object.fromEntries(qids.map((q) => [q, each]));
}
