import { HarnessError } from '../errors.js';
import { drawResamples, groupByLength, LANES, SharedDrawSums } from './draws.js';
import { checkArray, checkVector, DEFAULT_DRAWS, DEFAULT_SEED, positiveInt, seedOf, sumTolerance, toVector, type Vector } from './input.js';
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
  checkArray('bootstrapCIMany', 'values', values, 'vectors');
  const vectors = values.map((v, i) => {
    checkVector('bootstrapCIMany', `values[${i}]`, v);
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

/**
 * numpy `percentile(values, q * 100)` with the default linear method, for the ascending order statistics the
 * position q·(B − 1) needs: `at(k)` is the k-th smallest value.
 */
function percentileOf(at: (k: number) => number, count: number, q: number): number {
  const pos = q * (count - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, count - 1);
  const frac = pos - lo;
  const a = at(lo);
  const b = at(hi);
  return frac < 0.5 ? a + (b - a) * frac : b - (b - a) * (1 - frac);
}

/**
 * Rearranges a[left..right] so that a[k] holds the value it would hold were that range sorted, with nothing
 * larger before it and nothing smaller after (Hoare's FIND, CACM 1961, doi:10.1145/366622.366647, with a
 * median-of-three pivot): expected O(right − left) time, no allocation.
 */
export function selectInPlace(a: Float64Array, left: number, right: number, k: number): void {
  let l = left;
  let r = right;
  while (r > l) {
    if (r === l + 1) {
      // Two values: the median-of-three below would read one slot twice.
      if ((a[r] as number) < (a[l] as number)) {
        const t = a[l] as number;
        a[l] = a[r] as number;
        a[r] = t;
      }
      return;
    }
    const m = (l + r) >>> 1;
    let x = a[l] as number;
    let y = a[m] as number;
    let z = a[r] as number;
    if (y < x) [x, y] = [y, x];
    if (z < y) {
      [y, z] = [z, y];
      if (y < x) [x, y] = [y, x];
    }
    a[l] = x;
    a[m] = y;
    a[r] = z;
    const pivot = y;
    let i = l;
    let j = r;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) r = j;
    else if (k >= i) l = i;
    else return;
  }
}

/** Arrays shorter than this are selected by {@link selectInPlace} alone; sampling pays off above it. */
const SAMPLED_SELECTION_MIN = 1024;
/** One value in SAMPLE_STRIDE goes into the sample that brackets each rank. */
const SAMPLE_STRIDE = 16;
/**
 * Sample positions kept on each side of a rank's estimate. The sample rank of the k-th smallest value has a
 * standard deviation of at most √(k/stride) ≤ √(B/64) positions (≈ 12 at B = 10,000), so 24 positions
 * bracket it except in rare draws, which fall back to {@link selectInPlace}.
 */
const SAMPLE_MARGIN = 24;

/**
 * The k-th smallest values of `a` for ascending `ks` (a may be reordered). Each run of nearby ranks is found
 * by one pass: a sample of every 16th value, selected at two ranks, gives two values that bracket the ranks with high
 * probability; the values between them (a few hundred of 10,000) are gathered and selected from, and the
 * count of values below the bracket turns their positions into ranks (Floyd & Rivest 1975, doi:10.1145/360680.360691,
 * use the same idea). When the ranks fall outside the bracket, Hoare's selection on the part right of the
 * previous rank finds them instead. Either way the value at each rank is the one a sort would put there.
 */
export function orderStatistics(a: Float64Array, ks: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  const sorted = [...new Set(ks)].sort((x, y) => x - y);
  if (a.length >= SAMPLED_SELECTION_MIN) {
    const sample = new Float64Array(Math.ceil(a.length / SAMPLE_STRIDE));
    for (let j = 0; j < sample.length; j++) sample[j] = a[j * SAMPLE_STRIDE] as number;
    const last = sample.length - 1;
    // Runs of ranks within two of each other (the lower and upper neighbour of one percentile) share a pass.
    const runs: [number, number][] = [];
    for (let r = 0; r < sorted.length; ) {
      let e = r + 1;
      while (e < sorted.length && (sorted[e] as number) - (sorted[e - 1] as number) <= 2) e++;
      runs.push([r, e]);
      r = e;
    }
    const ends = selectRanks(
      sample,
      runs.flatMap(([r, e]) => [
        Math.max(0, Math.floor((sorted[r] as number) / SAMPLE_STRIDE) - SAMPLE_MARGIN),
        Math.min(last, Math.ceil((sorted[e - 1] as number) / SAMPLE_STRIDE) + SAMPLE_MARGIN),
      ]),
    );
    runs.forEach(([r, e], j) => {
      const ranks = sorted.slice(r, e);
      const inside = bracket(a, ends[2 * j] as number, ends[2 * j + 1] as number);
      if (inside === undefined) return;
      const { below, values } = inside;
      if (below > (ranks[0] as number) || (ranks[ranks.length - 1] as number) >= below + values.length) return;
      const found = selectRanks(
        values,
        ranks.map((k) => k - below),
      );
      ranks.forEach((k, q) => out.set(k, found[q] as number));
    });
  }
  let from = 0;
  for (const k of sorted) {
    if (out.has(k)) continue;
    selectInPlace(a, from, a.length - 1, k);
    out.set(k, a[k] as number);
    from = k + 1;
  }
  return out;
}

/** The values at `ranks` (each the one a sort would put there) of `a`, which is reordered; in the order given. */
function selectRanks(a: Float64Array, ranks: readonly number[]): number[] {
  const order = ranks.map((_, i) => i).sort((i, j) => (ranks[i] as number) - (ranks[j] as number));
  const out = new Array<number>(ranks.length);
  let from = 0;
  for (const i of order) {
    const k = ranks[i] as number;
    if (k >= from) {
      selectInPlace(a, from, a.length - 1, k);
      from = k + 1;
    }
    out[i] = a[k] as number;
  }
  return out;
}

/** Reused by {@link bracket}: a quarter of the largest array bracketed so far. */
let bracketScratch = new Float64Array(0);

/**
 * In one pass over `a`: how many values lie below `low`, and the values in [low, high] (unordered, in a
 * scratch buffer that the next call overwrites); undefined when over a quarter of `a` is inside.
 */
function bracket(a: Float64Array, low: number, high: number): { below: number; values: Float64Array } | undefined {
  const capacity = a.length >>> 2;
  if (bracketScratch.length < capacity) bracketScratch = new Float64Array(capacity);
  const buffer = bracketScratch;
  let below = 0;
  let size = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    if (x < low) below++;
    else if (x <= high) {
      if (size === capacity) return undefined;
      buffer[size++] = x;
    }
  }
  return { below, values: buffer.subarray(0, size) };
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
  const alpha = (1 - level) / 2;
  const results = new Array<BootstrapResult>(vectors.length);
  /** Indices of the vectors that vary; a constant vector's interval is the constant. */
  const varying: number[] = [];
  vectors.forEach((x, i) => {
    let constant = true;
    for (let j = 1; j < n && constant; j++) constant = x[j] === x[0];
    if (constant) results[i] = { lo: x[0] as number, hi: x[0] as number, estimate: x[0] as number };
    else varying.push(i);
  });
  if (varying.length === 0) return results;
  const kernel = SharedDrawSums.ofResamples(drawResamples(n, resamples, seed));
  for (let start = 0; start < varying.length; start += LANES) {
    const ids = varying.slice(start, start + LANES);
    const block = ids.map((i) => vectors[i] as Float64Array);
    kernel.setVectors(block);
    const lanes = kernel.resampleSums();
    block.forEach((x, v) => {
      const lane = lanes[v] as Float64Array;
      let total = 0;
      for (let i = 0; i < n; i++) total += x[i] as number;
      let qLo = alpha;
      let qHi = 1 - alpha;
      if (method === 'bca') [qLo, qHi] = bcaLevels(x, total, lane, alpha);
      // x ↦ x/n is monotone, so the k-th smallest resample mean is the k-th smallest sum over n.
      const ks = [qLo, qHi].flatMap((q) => {
        const lo = Math.floor(q * (resamples - 1));
        return [lo, Math.min(lo + 1, resamples - 1)];
      });
      const stats = orderStatistics(lane, ks);
      const at = (k: number): number => (stats.get(k) as number) / n;
      results[ids[v] as number] = { lo: percentileOf(at, resamples, qLo), hi: percentileOf(at, resamples, qHi), estimate: total / n };
    });
  }
  return results;
}

/** BCa-adjusted percentile levels (α1, α2); `sums` are the resample sums Σ c_i x_i (same scale as total). */
function bcaLevels(x: Float64Array, total: number, sums: Float64Array, alpha: number): [number, number] {
  const n = x.length;
  const tol = sumTolerance(x);
  let below = 0;
  let belowOrEqual = 0;
  for (let b = 0; b < sums.length; b++) {
    const s = sums[b] as number;
    // +(condition) rather than `if`: the outcomes are close to coin flips, and a branch would be mispredicted.
    below += +(s < total - tol);
    belowOrEqual += +(s <= total + tol);
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
