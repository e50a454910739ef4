import { compareIds } from '../metrics/ranking.js';
import { createRng } from '../stats/rng.js';

/**
 * Tuning without leakage (docs/adr/0015-systems-plan.md): each grid picks its point on queries it is not
 * scored on, either a dev split or k-fold cross-validation by query, and the report shows the test numbers of
 * the picked point beside the oracle (the point best on the test queries themselves, optimistic by design).
 */

/** One pick: the member chosen for `fold` (or the dev split) and its mean on the queries it was chosen on. */
export interface TuneChoice {
  readonly fold: string;
  readonly member: string;
  readonly trainMean: number;
  /** How many test queries take their values from this pick. */
  readonly queries: number;
}

export interface TunedSystem {
  readonly id: string;
  readonly group: string;
  readonly measure: string;
  readonly method: 'folds' | 'split';
  readonly choices: readonly TuneChoice[];
  /** The member with the best mean on the test queries: what an untuned report would crown. */
  readonly oracle: { readonly member: string; readonly mean: number };
  /** measure -> value of test query i, each taken from the member picked for that query's fold. */
  readonly perQuery: Record<string, number[]>;
  /** The member whose run answers test query i. */
  readonly picks: readonly string[];
}

function mean(values: readonly number[], indices: readonly number[]): number {
  let s = 0;
  for (const i of indices) s += values[i] as number;
  return indices.length === 0 ? 0 : s / indices.length;
}

/** The member with the highest mean over `indices`; ties go to the earlier member (grid order). */
function best(members: readonly string[], values: (member: string) => readonly number[], indices: readonly number[]): { member: string; mean: number } {
  let pick = { member: members[0] as string, mean: -Infinity };
  for (const m of members) {
    const v = mean(values(m), indices);
    if (v > pick.mean) pick = { member: m, mean: v };
  }
  return pick;
}

/**
 * Fold of each query: queries sorted by id, shuffled with the seed, then dealt round-robin within each
 * stratum so every fold holds each stratum in proportion. Depends only on the query ids, strata and seed.
 */
export function assignFolds(queries: readonly { readonly id: string; readonly stratum: string }[], folds: number, seed: number): number[] {
  const order = queries.map((_, i) => i).sort((a, b) => compareIds(queries[a]!.id, queries[b]!.id));
  const rng = createRng(seed, 7);
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const dealt = new Map<string, number>();
  const out = new Array<number>(queries.length);
  for (const i of order) {
    const s = queries[i]!.stratum;
    const k = dealt.get(s) ?? 0;
    out[i] = k % folds;
    dealt.set(s, k + 1);
  }
  return out;
}

/**
 * Why k-fold tuning cannot keep its promise on these queries, or undefined when it can: each pick must be made
 * on training queries, so at least two folds must hold queries. One query, or strata of one query each (queries
 * are dealt to folds within their stratum), would leave a single fold whose pick was made on nothing.
 */
export function foldsProblem(queries: readonly { readonly id: string; readonly stratum: string }[], folds: number, seed: number): string | undefined {
  if (queries.length === 0) return undefined;
  const filled = new Set(assignFolds(queries, Math.min(folds, queries.length), seed)).size;
  if (filled >= 2) return undefined;
  const perStratum = new Map<string, number>();
  for (const q of queries) perStratum.set(q.stratum, (perStratum.get(q.stratum) ?? 0) + 1);
  const largest = Math.max(...perStratum.values());
  return (
    `tune.folds: cross-validation needs queries in at least two folds, so that every pick is made on queries it is not scored on; ` +
    `the ${queries.length} quer${queries.length === 1 ? 'y fills' : 'ies fill'} one fold (queries are dealt to folds within their stratum, ` +
    `and the largest of ${perStratum.size} strat${perStratum.size === 1 ? 'um' : 'a'} has ${largest}); add queries, or tune on a dev split (tune.split)`
  );
}

type PerQuery = Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;

function composite(members: readonly string[], perQuery: PerQuery, pickOf: readonly string[]): Record<string, number[]> {
  const measures = Object.keys(perQuery[members[0] as string] ?? {});
  return Object.fromEntries(measures.map((m) => [m, pickOf.map((member, i) => perQuery[member]?.[m]?.[i] as number)]));
}

/** k-fold cross-validation: each query's values come from the member best on the other folds. */
export function tuneByFolds(
  group: string,
  members: readonly string[],
  perQuery: PerQuery,
  queries: readonly { readonly id: string; readonly stratum: string }[],
  opts: { readonly measure: string; readonly folds: number; readonly seed: number },
): TunedSystem {
  const folds = Math.min(opts.folds, queries.length);
  const foldOf = assignFolds(queries, folds, opts.seed);
  const values = (m: string) => perQuery[m]?.[opts.measure] as readonly number[];
  const choices: TuneChoice[] = [];
  const pickOf = new Array<string>(queries.length);
  for (let f = 0; f < folds; f++) {
    const train = foldOf.flatMap((g, i) => (g === f ? [] : [i]));
    const test = foldOf.flatMap((g, i) => (g === f ? [i] : []));
    const pick = best(members, values, train);
    for (const i of test) pickOf[i] = pick.member;
    choices.push({ fold: String(f + 1), member: pick.member, trainMean: pick.mean, queries: test.length });
  }
  const all = queries.map((_, i) => i);
  return {
    id: `${group}.tuned`,
    group,
    measure: opts.measure,
    method: 'folds',
    choices,
    oracle: best(members, values, all),
    perQuery: composite(members, perQuery, pickOf),
    picks: pickOf,
  };
}

/** Dev split: one member, best on the dev queries, scored on the test queries. */
export function tuneBySplit(
  group: string,
  members: readonly string[],
  testPerQuery: PerQuery,
  devPerQuery: PerQuery,
  opts: { readonly measure: string; readonly split: string; readonly testQueries: number; readonly devQueries: number },
): TunedSystem {
  const dev = Array.from({ length: opts.devQueries }, (_, i) => i);
  const pick = best(members, (m) => devPerQuery[m]?.[opts.measure] as readonly number[], dev);
  const all = Array.from({ length: opts.testQueries }, (_, i) => i);
  return {
    id: `${group}.tuned`,
    group,
    measure: opts.measure,
    method: 'split',
    choices: [{ fold: opts.split, member: pick.member, trainMean: pick.mean, queries: opts.testQueries }],
    oracle: best(members, (m) => testPerQuery[m]?.[opts.measure] as readonly number[], all),
    perQuery: composite(members, testPerQuery, new Array<string>(opts.testQueries).fill(pick.member)),
    picks: new Array<string>(opts.testQueries).fill(pick.member),
  };
}
