import { QueryAccumulator } from './accumulate.js';
import { FusionInputError } from './errors.js';
import { checkFusion } from './fuse.js';
import type { FusionInput, FusionSpec } from './spec.js';
import { checkPacked, type PackedRun } from './packed.js';

/** What one input brought to a fused run's top `cutoff`, over all queries. */
export interface Contribution {
  /** Fraction of the fused top-`cutoff` entries that are in this input's top-depth. */
  readonly share: number;
  /** Fraction of the fused top-`cutoff` entries that are in this input's top-depth and in no other input's. */
  readonly soloShare: number;
}

/**
 * For each input, the share of the fused top-`cutoff` entries (pooled over all queries) found in its
 * top-depth, and the share found there only. Inputs of weight 0 or depth 0 are not read by the fusion, so they
 * contribute nothing (share 0) and do not count as "another input" for soloShare. NaN when the fused run has
 * no entries at all (no share to speak of). `inputs` are those the fused run was made from, same order.
 */
export function contributions(fused: PackedRun, inputs: readonly FusionInput[], cutoff: number): Contribution[] {
  checkCutoff(cutoff);
  let tableSize = checkPacked(fused, 'fused run');
  inputs.forEach((input, i) => {
    const q = input.run.queries;
    if (q.length !== fused.queries.length || q.some((id, k) => id !== fused.queries[k])) {
      throw new FusionInputError(`contributions: input ${i}'s query list differs from the fused run's`);
    }
    tableSize = Math.max(tableSize, checkPacked(input.run, `input ${i}`));
  });
  const inTop = new Int32Array(tableSize);
  const cover = new Int32Array(tableSize);
  const shared = new Float64Array(inputs.length);
  const solo = new Float64Array(inputs.length);
  const read = (input: FusionInput, q: number): [number, number] => {
    const from = input.run.offsets[q]!;
    return input.weight > 0 ? [from, Math.min(input.run.offsets[q + 1]!, from + input.depth)] : [from, from];
  };
  let total = 0;
  for (let q = 0; q < fused.queries.length; q++) {
    const epoch = q + 1;
    const from = fused.offsets[q]!;
    const to = Math.min(fused.offsets[q + 1]!, from + cutoff);
    total += to - from;
    for (let e = from; e < to; e++) {
      inTop[fused.docs[e]!] = epoch;
      cover[fused.docs[e]!] = 0;
    }
    for (const input of inputs) {
      const [a, b] = read(input, q);
      for (let e = a; e < b; e++) if (inTop[input.run.docs[e]!] === epoch) cover[input.run.docs[e]!]!++;
    }
    inputs.forEach((input, i) => {
      const [a, b] = read(input, q);
      for (let e = a; e < b; e++) {
        const d = input.run.docs[e]!;
        if (inTop[d] !== epoch) continue;
        shared[i]!++;
        if (cover[d] === 1) solo[i]!++;
      }
    });
  }
  return inputs.map((_, i) => ({ share: shared[i]! / total, soloShare: solo[i]! / total }));
}

/** Structural reachability of one input: can it ever place a document in the fused top `cutoff`? */
export interface Reach {
  readonly reachable: boolean;
  /** One sentence a user can act on, naming the parameter that bars the input (weight, depth, rrfK). */
  readonly reason: string;
}

/**
 * Per input i, a data-free check: can a document that input i ranks first and no other input returns ever
 * enter the fused top-`cutoff` (cut to `spec.topK` if shorter), whatever the other inputs return, assuming
 * each input returns at least min(depth, cutoff) documents? `reachable: false` only when provably barred.
 *
 * Argument (docs/adr/0011-fusion.md gives it in full). Let x be that document. An upper bound X of x's fused
 * score is w_i·top_i + Σ_{l≠i} w_l·amax_l: top_i the largest value input i can give its first document
 * (rrf 1/(rrfK+1); min-max and tm2c2 1; z-score sqrt(depth-1), Samuelson's bound; none unbounded) and amax_l
 * the largest absent contribution of input l (0 under `zero`). A document y at rank r of another input j scores
 * at least Y_j(r) = w_j·lb_j(r) + Σ_{l≠j} w_l·min(amin_l, plb_l): lb_j(r) the least value rank r can get
 * (rrf 1/(rrfK+r); min-max 1 at rank 1, else 0; tm2c2 0; z-score 0 at rank 1), plb_l and amin_l the least
 * value a present or absent document gets from l (CombMNZ multiplies a negative bound by the number of inputs).
 * The R_j = #{r <= min(depth_j, cutoff) : Y_j(r) > X} documents of input j all outrank x in every outcome, and
 * they are distinct, so x is barred when some R_j >= cutoff. Inputs of weight 0 or depth 0 are never read.
 * `names` (default `input <i>`) label inputs in the reasons.
 *
 * Weighted RRF, w_i = 0.3, others 1, rrfK 60: X = 0.3/61 ≈ 0.00492 < 1/(60+r) for every r <= 143, so with
 * depth >= 10 elsewhere input i can never place a document it alone returns in the top 10.
 */
