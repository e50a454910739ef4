import { fmtDelta, fmtMde, fmtMean } from './format.js';
import type { ReportCore } from './select.js';
import type { ReportWarning } from './types.js';

/**
 * A warning rule: a pure function of the report's numbers that returns zero or more caveats. Rules never
 * change numbers; they say what the numbers cannot carry.
 */
export type WarningRule = (data: ReportCore) => ReportWarning[];

const MAX_LISTED = 3;

function listSome(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join('; ');
  return items.length > MAX_LISTED ? `${shown}; and ${items.length - MAX_LISTED} more` : shown;
}

/** Strata smaller than `compare.underpoweredBelow` queries. */
const underpoweredStratum: WarningRule = (data) =>
  data.strata
    .filter((s) => s.n < data.compare.underpoweredBelow)
    .map((s) => ({
      code: 'underpowered-stratum',
      severity: 'warning',
      subject: s.id,
      message:
        `stratum ${s.id} has ${s.n} queries (fewer than ${data.compare.underpoweredBelow}): only large ` +
        `differences can reach significance there, and a non-significant result says little`,
    }));

/**
 * Non-significant comparisons whose observed |delta| is below the minimum detectable effect: the stratum was
 * too small to see a difference of that size, so "no significant difference" is not "no difference".
 */
const mdeAboveDelta: WarningRule = (data) =>
  data.strata.flatMap((s): ReportWarning[] => {
    const hits = data.comparisons.filter(
      (c) => c.stratum === s.id && !c.significant && c.mde !== null && c.mde > Math.abs(c.delta),
    );
    if (hits.length === 0) return [];
    const listed = hits.map((c) => `${c.system} vs ${c.baseline} on ${c.measure}: delta ${fmtDelta(c.delta)}, MDE ${fmtMde(c.mde)}`);
    return [
      {
        code: 'mde-above-delta',
        severity: 'warning',
        subject: s.id,
        message:
          `stratum ${s.id} (n=${s.n}): ${hits.length} non-significant comparison${hits.length === 1 ? '' : 's'} ` +
          `with |delta| below the minimum detectable effect (${listSome(listed)}); these are not evidence of no effect`,
      },
    ];
  });

/** The `Judged@k` measure to read coverage from: `Judged@10` when present, else the first `Judged@k`. */
function judgedMeasure(measures: readonly string[]): string | undefined {
  return measures.includes('Judged@10') ? 'Judged@10' : measures.find((m) => m.startsWith('Judged@'));
}

/** Runs whose mean Judged@k falls below `compare.judgedThreshold` in some stratum: unjudged documents score as non-relevant. */
const judgmentHoles: WarningRule = (data) => {
  const measure = judgedMeasure(data.measures);
  if (!measure) {
    return [
      {
        code: 'holes-unchecked',
        severity: 'info',
        subject: 'measures',
        message:
          'no Judged@k measure in this report, so judgment holes were not checked; add Judged@10 to the measures ' +
          'to see how much of each top 10 was judged',
      },
    ];
  }
  const threshold = data.compare.judgedThreshold;
  return data.runs.flatMap((run): ReportWarning[] => {
    const low = data.summary.filter((r) => r.run === run.id && r.measure === measure && r.mean < threshold);
    if (low.length === 0) return [];
    return [
      {
        code: 'judged-holes',
        severity: 'warning',
        subject: run.id,
        message:
          `run ${run.id}: ${measure} below ${fmtMean(threshold)} in ${low.map((r) => `${r.stratum} (${fmtMean(r.mean)})`).join(', ')}; ` +
          'unjudged documents count as non-relevant, which penalises runs that retrieve outside the judged pool',
      },
    ];
  });
};

/** Runs that stand in for another model or system: their numbers are about the stand-in. */
const substitutes: WarningRule = (data) =>
  data.runs
    .filter((r) => r.substitute !== undefined)
    .map((r) => ({
      code: 'substitute',
      severity: 'warning',
      subject: r.id,
      message: `run ${r.id} is a substitute: ${r.substitute}; its numbers describe the stand-in, not the original`,
    }));

/**
 * Families in which no Monte Carlo randomization test can reach significance: the smallest p it can return is
 * 1/(B+1), and every correction offered here compares the smallest p with alpha/m first (Holm, Bonferroni,
 * Hommel and BH alike). With 10,000 permutations that caps m at about 500 tests at alpha 0.05.
 */
const permutationsTooFew: WarningRule = (data) => {
  if (data.compare.test !== 'randomization' || data.compare.correction === 'none') return [];
  const floor = 1 / (data.compare.permutations + 1);
  return data.families
    .filter((f) => f.size > 0 && floor > data.compare.alpha / f.size)
    .map((f) => ({
      code: 'permutations-too-few',
      severity: 'serious',
      subject: f.id,
      message:
        `family ${f.id} has ${f.size} tests: with ${data.compare.permutations} permutations the smallest attainable ` +
        `p is 1/${data.compare.permutations + 1}, above the first ${data.compare.correction} threshold ` +
        `alpha/m = ${data.compare.alpha}/${f.size}, so no Monte Carlo comparison in it can be significant; set ` +
        `compare.permutations to at least ${Math.ceil(f.size / data.compare.alpha)}`,
    }));
};

/** Fusion inputs that the fusion's own parameters bar from its top-k: their zero contribution is not evidence. */
const unreachableInputs: WarningRule = (data) =>
  data.runs.flatMap((r): ReportWarning[] =>
    (r.diagnostics?.inputs ?? [])
      .filter((d) => !d.reachable)
      .map((d) => ({
        code: 'input-unreachable',
        severity: 'serious',
        subject: `${r.id} <- ${d.input}`,
        message: `${r.id} can never place a document only ${d.input} ranks first in its top-${d.cutoff} (${d.reason}); a zero contribution of ${d.input} here says nothing about ${d.input}`,
      })),
  );

/**
 * Every warning rule, in the order their warnings are listed. A new kind of caveat (fusion diagnostics that
 * find an arm unreachable, parameters tuned on the test split) is one more rule here, reading whatever new
 * field of ReportData carries its evidence.
 */
export const warningRules = {
  'underpowered-stratum': underpoweredStratum,
  'mde-above-delta': mdeAboveDelta,
  'judged-holes': judgmentHoles,
  substitute: substitutes,
  'permutations-too-few': permutationsTooFew,
  'input-unreachable': unreachableInputs,
} as const satisfies Record<string, WarningRule>;

export function deriveWarnings(data: ReportCore): ReportWarning[] {
  return Object.values(warningRules).flatMap((rule) => rule(data));
}
