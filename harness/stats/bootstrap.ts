import { HarnessError } from '../errors.js';
import { buildChunkTable, chunkCount, drawResamples, groupByLength, resampleSums, type ResampleDraws } from './draws.js';
import { DEFAULT_DRAWS, DEFAULT_SEED, positiveInt, seedOf, sumTolerance, toVector, type Vector } from './input.js';
import { normalCdf, normalQuantile } from './special.js';

export type BootstrapMethod = 'percentile' | 'bca';

export interface BootstrapOptions {
  /** Number of bootstrap resamples B; default 10,000. */
  readonly resamples?: number;
  /** Seed of the resampling stream (see rng.ts); default 42, the config's. */
  readonly seed?: number;
  /** Confidence level in (0, 1); default 0.95. */
  readonly level?: number;
  /** Default `bca`, scipy's. */
  readonly method?: BootstrapMethod;
}

export interface BootstrapResult {
  readonly lo: number;
  readonly hi: number;
  /** The mean of the original values (the statistic the interval is for). */
  readonly estimate: number;
}

/**
 * Bootstrap confidence interval for the mean of `values` (typically per-query differences d = b − a), with
 * scipy `bootstrap((values,), np.mean, confidence_level=level, method=...)` conventions (Efron & Tibshirani
 * 1993, ch. 13-14):
 *
 * - B resamples of size n with replacement; θ*_b their means.
 * - `percentile`: the α and 1−α percentiles of θ*_b, α = (1 − level)/2, with linear interpolation between
 *   order statistics at position q·(B − 1) (numpy's default).
 * - `bca` (bias-corrected and accelerated; Efron 1987, doi:10.1080/01621459.1987.10478410):
 *   ẑ0 = Φ⁻¹((#{θ*_b < θ̂} + #{θ*_b <= θ̂}) / 2B); â = Σ U_i³ / (6 (Σ U_i²)^{3/2}) with U_i = θ̄_(·) − θ̂_(i)
 *   from the leave-one-out (jackknife) means; the percentiles used are
 *   α1 = Φ(ẑ0 + (ẑ0 + z_α)/(1 − â(ẑ0 + z_α))) and α2 likewise with z_{1−α}.
 *   "<" and "<=" use the tolerance 1e-10·Σ|x| on sums, since resample sums are added in a different order.
 *
 * When all values are equal the interval is [x, x]. The result depends only on (values, options):
 * {@link bootstrapCIMany} returns the same interval for the same vector.
 *
 * @throws HarnessError when BCa's bias correction is undefined (every resample mean on one side of θ̂, which
 * only happens with very few resamples); use more resamples or the percentile method.
 */
export function bootstrapCI(values: Vector, opts: BootstrapOptions = {}): BootstrapResult {
  const x = toVector('bootstrapCI', values, 1);
  const [r] = bootstrapGroup([x], opts);
  return r as BootstrapResult;
}

/**
 * {@link bootstrapCI} for many vectors, sharing one set of resample indices among all vectors of the same
 * length (the same queries are resampled for every system, stratum and measure). Results in input order.
 */
export function bootstrapCIMany(values: readonly Vector[], opts: BootstrapOptions = {}): BootstrapResult[] {
  const vectors = values.map((v, i) => {
    try {
      return toVector('bootstrapCIMany', v, 1);
    } catch (e) {
      throw new HarnessError(`bootstrapCIMany: values[${i}]: ${(e as Error).message}`, { cause: e });
    }
  });
  const results = new Array<BootstrapResult>(vectors.length);
  for (const indices of groupByLength(vectors).values()) {
    const group = bootstrapGroup(
      indices.map((i) => vectors[i] as Float64Array),
      opts,
    );
    indices.forEach((i, k) => {
      results[i] = group[k] as BootstrapResult;
    });
  }
  return results;
}

/** numpy `percentile(sorted, q * 100)` with the default linear method, on an ascending array. */
function percentileSorted(sorted: Float64Array, q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const frac = pos - lo;
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return frac < 0.5 ? a + (b - a) * frac : b - (b - a) * (1 - frac);
}

function bootstrapGroup(vectors: readonly Float64Array[], opts: BootstrapOptions): BootstrapResult[] {
  const fn = 'bootstrapCI';
  const resamples = positiveInt(fn, 'resamples', opts.resamples ?? DEFAULT_DRAWS);
  const seed = seedOf(fn, opts.seed ?? DEFAULT_SEED);
  const method = opts.method ?? 'bca';
  const level = opts.level ?? 0.95;
  if (!(level > 0 && level < 1)) throw new HarnessError(`${fn}: level must be in (0, 1), got ${level}`);
  if (method !== 'percentile' && method !== 'bca') {
    throw new HarnessError(`${fn}: unknown method "${String(method)}" (known: percentile, bca)`);
  }
  const n = (vectors[0] as Float64Array).length;
  let draws: ResampleDraws | undefined;
  const table = new Float64Array(chunkCount(n) * 256);
  const sums = new Float64Array(resamples);
  const alpha = (1 - level) / 2;
  return vectors.map((x) => {
    let total = 0;
    for (let i = 0; i < n; i++) total += x[i] as number;
    const estimate = total / n;
    let constant = true;
    for (let i = 1; i < n && constant; i++) constant = x[i] === x[0];
    if (constant) return { lo: x[0] as number, hi: x[0] as number, estimate: x[0] as number };
    draws ??= drawResamples(n, resamples, seed);
    buildChunkTable(x, table);
    resampleSums(draws, x, table, sums);
    let qLo = alpha;
    let qHi = 1 - alpha;
    if (method === 'bca') [qLo, qHi] = bcaLevels(x, total, sums, alpha);
    const means = sums.map((s) => s / n).sort();
    return { lo: percentileSorted(means, qLo), hi: percentileSorted(means, qHi), estimate };
  });
}

/** BCa-adjusted percentile levels (α1, α2); `sums` are the resample sums Σ c_i x_i (same scale as total). */
function bcaLevels(x: Float64Array, total: number, sums: Float64Array, alpha: number): [number, number] {
  const n = x.length;
  const tol = sumTolerance(x);
  let below = 0;
  let belowOrEqual = 0;
  for (let b = 0; b < sums.length; b++) {
    const s = sums[b] as number;
    if (s < total - tol) below++;
    if (s <= total + tol) belowOrEqual++;
  }
  const share = (below + belowOrEqual) / (2 * sums.length);
  if (share <= 0 || share >= 1) {
    throw new HarnessError(`bootstrapCI: BCa bias correction is undefined: all ${sums.length} resample means fall on one side of the estimate`, {
      hint: 'use more resamples, or the percentile method',
    });
  }
  const z0 = normalQuantile(share);
  // Leave-one-out means θ̂_(i) = (Σx − x_i)/(n − 1); U_i = mean_j θ̂_(j) − θ̂_(i) = (x_i − x̄)/(n − 1), and the
  // (n − 1) scale cancels in â, so U_i can be taken as x_i − x̄.
  const mean = total / n;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < n; i++) {
    const u = (x[i] as number) - mean;
    s2 += u * u;
    s3 += u * u * u;
  }
  const a = s3 / (6 * s2 ** 1.5);
  const zLo = normalQuantile(alpha);
  const zHi = -zLo;
  const adjust = (z: number): number => normalCdf(z0 + (z0 + z) / (1 - a * (z0 + z)));
  return [adjust(zLo), adjust(zHi)];
}
