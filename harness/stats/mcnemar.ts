import { HarnessError } from '../errors.js';

/**
 * Exact McNemar test on paired 0/1 outcomes (two systems' answers to the same questions, each right or wrong).
 * Only the discordant questions carry evidence: under no difference each is as likely to favour either system,
 * so the smaller discordant count is binomial(b + c, 1/2). The two-sided p doubles its lower tail, capped at 1,
 * as statsmodels' `mcnemar(table, exact=True)` computes it: min(1, 2 · P[X <= min(b, c)]).
 */

/** How two 0/1 outcome vectors split: right in both, only in A, only in B, in neither. */
export interface Discordance {
  readonly both: number;
  readonly onlyA: number;
  readonly onlyB: number;
  readonly neither: number;
}

/** Past this a running term is rescaled by a power of two, which is exact, so no term overflows. */
const RESCALE_ABOVE = 2 ** 900;

/** x · 2^e in steps no double overflows or underflows on the way (each step exact while the result is normal). */
function timesPowerOfTwo(x: number, e: number): number {
  let out = x;
  let left = e;
  while (left < -1000) {
    out *= 2 ** -1000;
    left += 1000;
  }
  return out * 2 ** left;
}

/**
 * P[X <= k] for X ~ binomial(n, 1/2): the sum of C(n, i) for i <= k, built term by term by the ratio
 * (n - i) / (i + 1) and divided by 2^n at the end. A sum of positive terms, so no cancellation; the scale kept
 * as a separate power of two lets n run past the 1,074 where 2^-n leaves the doubles.
 */
function halfBinomialCdf(k: number, n: number): number {
  let term = 1;
  let sum = 1;
  let exponent = 0;
  for (let i = 0; i < k; i++) {
    term = (term * (n - i)) / (i + 1);
    sum += term;
    if (term > RESCALE_ABOVE) {
      term /= RESCALE_ABOVE;
      sum /= RESCALE_ABOVE;
      exponent += 900;
    }
  }
  return timesPowerOfTwo(sum, exponent - n);
}

function checkCount(fn: string, name: string, x: number): void {
  if (!Number.isSafeInteger(x) || x < 0) throw new HarnessError(`${fn}: ${name} is ${String(x)}; a discordant count must be a whole number >= 0`);
}

/**
 * The two-sided exact McNemar p-value of `b` questions only A got right and `c` only B got right (1 when both
 * are 0: nothing discordant, no evidence either way).
 */
export function mcnemarExact(b: number, c: number): number {
  checkCount('mcnemarExact', 'b', b);
  checkCount('mcnemarExact', 'c', c);
  const k = Math.min(b, c);
  // With |b - c| <= 1 the lower tail holds at least half the mass (exactly half for b + c odd): p is 1, which
  // the rounded sum would miss by an ulp.
  if (2 * k + 1 >= b + c) return 1;
  return Math.min(1, 2 * halfBinomialCdf(k, b + c));
}

/** An outcome as 0 or 1; anything else is refused with its place. */
function outcome(fn: string, name: string, v: readonly (number | boolean)[], i: number): 0 | 1 {
  const x = v[i];
  if (x === 0 || x === false) return 0;
  if (x === 1 || x === true) return 1;
  throw new HarnessError(`${fn}: ${name}[${i}] is ${String(x)}; an outcome must be 0 or 1 (or false / true): wrong or right`);
}

/** The 2x2 table of two systems' outcomes on the same questions, in the same order (1 or true: right). */
export function discordance(a: readonly (number | boolean)[], b: readonly (number | boolean)[]): Discordance {
  const fn = 'discordance';
  if (a.length !== b.length)
    throw new HarnessError(`${fn}: a has ${a.length} outcomes but b has ${b.length}; both must cover the same questions in the same order`);
  let both = 0;
  let onlyA = 0;
  let onlyB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = outcome(fn, 'a', a, i);
    const y = outcome(fn, 'b', b, i);
    if (x === 1 && y === 1) both++;
    else if (x === 1) onlyA++;
    else if (y === 1) onlyB++;
  }
  return { both, onlyA, onlyB, neither: a.length - both - onlyA - onlyB };
}
