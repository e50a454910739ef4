import { HarnessError } from '../errors.js';

/** Default Monte Carlo draws (sign flips, resamples) of the exported functions, equal to the config's. */
export const DEFAULT_DRAWS = 10_000;
/** Default seed of the exported functions, equal to the config's. */
export const DEFAULT_SEED = 42;

/** A numeric vector: a plain array or a typed array. */
export type Vector = ArrayLike<number>;

function checkFinite(fn: string, name: string, v: Vector): void {
  for (let i = 0; i < v.length; i++) {
    const x = v[i] as number;
    if (!Number.isFinite(x)) {
      throw new HarnessError(`${fn}: ${name}[${i}] is ${x}; every per-query value must be a finite number`, {
        hint: 'a NaN usually means a measure was undefined for a query; fix the evaluation, do not drop the query',
      });
    }
  }
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof Map) return 'a Map';
  if (v instanceof Set) return 'a Set';
  if (typeof v === 'object') return 'an object without a length';
  return typeof v === 'undefined' ? 'undefined' : `a ${typeof v}`;
}

/**
 * A TypeError unless `v` is array-like (an array, a typed array, an object with an integer `length`): a Map or
 * a plain object of per-query values has no order to pair by, and read as a vector it would be empty and give
 * a plausible-looking p = 1.
 */
export function checkVector(fn: string, name: string, v: unknown): asserts v is Vector {
  const length = typeof v === 'object' && v !== null ? (v as { length?: unknown }).length : undefined;
  if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
    throw new TypeError(
      `${fn}: ${name} is ${kindOf(v)}, not a vector; pass the per-query values as an array or a typed array` +
        ' (paired vectors in the same query order, e.g. queryIds.map((q) => perQuery.get(q)))',
    );
  }
}

/** A TypeError unless `v` is an array (of vectors, of alphas). */
export function checkArray(fn: string, name: string, v: unknown, what: string): asserts v is readonly unknown[] {
  if (!Array.isArray(v)) throw new TypeError(`${fn}: ${name} must be an array of ${what}; got ${kindOf(v)}`);
}

/** Validated copy of `values` as a Float64Array. */
export function toVector(fn: string, values: Vector, minLength: number, name = 'values'): Float64Array {
  checkVector(fn, name, values);
  if (values.length < minLength) {
    throw new HarnessError(`${fn}: needs at least ${minLength} value${minLength === 1 ? '' : 's'}, got ${values.length}`);
  }
  checkFinite(fn, name, values);
  return Float64Array.from(values);
}

/** Paired differences d = b - a (challenger minus baseline), after checking the pairing. */
export function pairedDiffs(fn: string, a: Vector, b: Vector, minLength: number): Float64Array {
  checkVector(fn, 'a', a);
  checkVector(fn, 'b', b);
  if (a.length !== b.length) {
    throw new HarnessError(`${fn}: the paired vectors differ in length (a: ${a.length}, b: ${b.length})`, {
      hint: 'align both systems on the same query ids before testing',
    });
  }
  if (a.length < minLength) {
    throw new HarnessError(`${fn}: needs at least ${minLength} pairs, got ${a.length}`);
  }
  checkFinite(fn, 'a', a);
  checkFinite(fn, 'b', b);
  const d = new Float64Array(a.length);
  for (let i = 0; i < d.length; i++) d[i] = (b[i] as number) - (a[i] as number);
  return d;
}

/** A positive integer option, or a HarnessError naming it. */
export function positiveInt(fn: string, name: string, x: number): number {
  if (!Number.isSafeInteger(x) || x < 1) throw new HarnessError(`${fn}: ${name} must be a positive integer, got ${x}`);
  return x;
}

/**
 * Absolute tolerance for deciding that two sums of the same values, added in different orders, are equal:
 * 1e-10 of the sum of magnitudes. Rounding error of an n-term sum is at most about n·2⁻⁵³ of that scale, so
 * this absorbs it for any n below ~10⁵ while staying far below real differences between per-query metrics.
 */
export function sumTolerance(d: Float64Array): number {
  let s = 0;
  for (let i = 0; i < d.length; i++) s += Math.abs(d[i] as number);
  return 1e-10 * s;
}

/** A PRNG seed option: a non-negative safe integer, or a HarnessError naming it. */
export function seedOf(fn: string, seed: number): number {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new HarnessError(`${fn}: seed must be a non-negative safe integer, got ${seed}`);
  return seed;
}
