import { normalQuantile } from './special.js';

/**
 * The Wilson score interval for a binomial proportion `successes / n` (Wilson, JASA 1927; Newcombe, Stat. Med.
 * 1998, method 3): the set of p whose score test does not reject at `level`. Chosen over the Wald interval
 * because an audit rate is often 0 or near it on a few dozen pairs, where Wald collapses to a point; Wilson
 * stays inside [0, 1] and is what statsmodels' `proportion_confint(method="wilson")` computes.
 *
 * centre = (x + z²/2) / (n + z²), half = z / (n + z²) · sqrt(x(n − x)/n + z²/4), z = Φ⁻¹(1 − (1 − level)/2).
 */
export function wilsonInterval(successes: number, n: number, level = 0.95): readonly [number, number] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`wilsonInterval: n must be a positive integer, got ${n}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > n)
    throw new RangeError(`wilsonInterval: successes must be an integer in [0, ${n}], got ${successes}`);
  if (!(level > 0 && level < 1)) throw new RangeError(`wilsonInterval: level must be in (0, 1), got ${level}`);
  const z = normalQuantile(1 - (1 - level) / 2);
  const z2 = z * z;
  const centre = (successes + z2 / 2) / (n + z2);
  const half = (z / (n + z2)) * Math.sqrt((successes * (n - successes)) / n + z2 / 4);
  // At x = 0 or x = n the bound is exactly 0 or 1, which the rounded formula misses by an ulp.
  return [successes === 0 ? 0 : centre - half, successes === n ? 1 : centre + half];
}
