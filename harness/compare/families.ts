import { firstThreshold } from '../stats/index.js';
import { comparisonPairs, familyId, GATE_FAMILY, gateCorrection, type Pair } from './comparisons.js';
import type { CompareConfig, GateConfig } from './config.js';

/** A stratum's id and query count, as a report's strata list them (the overall row included). */
export interface StratumSize {
  readonly id: string;
  readonly n: number;
}

/** A family of tests as a config declares it, known before any run: its size and its largest stratum. */
export interface DeclaredFamily {
  readonly id: string;
  readonly role: 'confirmatory' | 'exploratory';
  /** Tests in the family that will have a p (stratum of two or more queries): the correction's m. */
  readonly size: number;
  readonly correction: CompareConfig['correction'];
  /** Queries of the family's largest stratum: its randomization test is the one that can reach the smallest p. */
  readonly largestN: number;
}

/**
 * The strata the gate decides on: the overall row alone under `gain-overall` (or with one stratum), every
 * row otherwise (the no-loss and equivalence rules speak about each stratum). `ids` ends with the overall row.
 */
export function gateStrataOf(rule: GateConfig['rule'], ids: readonly string[]): string[] {
  return rule === 'gain-overall' || ids.length === 1 ? [ids[ids.length - 1] as string] : [...ids];
}

/**
 * The families a report of this config will hold, counted the way computeComparisons counts them, from the
 * run ids, the strata and the tested measures alone: so a family that can never reach significance is seen
 * at load, before any run.
 */
export function declaredFamilies(p: {
  readonly runIds: readonly string[];
  readonly strata: readonly StratumSize[];
  readonly testedMeasures: readonly string[];
  readonly cfg: CompareConfig;
  readonly gate?: Pick<GateConfig, 'baseline' | 'candidate' | 'measure' | 'rule'>;
}): DeclaredFamily[] {
  const { cfg, gate } = p;
  const baseline = cfg.baseline ?? (p.runIds[0] as string);
  const gatePair: Pair | undefined = gate ? { baseline: gate.baseline ?? baseline, system: gate.candidate } : undefined;
  const pairs = comparisonPairs(p.runIds, baseline, cfg.allPairs, gatePair);
  const gateStrata = gate
    ? gateStrataOf(
        gate.rule,
        p.strata.map((s) => s.id),
      )
    : [];
  const byId = new Map<string, { size: number; largestN: number }>();
  for (const s of p.strata) {
    if (s.n < 2) continue;
    for (const measure of p.testedMeasures) {
      for (const pair of pairs) {
        const confirmatory =
          gate !== undefined &&
          gatePair !== undefined &&
          measure === gate.measure &&
          pair.baseline === gatePair.baseline &&
          pair.system === gatePair.system &&
          gateStrata.includes(s.id);
        const id = confirmatory ? GATE_FAMILY : familyId(cfg, s.id, measure);
        const f = byId.get(id) ?? { size: 0, largestN: 0 };
        byId.set(id, { size: f.size + 1, largestN: Math.max(f.largestN, s.n) });
      }
    }
  }
  return [...byId].map(([id, f]) => ({
    id,
    role: id === GATE_FAMILY ? 'confirmatory' : 'exploratory',
    size: f.size,
    correction: id === GATE_FAMILY ? gateCorrection(cfg.correction) : cfg.correction,
    largestN: f.largestN,
  }));
}

/**
 * Smallest p the randomization test can return over `n` queries with `permutations` draws: 2/2ⁿ when it
 * enumerates (2ⁿ <= permutations; the identity and the all-flipped vector always tie), else 1/(B + 1).
 */
export function smallestRandomizationP(n: number, permutations: number): number {
  return 2 ** n <= permutations ? 2 / 2 ** n : 1 / (permutations + 1);
}

/** Threshold the smallest p of the family must pass: its correction's first step (see firstThreshold). */
export function familyThreshold(f: Pick<DeclaredFamily, 'size' | 'correction'>, alpha: number): number {
  return firstThreshold(alpha, f.size, f.correction);
}

/** Rounds up to two significant digits: 10,240 -> 11,000, so a raised count reads as chosen, not computed. */
export function roundUpNumber(x: number): number {
  if (x <= 100) return Math.ceil(x);
  const unit = 10 ** (Math.floor(Math.log10(x)) - 1);
  return Math.ceil(x / unit) * unit;
}

/** What the draws allow a family: the smallest corrected p it can reach, and the draws it needs to pass alpha. */
export interface FamilyReach {
  readonly family: DeclaredFamily;
  /** Smallest attainable corrected p: the smallest attainable p scaled by alpha over the first threshold. */
  readonly smallestCorrectedP: number;
  /** The family can reach significance with the draws given. */
  readonly reachable: boolean;
  /** Smallest round permutation count that makes it reachable; null when no count can (strata too small). */
  readonly needed: number | null;
}

/**
 * Whether a randomization test family of `f` can pass alpha with `permutations` draws, and the smallest round
 * count that lets it. The smallest p comes from the largest stratum; Monte Carlo p falls as 1/(B + 1) until
 * B reaches 2ⁿ, where enumeration fixes it at 2/2ⁿ: past that, more draws change nothing.
 */
export function familyReach(f: DeclaredFamily, permutations: number, alpha: number): FamilyReach {
  const threshold = familyThreshold(f, alpha);
  const pMin = smallestRandomizationP(f.largestN, permutations);
  const smallestCorrectedP = Math.min(1, (pMin * alpha) / threshold);
  const reachable = pMin < threshold;
  const enumerated = 2 ** f.largestN;
  let needed: number | null = null;
  if (2 / enumerated < threshold) {
    // Smallest B with 1/(B + 1) < threshold, unless enumerating all 2ⁿ vectors gets there with fewer.
    const monteCarlo = Math.floor(1 / threshold);
    needed = roundUpNumber(Math.max(100, Math.min(monteCarlo, enumerated)));
  }
  return { family: f, smallestCorrectedP, reachable, needed };
}
