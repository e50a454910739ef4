import { QueryAccumulator } from './accumulate.js';
import { FusionInputError } from './errors.js';
import { checkFusion } from './fuse.js';
import type { FusionInput, FusionSpec } from './spec.js';
import { checkPacked, type PackedRun } from './run-form.js';

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
 * {@link reachOnRuns} drops that assumption, holding the bound against the documents each input returned.
 *
 * Argument (docs/adr/0011-fusion.md gives it in full). Let x be that document. An upper bound X of x's fused
 * score is w_i·top_i + Σ_{l≠i} w_l·amax_l: top_i the largest value input i can give its first document
 * (rrf 1/(rrfK+1); min-max and tm2c2 1; z-score sqrt(depth-1), Samuelson's bound; dbsf 0.5 + (depth-1)/(6 sqrt(depth)); none unbounded) and amax_l
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
    const verdict = barredBy(inputs, dataFreeReads(inputs, c), spec, c, i, input.weight);
    if (verdict === undefined) {
      return {
        reachable: true,
        reason: `${label(i)} can reach the fused top ${c}: no other input is guaranteed ${c} documents scoring above the best a document only it returns can score`,
      };
    }
    const { j, x, y } = verdict;
    return {
      reachable: false,
      reason:
        `${label(i)} can never place a document in the fused top ${c}: one only it returns, ranked first, scores at most ${fmt(x)}, ` +
        `while each of the top ${c} documents of ${label(j)} (depth ${fmt(inputs[j]!.depth)}) scores at least ${fmt(y)}; ${fixes(inputs, spec, c, i, label(i))}`,
    };
  });
}

/** The parameter changes that free input i from the data-free bound, as a clause. */
function fixes(inputs: readonly Bounded[], spec: FusionSpec, c: number, i: number, name: string): string {
  const out = [`raise ${name}'s weight from ${fmt(inputs[i]!.weight)} to at least ${fmt(minimalWeight(inputs, spec, c, i))}`];
  if (spec.method === 'rrf') {
    const k = largestRrfK(inputs, spec, c, i);
    if (k !== undefined) out.push(`lower rrfK from ${fmt(spec.rrfK)} to ${fmt(k)} or less`);
  }
  return out.join(', or ');
}

/** {@link structuralReach} held against the actual runs: its verdict, and in how many queries the bound bars the input. */
export interface RunReach extends Reach {
  /** Queries in which the input returned a document and a document only it ranks first is provably barred. */
  readonly barred: number;
  /** Queries in which the input returned at least one document (within its depth). */
  readonly queries: number;
}

/**
 * {@link structuralReach} without its assumption that every input returns at least min(depth, cutoff)
 * documents: the same bound is taken per query with the number of documents each input actually read there
 * (an input that returned 7 documents cannot fill a top 10, and one that returned none gives nothing, under
 * either absent policy). Each per-query verdict is exact in the sense of the data-free one: barred only when
 * some other input read at least c documents whose least possible fused score exceeds the most a document only
 * input i returns, ranked first, can score on that query. So an input is reported `reachable: false` ("can
 * never") only when the data-free bound bars it and, on the runs, it is barred in every query in which it
 * returned a document; the fused run then cannot show it placing such a document in the top c. An input of
 * weight 0 or depth 0 is never read, so it is barred in every query. `inputs` are the packed runs that were
 * fused, in the fusion's order.
 */
export function reachOnRuns(inputs: readonly FusionInput[], spec: FusionSpec, cutoff: number, names?: readonly string[]): RunReach[] {
  const free = structuralReach(inputs, spec, cutoff, names);
  const c = Math.min(cutoff, spec.topK);
  const nq = inputs[0]?.run.queries.length ?? 0;
  const readsOn = (q: number): Reads[] =>
    inputs.map((input) => {
      const n = Math.min(input.depth, input.run.offsets[q + 1]! - input.run.offsets[q]!);
      return { min: n, max: n };
    });
  const perQuery = Array.from({ length: nq }, (_, q) => readsOn(q));
  return inputs.map((input, i): RunReach => {
    const verdict = free[i]!;
    if (!(input.weight > 0 && input.depth > 0)) return { ...verdict, barred: nq, queries: nq };
    let queries = 0;
    let barred = 0;
    perQuery.forEach((reads) => {
      if (reads[i]!.max === 0) return;
      queries++;
      if (barredBy(inputs, reads, spec, c, i, input.weight) !== undefined) barred++;
    });
    if (verdict.reachable || barred === queries) return { ...verdict, barred, queries };
    const label = names?.[i] ?? `input ${i}`;
    return {
      reachable: true,
      reason:
        `${label} can reach the fused top ${c} only where the inputs that outrank it return fewer than ${c} documents: ` +
        `it is barred in ${barred} of the ${queries} queries in which it returned a document, and not in the other ${queries - barred}; ` +
        `to free it everywhere, ${fixes(inputs, spec, c, i, label)}`,
      barred,
      queries,
    };
  });
}

