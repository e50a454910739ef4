/**
 * Planning formulas against references computed elsewhere: scipy brute force (scripts/reference/
 * power_reference.py, run here when python3 with scipy is present, else its committed JSON), a published
 * worked example, and the closed forms checked by plugging their answer back in.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { minimumDetectableEffect } from './paired.js';
import { firstThreshold, labelsNeeded, pearsonCorrelation, ppiVariance, queriesNeeded } from './power.js';
import { normalQuantile } from './special.js';

interface Reference {
  queries: { sd: number; delta: number; alpha: number; power: number; n: number; exactPowerAtN: number }[];
  labels: { sdJudge: number; sdHuman: number; rho: number; halfWidth: number; alpha: number; judged: number; labels: number; lambda: number }[];
}

const script = join(PROJECT_ROOT, 'scripts/reference/power_reference.py');
const committed = JSON.parse(readFileSync(join(PROJECT_ROOT, 'scripts/reference/power_reference.json'), 'utf8')) as Reference;

/** The script's fresh output when python3 and scipy are here, so the committed JSON cannot drift from it. */
function fresh(): Reference | undefined {
  const r = spawnSync('python3', [script], { encoding: 'utf8', timeout: 120_000 });
  return r.status === 0 ? (JSON.parse(r.stdout) as Reference) : undefined;
}

describe('queriesNeeded against scipy brute force', () => {
  it('matches every case of the committed reference, and the reference is what the script computes now', { timeout: 150_000 }, () => {
    const now = fresh();
    if (now) expect(now.queries.map((q) => q.n)).toEqual(committed.queries.map((q) => q.n));
    for (const q of committed.queries) {
      expect(queriesNeeded(q.sd, q.delta, { alpha: q.alpha, power: q.power }), JSON.stringify(q)).toBe(q.n);
      // The t approximation lands within half a point of the exact noncentral-t power it stands for.
      expect(q.exactPowerAtN).toBeGreaterThan(q.power - 0.005);
    }
    if (now) expect(now.labels.map((l) => l.labels)).toEqual(committed.labels.map((l) => l.labels));
  });

  it('is the smallest n whose report MDE reaches delta', () => {
    for (const [sd, delta, alpha] of [
      [0.2, 0.03, 0.05 / 7],
      [0.31, 0.05, 0.01],
    ] as const) {
      const n = queriesNeeded(sd, delta, { alpha, power: 0.8 });
      expect(minimumDetectableEffect(n, sd, { alpha, power: 0.8 })).toBeLessThanOrEqual(delta);
      expect(minimumDetectableEffect(n - 1, sd, { alpha, power: 0.8 })).toBeGreaterThan(delta);
    }
  });

  it('reproduces the textbook examples', () => {
    // G*Power and Dupont & Plummer's PS give 34 pairs for a standardised paired difference of 0.5 at alpha
    // 0.05 two-sided and 80% power; the normal formula gives the 32 of Chow, Shao & Wang (2008, sec. 3.1).
    expect(queriesNeeded(1, 0.5, { alpha: 0.05, power: 0.8 })).toBe(34);
    expect(queriesNeeded(1, 0.5, { alpha: 0.05, power: 0.8, approx: 'normal' })).toBe(32);
    // By hand: (1.959964 + 0.841621)^2 * (0.266 / 0.303)^2 = 7.849 * 0.7707 = 6.05, so 7 under the normal
    // formula; the t formula needs 9 (scipy brute force, in the reference file).
    expect(queriesNeeded(0.266, 0.303, { alpha: 0.05, power: 0.8, approx: 'normal' })).toBe(7);
    expect(queriesNeeded(0.266, 0.303, { alpha: 0.05, power: 0.8 })).toBe(9);
  });

  it('needs 2 queries for no spread and refuses a delta that is not positive', () => {
    expect(queriesNeeded(0, 0.01, { alpha: 0.05, power: 0.8 })).toBe(2);
    expect(() => queriesNeeded(0.2, 0, { alpha: 0.05, power: 0.8 })).toThrow(/delta must be a finite number > 0/);
    expect(() => queriesNeeded(0.2, 0.1, { alpha: 1.5, power: 0.8 })).toThrow(/alpha/);
  });
});