export function structuralReach(
  inputs: readonly Pick<FusionInput, 'weight' | 'depth' | 'theoreticalMin'>[],
  spec: FusionSpec,
  cutoff: number,
  names?: readonly string[],
): Reach[] {
  checkCutoff(cutoff);
  const c = Math.min(cutoff, spec.topK);
  const label = (i: number): string => names?.[i] ?? `input ${i}`;
  return inputs.map((input, i) => {
    if (!(input.weight > 0))
      return { reachable: false, reason: `${label(i)} has weight 0, so the fusion never reads it; give it a positive weight or remove it` };
    if (!(input.depth > 0)) return { reachable: false, reason: `${label(i)} has depth 0, so the fusion reads none of its documents; set depth >= 1` };
    const verdict = barredBy(inputs, spec, c, i, input.weight);
    if (verdict === undefined) {
      return {
        reachable: true,
        reason: `${label(i)} can reach the fused top ${c}: no other input is guaranteed ${c} documents scoring above the best a document only it returns can score`,
      };
    }
    const { j, x, y } = verdict;
    const fixes = [`raise ${label(i)}'s weight from ${fmt(input.weight)} to at least ${fmt(minimalWeight(inputs, spec, c, i))}`];
    if (spec.method === 'rrf') {
      const k = largestRrfK(inputs, spec, c, i);
      if (k !== undefined) fixes.push(`lower rrfK from ${fmt(spec.rrfK)} to ${fmt(k)} or less`);
    }
    return {
      reachable: false,
      reason:
        `${label(i)} can never place a document in the fused top ${c}: one only it returns, ranked first, scores at most ${fmt(x)}, ` +
        `while each of the top ${c} documents of ${label(j)} (depth ${fmt(inputs[j]!.depth)}) scores at least ${fmt(y)}; ${fixes.join(', or ')}`,
    };
  });
}

type Bounded = Pick<FusionInput, 'weight' | 'depth' | 'theoreticalMin'>;

/** Per-unit-weight bounds of what input l gives a document (see structuralReach). */
function bounds(input: Bounded, spec: FusionSpec, c: number) {
  const d = input.depth;
  const k = spec.rrfK;
  const zmax = d === Infinity ? Infinity : Math.sqrt(d - 1);
  const m = input.theoreticalMin ?? -Infinity;
  const zero = spec.absent === 'zero';
  if (spec.method === 'rrf') {
    const least = d === Infinity ? 0 : 1 / (k + d);
    return { top: 1 / (k + 1), lb: (r: number) => 1 / (k + r), present: least, amin: zero ? 0 : least, amax: zero ? 0 : 1 / (k + Math.min(d, c)) };
  }
  switch (spec.normalization) {
    case 'min-max':
      return { top: 1, lb: (r: number) => (r === 1 ? 1 : 0), present: 0, amin: 0, amax: zero ? 0 : 1 };
    case 'tm2c2':
      return { top: 1, lb: () => 0, present: 0, amin: 0, amax: zero ? 0 : 1 };
    case 'z-score':
      return { top: zmax, lb: (r: number) => (r === 1 ? 0 : -zmax), present: -zmax, amin: zero ? 0 : -zmax, amax: 0 };
    default:
      return { top: Infinity, lb: () => m, present: m, amin: zero ? 0 : m, amax: zero ? 0 : Infinity };
  }
}

