import { mulberry32 } from '../../testing/mulberry32.js';
import { describe, expect, it } from 'vitest';
import { trecSettings } from '../../testing/trec-settings.js';
import {
  averagePrecision,
  binaryG,
  bpref,
  elevenPointAverage,
  interpolatedPrecisionAt,
  logAveragePrecision,
  logBpref,
  reciprocalRank,
  rPrecision,
  rPrecisionMult,
} from '../../metrics/kernels/ap.js';
import { apAt, precisionAt, recallAt, relativePrecisionAt, successAt, unjudgedAt } from '../../metrics/kernels/cutoff.js';
import { type GainOverride, gMeasure, log2Rank, ndcg, ndcgRel, rbp, rNdcg, setupGains } from '../../metrics/kernels/gain.js';
import { gainedRanks, gMeasureSparse, ndcgRelSparse, rbpSparse, ndcgSparse, newGainedRanks, rNdcgSparse } from './gain-sparse.js';
import {
  apAtFromPrefix,
  averagePrecisionFromPrefix,
  binaryGFromPrefix,
  interpolatedPrecisionFromPrefix,
  newRankPrefix,
  precisionFromPrefix,
  rankPrefix,
  recallFromPrefix,
  reciprocalRankFromPrefix,
  relativePrecisionFromPrefix,
  rPrecisionFromPrefix,
  rPrecisionMultFromPrefix,
  successFromPrefix,
  unjudgedFromPrefix,
} from './prefix.js';
import { judgeRankingWithLevels, type JudgedRanking, REL_NONPOOL, REL_UNJUDGED } from '../../metrics/ranking.js';
import { REFERENCE_KERNELS } from '../kernel-set.js';
import { compileTrecPlan, computeTrecRow, TREC_MEASURE_NAMES, type TrecPlan } from '../plan.js';
import { FAST_KERNELS } from './kernels.js';

/**
 * The fast paths (the shared one-pass values of prefix.ts, the gain kernels over gained ranks of gain-sparse.ts,
 * the per-query memo of FAST_KERNELS, the log2 table of the gain kernels) against the reference kernels they
 * stand in for (harness/metrics/kernels, through the measure registry), bit for bit (Object.is, so -0 and NaN
 * count), on seeded random rankings: graded, with unjudged (negative grade) and unpooled documents, score
 * ties irrelevant here (the ranking is given), empty rankings, rankings shorter and longer than every cutoff.
 */

const LENGTHS = [0, 1, 2, 3, 4, 7, 12, 30, 99, 100, 101, 250, 999, 1000, 1001, 1300];

/** A random ranking of length n at relevance level `level`, with a qrels that may hold unretrieved documents. */
function randomRanking(next: () => number, n: number, level: number): JudgedRanking {
  const maxGrade = Math.floor(next() * 5); // 0..4
  const pNonpool = next();
  const pUnjudged = next() * 0.3;
  const grades = new Int32Array(n);
  const relLevels = new Int32Array(maxGrade + 1);
  for (let i = 0; i < n; i++) {
    const u = next();
    if (u < pNonpool) grades[i] = REL_NONPOOL;
    else if (u < pNonpool + pUnjudged) grades[i] = REL_UNJUDGED;
    else {
      const g = Math.floor(next() * (maxGrade + 1));
      grades[i] = g;
      relLevels[g]!++;
    }
  }
  // Judged documents the run does not retrieve (sometimes none, so every relevant one can be retrieved).
  if (next() < 0.7) for (let g = 0; g <= maxGrade; g++) relLevels[g]! += Math.floor(next() * 6);
  return judgeRankingWithLevels(grades, relLevels, level);
}

