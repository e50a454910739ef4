import { createRng } from '../stats/rng.js';

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
  const byStratum = new Map<string, KappaItem[]>();
  for (const p of pairs) {
    const list = byStratum.get(p.stratum);
    if (list) list.push(p);
    else byStratum.set(p.stratum, [p]);
  }
  const strata = [...byStratum.keys()];
  const take = new Map<string, number>(strata.map((s) => [s, 0] as const));
  let left = size;
  while (left > 0) {
    const open = strata.filter((s) => (take.get(s) as number) < (byStratum.get(s) as KappaItem[]).length);
    const total = open.reduce((t, s) => t + (byStratum.get(s) as KappaItem[]).length * weightOf(s), 0);
    const exact = open.map((s) => (left * (byStratum.get(s) as KappaItem[]).length * weightOf(s)) / total);
    const floor = exact.map(Math.floor);
    let rest = left - floor.reduce((a, b) => a + b, 0);
    const order = exact.map((x, i) => [x - (floor[i] as number), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    for (const [, i] of order) {
      if (rest === 0) break;
      floor[i] = (floor[i] as number) + 1;
      rest--;
    }
    open.forEach((s, i) => {
      const room = (byStratum.get(s) as KappaItem[]).length - (take.get(s) as number);
      const n = Math.min(floor[i] as number, room);
      take.set(s, (take.get(s) as number) + n);
      left -= n;
    });
  }
  const rng = createRng(opts.seed, 7);
  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = rng.nextInt(i + 1);
      [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
    }
    return xs;
  };
  const out: KappaItem[] = [];
  for (const s of strata) out.push(...shuffle([...(byStratum.get(s) as KappaItem[])]).slice(0, take.get(s)));
  return shuffle(out);
}