/** The input j (and the bounds) that bars input i at weight wi, or undefined when nothing provably does. */
function barredBy(inputs: readonly Bounded[], spec: FusionSpec, c: number, i: number, wi: number): { j: number; x: number; y: number } | undefined {
  const active = inputs.map((input, l) => (input.weight > 0 && input.depth > 0 ? l : -1)).filter((l) => l >= 0);
  const weight = (l: number): number => (l === i ? wi : inputs[l]!.weight);
  const b = inputs.map((input) => bounds(input, spec, c));
  let x = weight(i) * b[i]!.top;
  for (const l of active) if (l !== i) x += weight(l) * b[l]!.amax;
  for (const j of active) {
    if (j === i || Math.min(inputs[j]!.depth, c) < c) continue;
    let rest = 0;
    for (const l of active) if (l !== j) rest += weight(l) * Math.min(b[l]!.amin, b[l]!.present);
    const y = (r: number): number => {
      const sum = weight(j) * b[j]!.lb(r) + rest;
      return spec.method === 'combmnz' && sum < 0 ? active.length * sum : sum;
    };
    // lb_j is non-increasing in r: the c-th document's bound decides whether all c outrank x. A relative margin
    // keeps the verdict sound against rounding in the fused sums.
    const yc = y(c);
    if (yc - x > 1e-12 * Math.max(Math.abs(x), Math.abs(yc))) return { j, x, y: yc };
  }
  return undefined;
}

/** The least weight at which input i is not provably barred (bisection; reachability is monotone in w_i). */
function minimalWeight(inputs: readonly Bounded[], spec: FusionSpec, c: number, i: number): number {
  let lo = inputs[i]!.weight;
  let hi = Math.max(lo, 1);
  while (barredBy(inputs, spec, c, i, hi) !== undefined && hi < 1e12) hi *= 2;
  for (let it = 0; it < 60; it++) {
    const mid = (lo + hi) / 2;
    if (barredBy(inputs, spec, c, i, mid) === undefined) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The largest rrfK <= the current one at which input i is not provably barred, if rrfK 0 frees it. */
function largestRrfK(inputs: readonly Bounded[], spec: FusionSpec, c: number, i: number): number | undefined {
  const at = (rrfK: number) => barredBy(inputs, { ...spec, rrfK }, c, i, inputs[i]!.weight) === undefined;
  if (!at(0)) return undefined;
  let lo = 0;
  let hi = spec.rrfK;
  for (let it = 0; it < 60; it++) {
    const mid = (lo + hi) / 2;
    if (at(mid)) lo = mid;
    else hi = mid;
  }
  return Math.floor(lo * 100) / 100;
}

/**
 * Data-driven companion of {@link structuralReach}: per input, the share of queries in which its top document
 * (its first entry within depth), had it been returned by that input alone, would enter the fused top-`cutoff`
 * of the actual lists. Its solo score is the input's own contribution plus what the absent policy gives it from
 * every other input; every other document keeps its fused score; ties follow the trec order. A query in which
 * the input returned nothing counts as not reached; an input of weight 0 or depth 0 gets 0; NaN when there
 * are no queries.
 */
export function empiricalReach(inputs: readonly FusionInput[], spec: FusionSpec, cutoff: number): number[] {
  checkCutoff(cutoff);
  const checked = checkFusion(inputs, spec);
  const c = Math.min(cutoff, spec.topK);
  const nq = checked.queries.length;
  const accu = new QueryAccumulator(checked, spec);
  const fused = new Float64Array(checked.index.maxUnion);
  const reached = new Float64Array(inputs.length);
  for (let q = 0; q < nq; q++) {
    accu.accumulate(q);
    const { acc, count, size, counted } = accu;
    for (let l = 0; l < size; l++) fused[l] = !counted || count[l]! > 0 ? accu.score(acc[l]!, counted ? count[l]! : 1) : -Infinity;
    checked.active.forEach(({ input, at }, i) => {
      if (accu.reads[i] === 0) return;
      const x = checked.index.local[at]![input.run.offsets[q]!]!;
      const sx = accu.score(accu.firstGain[i]!, 1);
      let above = 0;
      for (let l = 0; l < size && above < c; l++) {
        if (l !== x && (fused[l]! > sx || (fused[l] === sx && l > x))) above++;
      }
      if (above < c) reached[at]!++;
    });
  }
  return Array.from(reached, (r) => r / nq);
}

function checkCutoff(cutoff: number): void {
  if (!(Number.isInteger(cutoff) && cutoff >= 1)) throw new FusionInputError(`cutoff must be an integer >= 1, got ${cutoff}`);
}

function fmt(v: number): string {
  return Number.isFinite(v) ? String(Number(v.toPrecision(4))) : String(v);
}