/** Ascending distinct positive cutoffs: the trec_eval defaults, or a random set around the ranking's length. */
function randomCutoffs(next: () => number, n: number): number[] {
  if (next() < 0.3) return [5, 10, 15, 20, 30, 100, 200, 500, 1000];
  const set = new Set<number>();
  const k = 1 + Math.floor(next() * 8);
  for (let j = 0; j < k; j++) set.add(1 + Math.floor(next() * (n + 10) * 1.5));
  if (next() < 0.5) set.add(n > 0 ? n : 1);
  return [...set].sort((a, b) => a - b);
}

function same(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  for (let j = 0; j < expected.length; j++) {
    if (!Object.is(actual[j], expected[j])) expect.fail(`${what}[${j}]: ${actual[j]} !== ${expected[j]}`);
  }
}

function cutoffKernel(fill: (out: Float64Array) => void, n: number): Float64Array {
  const out = new Float64Array(n);
  fill(out);
  return out;
}

describe('rankPrefix: the shared counts of one pass', () => {
  it('gives every cutoff and rank kernel the very doubles it computes itself', () => {
    const next = mulberry32(20261123);
    const p = newRankPrefix();
    let cases = 0;
    for (let round = 0; round < 40; round++) {
      for (const n of LENGTHS) {
        for (const level of [0, 1, 2, 3]) {
          const r = randomRanking(next, n, level);
          rankPrefix(r, level, p);
          const cut = randomCutoffs(next, n);
          const m = cut.length;
          const tag = `round ${round} n=${n} level=${level} cutoffs=${cut}`;
          same(
            cutoffKernel((o) => precisionFromPrefix(p, cut, o, 0), m),
            cutoffKernel((o) => precisionAt(r, level, cut, o), m),
            `P ${tag}`,
          );
          same(
            cutoffKernel((o) => recallFromPrefix(p, r.numRel, cut, o, 0), m),
            cutoffKernel((o) => recallAt(r, level, cut, o), m),
            `R ${tag}`,
          );
          same(
            cutoffKernel((o) => relativePrecisionFromPrefix(p, r.numRel, cut, o, 0), m),
            cutoffKernel((o) => relativePrecisionAt(r, level, cut, o), m),
            `RelP ${tag}`,
          );
          same(
            cutoffKernel((o) => successFromPrefix(p, cut, o, 0), m),
            cutoffKernel((o) => successAt(r, level, cut, o), m),
            `Success ${tag}`,
          );
          same(
            cutoffKernel((o) => apAtFromPrefix(p, r.numRel, cut, o, 0), m),
            cutoffKernel((o) => apAt(r, level, cut, o), m),
            `AP@k ${tag}`,
          );
          same(
            cutoffKernel((o) => unjudgedFromPrefix(p, cut, o, 0), m),
            cutoffKernel((o) => unjudgedAt(r, cut, o), m),
            `Unj ${tag}`,
          );
          same([averagePrecisionFromPrefix(p, r.numRel)], [averagePrecision(r, level)], `AP ${tag}`);
          same([reciprocalRankFromPrefix(p)], [reciprocalRank(r, level)], `RR ${tag}`);
          same([rPrecisionFromPrefix(p, r.numRel)], [rPrecision(r, level)], `Rprec ${tag}`);
          same([binaryGFromPrefix(p, r.numRel)], [binaryG(r, level)], `BinG ${tag}`);
          const recalls = next() < 0.5 ? [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] : [0.05, 0.25, 0.5, 0.75, 1, 1.5];
          same(
            cutoffKernel((o) => interpolatedPrecisionFromPrefix(p, r.numRel, r.numRelRet, recalls, o, 0), recalls.length),
            cutoffKernel((o) => interpolatedPrecisionAt(r, level, recalls, o), recalls.length),
            `IPrec ${tag}`,
          );
          const mults = next() < 0.5 ? [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0] : [-0.5, 0, 0.05, 0.5, 1, 3, 40];
          same(
            cutoffKernel((o) => rPrecisionMultFromPrefix(p, r.numRel, r.numRelRet, mults, o, 0), mults.length),
            cutoffKernel((o) => rPrecisionMult(r, level, mults, o), mults.length),
            `RprecMult ${tag}`,
          );
          cases++;
        }
      }
    }
    expect(cases).toBe(40 * LENGTHS.length * 4);
  });

  it('grows its arrays for a ranking longer than they are and still reads the short one after', () => {
    const next = mulberry32(7);
    const p = newRankPrefix();
    const long = randomRanking(next, 5000, 1);
    rankPrefix(long, 1, p);
    expect(p.relAt.length).toBeGreaterThanOrEqual(5001);
    same(
      cutoffKernel((o) => precisionFromPrefix(p, [10, 4000, 5000, 6000], o, 0), 4),
      cutoffKernel((o) => precisionAt(long, 1, [10, 4000, 5000, 6000], o), 4),
      'P long',
    );
    const short = randomRanking(next, 3, 1);
    rankPrefix(short, 1, p);
    same(
      cutoffKernel((o) => precisionFromPrefix(p, [1, 2, 5, 5000], o, 0), 4),
      cutoffKernel((o) => precisionAt(short, 1, [1, 2, 5, 5000], o), 4),
      'P short after long',
    );
  });
});

