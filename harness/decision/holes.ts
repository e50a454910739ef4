import type { ReportCore } from './select.js';
import type { ReportWarning } from './types.js';

/** A tuned grid's picks, one per fold: each member once, with its number of folds when there are several folds. */
export function fmtPicks(picks: readonly string[]): string {
  if (picks.length === 1) return picks[0] as string;
  const counts = new Map<string, number>();
  for (const m of picks) counts.set(m, (counts.get(m) ?? 0) + 1);
  return [...counts].map(([m, n]) => `${m} (${n} of ${picks.length} folds)`).join(', ');
}

/**
 * A decision that changes when judgment holes stop counting as not relevant: the gate's verdict, or a tuned
 * grid's pick. Either may be an artefact of the holes, not of the systems.
 */
export function decisionDependsOnHoles(data: ReportCore): ReportWarning[] {
  const h = data.holes;
  // Complete qrels have no holes: a condensed list there only drops documents known to be non-relevant.
  if (h === undefined || data.evalset.qrelsCompleteness === 'complete') return [];
  const out: ReportWarning[] = [];
  if (h.gate && h.gate.plain !== h.gate.condensed) {
    out.push({
      code: 'decision-depends-on-holes',
      severity: 'serious',
      subject: 'gate',
      gate: true,
      message:
        `the gate says ${h.gate.plain} on ${h.measure} but ${h.gate.condensed} on ${h.condensed} (unjudged documents removed): ` +
        'the verdict may be an artefact of judgment holes; judge the pool deeper, or pool the systems the gate compares',
    });
  }
  const changed = h.picks.filter((p) => p.plain.join(',') !== p.condensed.join(','));
  if (changed.length > 0) {
    const g = data.gateResult?.config;
    out.push({
      code: 'decision-depends-on-holes',
      severity: 'serious',
      subject: changed.map((p) => p.tuned).join(', '),
      gate: changed.some((p) => p.tuned === g?.candidate || p.tuned === g?.baseline),
      message: `${changed
        .map((p) => `${p.tuned} picks ${fmtPicks(p.plain)} on ${p.measure} but ${fmtPicks(p.condensed)} on the condensed form`)
        .join('; ')}: the tuned pick may be an artefact of judgment holes`,
    });
  }
  return out;
}