type Bounded = Pick<FusionInput, 'weight' | 'depth' | 'theoreticalMin'>;

/**
 * How many documents the fusion reads from an input for a query, as a range: data-free, at least
 * min(depth, cutoff) and at most depth (the assumption {@link structuralReach} states); on one query of the
 * actual runs, exactly what the input returned within its depth.
 */
interface Reads {
  readonly min: number;
  readonly max: number;
}

function dataFreeReads(inputs: readonly Bounded[], c: number): Reads[] {
  return inputs.map((input) => ({ min: Math.min(input.depth, c), max: input.depth }));
}

/**
 * Per-unit-weight bounds of what input l gives a document when it reads `n` documents (see structuralReach).
 * An input that read nothing gives every document 0, under either absent policy.
 */
function bounds(input: Bounded, n: Reads, spec: FusionSpec) {
  if (n.max === 0) return { top: 0, lb: () => 0, present: 0, amin: 0, amax: 0 };
  const k = spec.rrfK;
  const zmax = n.max === Infinity ? Infinity : Math.sqrt(n.max - 1);
  const m = input.theoreticalMin ?? -Infinity;
  const zero = spec.absent === 'zero';
  if (spec.method === 'rrf') {
    // Under `min` an absent document gets what the last one read got, 1/(rrfK + n), or 0 when none was read.
    const least = n.max === Infinity ? 0 : 1 / (k + n.max);
    const amin = zero || n.min === 0 ? 0 : least;
    return { top: 1 / (k + 1), lb: (r: number) => 1 / (k + r), present: least, amin, amax: zero ? 0 : 1 / (k + Math.max(n.min, 1)) };
  }
  switch (spec.normalization) {
    case 'min-max':
      return { top: 1, lb: (r: number) => (r === 1 ? 1 : 0), present: 0, amin: 0, amax: zero ? 0 : 1 };
    case 'tm2c2':
      return { top: 1, lb: () => 0, present: 0, amin: 0, amax: zero ? 0 : 1 };
    case 'dbsf': {
      // φ = 0.5 + z / 6 with z over the sample sd, |z| <= (n - 1) / sqrt(n) (Samuelson's bound, divisor n - 1);
      // rank 1 sits at or above the mean, and under `min` the last read at or below it (0.5 for one document).
      const d = n.max === Infinity ? Infinity : (n.max - 1) / Math.sqrt(n.max) / 6;
      return { top: 0.5 + d, lb: (r: number) => (r === 1 ? 0.5 : 0.5 - d), present: 0.5 - d, amin: zero ? 0 : 0.5 - d, amax: zero ? 0 : 0.5 };
    }
    case 'z-score':
      return { top: zmax, lb: (r: number) => (r === 1 ? 0 : -zmax), present: -zmax, amin: zero ? 0 : -zmax, amax: 0 };
    default:
      return { top: Infinity, lb: () => m, present: m, amin: zero ? 0 : m, amax: zero ? 0 : Infinity };
  }
}

/**
 * The input j (and the bounds) that bars input i at weight wi when each input l reads `reads[l]` documents, or
 * undefined when nothing provably does. Only an input that surely reads at least c documents can bar.
 */
function barredBy(
  inputs: readonly Bounded[],
  reads: readonly Reads[],
  spec: FusionSpec,
  c: number,
  i: number,
  wi: number,
): { j: number; x: number; y: number } | undefined {
  const active = inputs.map((input, l) => (input.weight > 0 && input.depth > 0 ? l : -1)).filter((l) => l >= 0);
  const weight = (l: number): number => (l === i ? wi : inputs[l]!.weight);
  const b = inputs.map((input, l) => bounds(input, reads[l]!, spec));
  let x = weight(i) * b[i]!.top;
  for (const l of active) if (l !== i) x += weight(l) * b[l]!.amax;
  for (const j of active) {
    if (j === i || Math.min(reads[j]!.min, c) < c) continue;
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
  const reads = dataFreeReads(inputs, c);
  while (barredBy(inputs, reads, spec, c, i, hi) !== undefined && hi < 1e12) hi *= 2;
  for (let it = 0; it < 60; it++) {
    const mid = (lo + hi) / 2;
    if (barredBy(inputs, reads, spec, c, i, mid) === undefined) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The largest rrfK <= the current one at which input i is not provably barred, if rrfK 0 frees it. */
function largestRrfK(inputs: readonly Bounded[], spec: FusionSpec, c: number, i: number): number | undefined {
  const reads = dataFreeReads(inputs, c);
  const at = (rrfK: number) => barredBy(inputs, reads, { ...spec, rrfK }, c, i, inputs[i]!.weight) === undefined;
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