describe('the gain kernels over the gained ranks only', () => {
  /** Gain overrides as `ndcg.1=3,2=0` gives them: some grades, unjudged and unpooled ones too, gains of any sign or 0. */
  function randomOverrides(next: () => number): GainOverride[] {
    if (next() < 0.3) return [];
    const out: GainOverride[] = [];
    const k = 1 + Math.floor(next() * 4);
    for (let j = 0; j < k; j++) {
      const grade = Math.floor(next() * 7) - 2; // -2 .. 4
      const u = next();
      const value = u < 0.2 ? 0 : u < 0.35 ? -Math.floor(next() * 3) : u < 0.6 ? Math.floor(next() * 10) : next() * 5 - 1;
      out.push({ name: String(grade), value });
    }
    return out;
  }

  it('gives ndcg, ndcgRel, rNdcg, G and rbp the very doubles of the rank-by-rank kernels', () => {
    const next = mulberry32(424242);
    const nz = newGainedRanks();
    let cases = 0;
    for (let round = 0; round < 60; round++) {
      for (const n of LENGTHS) {
        const level = Math.floor(next() * 3);
        const r = randomRanking(next, n, level);
        const t = setupGains(r, randomOverrides(next), next() < 0.2);
        gainedRanks(r, t, nz);
        const tag = `round ${round} n=${n} levels=${JSON.stringify(t.levels)}`;
        const d = ndcg(r, t);
        const s = ndcgSparse(t, nz);
        same([s.dcg, s.idcg, s.ndcg], [d.dcg, d.idcg, d.ndcg], `ndcg ${tag}`);
        same([ndcgRelSparse(t, nz)], [ndcgRel(r, t)], `ndcgRel ${tag}`);
        same([rNdcgSparse(r, t, nz)], [rNdcg(r, t)], `rNdcg ${tag}`);
        same([gMeasureSparse(r, t, nz)], [gMeasure(r, t)], `G ${tag}`);
        for (const p of [0.9, 0.5, 0.95, next()]) same([rbpSparse(r, t, nz, p)], [rbp(r, t, p)], `rbp p=${p} ${tag}`);
        cases++;
      }
    }
    expect(cases).toBe(60 * LENGTHS.length);
  });
});

describe('log2Rank', () => {
  it('is Math.log2(i + 2), in the table and past it', () => {
    for (let i = 0; i < 5000; i++) if (!Object.is(log2Rank(i), Math.log2(i + 2))) expect.fail(`log2Rank(${i})`);
    expect(log2Rank(6)).toBe(3);
  });
});

