import { createRng, type Rng } from '../stats/rng.js';

/** One pair to hand-label: no LLM grade here, so a session cannot show it by mistake. */
export interface KappaItem {
  readonly queryId: string;
  readonly docId: string;
  readonly stratum: string;
}

export interface SampleOptions {
  /** How many pairs; default {@link defaultSampleSize}. */
  readonly size?: number;
  /** Strata weighted up by `oversample` in the allocation. Default `multi-hop` at 2. */
  readonly oversample?: Readonly<Record<string, number>>;
  readonly seed: number;
}

/** The default sample: 20% of the judged pairs, and at least 50 (or all of them when fewer). */
export function defaultSampleSize(judged: number): number {
  return Math.max(Math.ceil(0.2 * judged), Math.min(judged, 50));
}

/**
 * A stratified sample of judged pairs for hand verification. Each stratum gets a share of `size` proportional
 * to (its judged pairs x its oversampling weight; multi-hop 2 by default, as its judgments are the hardest),
 * rounded by largest remainder (ties to the stratum listed first), capped at what the stratum holds, the
 * surplus passed on to the others by the same rule. Within a stratum the pairs are drawn uniformly without
 * replacement; the result is shuffled, so a session stopped early still covers every stratum. Deterministic for
 * a seed (xoshiro128**, stream 7).
 */
export function kappaSample(pairs: readonly KappaItem[], opts: SampleOptions): KappaItem[] {
  const size = Math.min(opts.size ?? defaultSampleSize(pairs.length), pairs.length);
  const weightOf = (s: string) => (opts.oversample ?? { 'multi-hop': 2 })[s] ?? 1;
  const byStratum = groupBy(pairs, (p) => p.stratum);
  const strata = [...byStratum.keys()];
  const take = allocate(new Map(strata.map((s) => [s, (byStratum.get(s) as KappaItem[]).length] as const)), size, weightOf);
  const rng = createRng(opts.seed, 7);
  const shuffle = shuffler(rng);
  const out: KappaItem[] = [];
  for (const s of strata) out.push(...shuffle([...(byStratum.get(s) as KappaItem[])]).slice(0, take.get(s)));
  return shuffle(out);
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = out.get(k);
    if (list) list.push(x);
    else out.set(k, [x]);
  }
  return out;
}

/** Fisher-Yates in place with the sample's generator. */
function shuffler(rng: Rng): <T>(xs: T[]) => T[] {
  return <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = rng.nextInt(i + 1);
      [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
    }
    return xs;
  };
}

/**
 * How many of `size` units each stratum gets: shares proportional to (units it holds x its weight), rounded by
 * largest remainder (ties to the stratum listed first), capped at what the stratum holds, the surplus passed on
 * to the others by the same rule. `fixed` strata take exactly their given count (capped) and are left out of the
 * proportional share.
 */
export function allocate(
  held: ReadonlyMap<string, number>,
  size: number,
  weightOf: (stratum: string) => number,
  fixed: ReadonlyMap<string, number> = new Map(),
): Map<string, number> {
  const strata = [...held.keys()];
  const take = new Map<string, number>(strata.map((s) => [s, Math.min(fixed.get(s) ?? 0, held.get(s) as number)] as const));
  let left = Math.max(
    0,
    Math.min(
      size,
      [...held.values()].reduce((a, b) => a + b, 0),
    ) - [...take.values()].reduce((a, b) => a + b, 0),
  );
  for (;;) {
    const open = strata.filter((s) => !fixed.has(s) && (take.get(s) as number) < (held.get(s) as number));
    if (left <= 0 || open.length === 0) return take;
    const total = open.reduce((t, s) => t + (held.get(s) as number) * weightOf(s), 0);
    const exact = open.map((s) => (left * (held.get(s) as number) * weightOf(s)) / total);
    const floor = exact.map(Math.floor);
    let rest = left - floor.reduce((a, b) => a + b, 0);
    const order = exact.map((x, i) => [x - (floor[i] as number), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    for (const [, i] of order) {
      if (rest === 0) break;
      floor[i] = (floor[i] as number) + 1;
      rest--;
    }
    open.forEach((s, i) => {
      const n = Math.min(floor[i] as number, (held.get(s) as number) - (take.get(s) as number));
      take.set(s, (take.get(s) as number) + n);
      left -= n;
    });
  }
}

export interface QuerySampleOptions {
  /** How many queries in all; default {@link defaultQuerySampleSize}. */
  readonly queries?: number;
  /** Exact query counts for some strata (capped at what each holds); the others share the rest of `queries`. */
  readonly perStratum?: Readonly<Record<string, number>>;
  /** Strata weighted up in the allocation. Default `multi-hop` at 2. */
  readonly oversample?: Readonly<Record<string, number>>;
  readonly seed: number;
}

/** The default query sample: 20% of the judged queries, and at least 25 (or all of them when fewer). */
export function defaultQuerySampleSize(queries: number): number {
  return Math.max(Math.ceil(0.2 * queries), Math.min(queries, 25));
}

/**
 * Labels by query: a stratified sample of QUERIES (allocated as {@link kappaSample} allocates pairs, over
 * query counts), each with every judged pair of it, so the labels support pair agreement and per-query
 * measures alike. Queries are drawn uniformly within a stratum (xoshiro128**, `seed`, stream 8) and listed in
 * the order `pairs` first names them (the eval set's, as the judge pools), each query's pairs together in
 * their given order: a session stopped early leaves whole queries labelled, not scattered pairs.
 */
export function querySample(pairs: readonly KappaItem[], opts: QuerySampleOptions): KappaItem[] {
  const byQuery = groupBy(pairs, (p) => p.queryId);
  const queryIds = [...byQuery.keys()];
  const byStratum = groupBy(queryIds, (q) => (byQuery.get(q) as KappaItem[])[0]?.stratum as string);
  const size = Math.min(opts.queries ?? defaultQuerySampleSize(queryIds.length), queryIds.length);
  const weightOf = (s: string) => (opts.oversample ?? { 'multi-hop': 2 })[s] ?? 1;
  const fixed = new Map(Object.entries(opts.perStratum ?? {}).filter(([s]) => byStratum.has(s)));
  const fixedTotal = [...fixed].reduce((t, [s, n]) => t + Math.min(n, (byStratum.get(s) as string[]).length), 0);
  const held = new Map([...byStratum].map(([s, qs]) => [s, qs.length] as const));
  const take = allocate(held, Math.max(size, fixedTotal), weightOf, fixed);
  const shuffle = shuffler(createRng(opts.seed, 8));
  const chosen = new Set<string>();
  for (const [s, qs] of byStratum) for (const q of shuffle([...qs]).slice(0, take.get(s))) chosen.add(q);
  return queryIds.filter((q) => chosen.has(q)).flatMap((q) => byQuery.get(q) as KappaItem[]);
}