describe('firstThreshold', () => {
  it('is alpha/m for the step-wise corrections, alpha/(m H_m) for BY, alpha without correction', () => {
    expect(firstThreshold(0.05, 4, 'holm')).toBe(0.0125);
    expect(firstThreshold(0.05, 4, 'bh')).toBe(0.0125);
    expect(firstThreshold(0.05, 3, 'by')).toBeCloseTo(0.05 / (3 * (1 + 1 / 2 + 1 / 3)), 15);
    expect(firstThreshold(0.05, 4, 'none')).toBe(0.05);
  });
});

describe('labelsNeeded (PPI++ with tuned lambda)', () => {
  it('matches scipy brute force minimising the variance over lambda numerically', () => {
    for (const l of committed.labels) {
      const got = labelsNeeded({ sdJudge: l.sdJudge, sdHuman: l.sdHuman, rho: l.rho, halfWidth: l.halfWidth, alpha: l.alpha, judged: l.judged });
      expect(got.labels, JSON.stringify(l)).toBe(l.labels);
      expect(got.exceedsJudged).toBe(l.labels > l.judged);
      const v = ppiVariance({ sdHuman: l.sdHuman, sdJudge: l.sdJudge, rho: l.rho, labelled: l.labels, judged: l.judged });
      expect(v.lambda).toBeCloseTo(l.lambda, 5);
    }
  });

  it('closed-form cases: rho 0 needs the human-only (z sd / w)^2, and with N very large rho^2 of it is saved', () => {
    // rho = 0: the judge adds nothing and se^2 = sd^2/n, so n = ceil((z sd / w)^2) = ceil((1.959964 * 0.2 / 0.03)^2) = 171.
    const z = normalQuantile(0.975);
    expect(labelsNeeded({ sdJudge: 0.2, rho: 0, halfWidth: 0.03, alpha: 0.05, judged: 10_000 }).labels).toBe(Math.ceil(((z * 0.2) / 0.03) ** 2));
    expect(Math.ceil(((z * 0.2) / 0.03) ** 2)).toBe(171);
    // rho^2 = 0.75, N -> infinity: n -> sd^2 (1 - rho^2) / s^2 = 170.7 * 0.25 = 42.7 -> 43.
    expect(labelsNeeded({ sdJudge: 0.2, rho: Math.sqrt(0.75), halfWidth: 0.03, alpha: 0.05, judged: 1e9 }).labels).toBe(43);
  });

  it('never recommends fewer than the PPI gate floor of 10 labels per stratum (the issue 41 case: 7 by the formula)', () => {
    // sd 0.2, rho 0.9, w 0.1, N 80: the width alone needs 4 labels; the gate does not decide below 10.
    expect(labelsNeeded({ sdJudge: 0.2, rho: 0.9, halfWidth: 0.1, alpha: 0.05, judged: 80 })).toEqual({ labels: 10, exceedsJudged: false });
    expect(labelsNeeded({ sdJudge: 0.2, rho: 0.9, halfWidth: 0.1, alpha: 0.05, judged: 8 })).toEqual({ labels: 10, exceedsJudged: true });
  });

  it('refuses a correlation outside [-1, 1]', () => {
    expect(() => labelsNeeded({ sdJudge: 0.2, rho: 1.2, halfWidth: 0.03, alpha: 0.05, judged: 100 })).toThrow(/rho must be in \[-1, 1\]/);
  });
});

describe('pearsonCorrelation', () => {
  it('equals numpy.corrcoef, and is NaN for a constant sample', () => {
    // numpy 2.4: np.corrcoef([0.1,-0.2,0.35,0,0.5,-0.05,0.2], [0.12,-0.1,0.3,0.05,0.41,-0.2,0.1])[0,1]
    expect(pearsonCorrelation([0.1, -0.2, 0.35, 0, 0.5, -0.05, 0.2], [0.12, -0.1, 0.3, 0.05, 0.41, -0.2, 0.1])).toBeCloseTo(0.92847641252115, 13);
    expect(pearsonCorrelation([1, 1, 1], [1, 2, 3])).toBeNaN();
  });
});