describe('FAST_KERNELS: the per-query memo', () => {
  // all_trec, with dcg / ideal_dcg (which share ndcg's pass) and an 11pt_avg on its own unsorted recall points
  // (which cannot reuse iprec_at_recall's).
  it('gives each shared measure its own kernel value, bit for bit', () => {
    const plans = [
      compileTrecPlan(trecSettings({ measures: ['all_trec', 'dcg', 'ideal_dcg'] }), FAST_KERNELS),
      compileTrecPlan(trecSettings({ measures: ['11pt_avg.0.5,0.2,0.9', 'gm_map', 'gm_bpref', 'dcg'], relevanceLevel: 2 }), FAST_KERNELS),
      compileTrecPlan(
        trecSettings({
          measures: ['iprec_at_recall.0.3,0.6', '11pt_avg', 'ndcg.1=3,2=0', 'ndcg_rel.-1=2,0=1', 'Rndcg.3=-1', 'G.1=0.3,2=2.5', 'rbp.p=0.7,2=0.5'],
          relevanceLevel: 0,
        }),
        FAST_KERNELS,
      ),
    ];
    const next = mulberry32(99);
    const value = (plan: (typeof plans)[number], row: Float64Array, name: string): number => {
      for (const inst of plan.instances) {
        const j = inst.valueNames.indexOf(name);
        if (j >= 0) return row[inst.offset + j]!;
      }
      throw new Error(`no ${name}`);
    };
    for (const plan of plans) {
      const level = plan.settings.relevanceLevel;
      const row = new Float64Array(plan.width);
      for (let round = 0; round < 20; round++) {
        for (const n of LENGTHS) {
          const r = randomRanking(next, n, level);
          computeTrecRow(plan, r, row, 0);
          const tag = `${plan.settings.measures} n=${n}`;
          for (const inst of plan.instances) {
            const got = row.subarray(inst.offset, inst.offset + inst.valueNames.length);
            const nums = inst.params.numbers;
            if (inst.name === 'map') same(got, [averagePrecision(r, level)], `map ${tag}`);
            if (inst.name === 'gm_map') same(got, [logAveragePrecision(r, level)], `gm_map ${tag}`);
            if (inst.name === 'bpref') same(got, [bpref(r, level)], `bpref ${tag}`);
            if (inst.name === 'gm_bpref') same(got, [logBpref(r, level)], `gm_bpref ${tag}`);
            if (inst.name === 'binG') same(got, [binaryG(r, level)], `binG ${tag}`);
            if (inst.name === '11pt_avg') same(got, [elevenPointAverage(r, level, nums)], `11pt_avg ${tag}`);
            if (inst.name === 'iprec_at_recall') {
              same(
                got,
                cutoffKernel((o) => interpolatedPrecisionAt(r, level, nums, o), nums.length),
                `iprec ${tag}`,
              );
            }
            if (inst.name === 'ndcg_rel') same(got, [ndcgRel(r, setupGains(r, inst.params.pairs))], `ndcg_rel ${tag}`);
            if (inst.name === 'rbp') {
              const p = inst.params.pairs.find((q) => q.name === 'p')?.value ?? 0.9;
              same(got, [rbp(r, setupGains(r, inst.params.pairs), p)], `rbp ${tag}`);
            }
            if (inst.name === 'G') same(got, [gMeasure(r, setupGains(r, inst.params.pairs))], `G ${tag}`);
            if (inst.name === 'Rndcg') same(got, [rNdcg(r, setupGains(r, inst.params.pairs))], `Rndcg ${tag}`);
            if (inst.name === 'dcg' || inst.name === 'ideal_dcg' || inst.name === 'ndcg') {
              const d = ndcg(r, setupGains(r, inst.params.pairs));
              same(got, [inst.name === 'dcg' ? d.dcg : inst.name === 'ideal_dcg' ? d.idcg : d.ndcg], `${inst.name} ${tag}`);
            }
          }
          if (plan.instances.some((i) => i.name === 'P')) {
            same(
              [value(plan, row, 'P_1000')],
              cutoffKernel((o) => precisionAt(r, level, [1000], o), 1),
              `P_1000 ${tag}`,
            );
          }
        }
      }
    }
  });
});

