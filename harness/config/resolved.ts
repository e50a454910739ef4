/**
 * What a config resolver returns: the block's value as far as it could be resolved, and every problem found on
 * the way as a `dotted.path: message` line. Unlike a node kind's bind, which returns a value or problems, a
 * block with problems still yields its best value (a measure list without the bad entry, a plan without the
 * bad system), so the blocks checked after it report their own problems against it: all at once, never one
 * mistake hiding another.
 */
export interface Resolved<T> {
  readonly value: T;
  readonly problems: readonly string[];
}

/** A resolver of one config block: the block as parsed (or absent), and what it may read from the blocks before it. */
export type Resolver<Raw, Context, T> = (raw: Raw, ctx: Context) => Resolved<T>;

/** The problems of a parse step, or its value, as one Resolved. */
export function attempt<T>(f: () => T, fallback: T, path: string): Resolved<T> {
  try {
    return { value: f(), problems: [] };
  } catch (err) {
    return { value: fallback, problems: [`${path}: ${(err as Error).message}`] };
  }
}