describe('FAST_KERNELS against the reference kernels', () => {
  /** Every trec_eval measure, at its default parameters and at others (cutoffs past the ranking, gains, p, -N), at levels 0 to 3. */
  const SETTINGS = [
    trecSettings({ measures: TREC_MEASURE_NAMES.filter((n) => n !== 'runid') }),
    trecSettings({ measures: ['all_trec', 'dcg', 'ideal_dcg'], relevanceLevel: 0, numDocsInColl: 5000 }),
    trecSettings({ measures: ['all_trec'], relevanceLevel: 2 }),
    trecSettings({
      measures: [
        'P.1,3,2000',
        'recall.7,1300',
        'map_cut.2,999,1001',
        'ndcg_cut.1,4',
        'relative_P.50',
        'success.2,3',
        'unj.1,250',
        'iprec_at_recall.0.05,0.5,1.5',
        'Rprec_mult.-0.5,0,0.05,3',
        '11pt_avg.0.9,0.1',
        'utility.2,-1,0.5,0.001',
        'set_F.0.25',
        'ndcg.1=3,2=0,-1=1',
        'dcg.0=2',
        'ideal_dcg.3=-1',
        'ndcg_rel.-2=2,0=1',
        'Rndcg.3=-1',
        'G.1=0.3,2=2.5',
        'rbp.p=0.7,2=0.5',
        'rbp_resid.p=0.5',
        'map',
        'gm_map',
        'bpref',
        'gm_bpref',
      ],
      relevanceLevel: 3,
      numDocsInColl: 100,
    }),
  ];

  it('gives every value of every trec_eval measure the double of its reference kernel, bit for bit', () => {
    const next = mulberry32(20261201);
    let rows = 0;
    for (const settings of SETTINGS) {
      const fast = compileTrecPlan(settings, FAST_KERNELS);
      const reference = compileTrecPlan(settings, REFERENCE_KERNELS);
      expect(fast.width).toBe(reference.width);
      const a = new Float64Array(fast.width);
      const b = new Float64Array(reference.width);
      for (let round = 0; round < 8; round++) {
        for (const n of LENGTHS) {
          const r = randomRanking(next, n, settings.relevanceLevel);
          for (const bogus of [false, true]) {
            expect(computeTrecRow(fast, r, a, 0, bogus)).toBe(computeTrecRow(reference, r, b, 0, bogus));
            for (const inst of fast.instances) {
              const at = (row: Float64Array) => row.subarray(inst.offset, inst.offset + inst.valueNames.length);
              same(at(a), at(b), `${inst.valueNames.join(',')} ${settings.measures.length} measures, level ${settings.relevanceLevel}, n=${n}`);
            }
            rows++;
          }
        }
      }
    }
    expect(rows).toBe(SETTINGS.length * 8 * LENGTHS.length * 2);
  });

  it('has a fast kernel only for trec_eval measures, and the plans above use every one', () => {
    const fastNames = TREC_MEASURE_NAMES.filter((n) => FAST_KERNELS.kernel(n) !== undefined);
    expect(fastNames.length).toBeGreaterThan(20);
    const used = new Set(SETTINGS.flatMap((s) => compileTrecPlan(s, FAST_KERNELS).instances.map((i) => i.name)));
    expect(fastNames.filter((n) => !used.has(n))).toEqual([]);
    for (const name of ['toString', 'constructor', 'no_such_measure']) expect(FAST_KERNELS.kernel(name)).toBeUndefined();
  });

  it('leaves a plan without a kernel set on the reference kernels', () => {
    const plan: TrecPlan = compileTrecPlan(trecSettings({ measures: ['all_trec'] }));
    expect(plan.kernels).toBe(REFERENCE_KERNELS);
  });
});
