import { type ReportedMeasure, reportedMeasure } from '../compare/measures.js';
import { formatMeasure } from '../metrics/index.js';
import { isMeasurePreset, measurePresets } from '../metrics/presets.js';
import type { Resolved } from './resolved.js';

/**
 * A measure as a config writes it, read once: its canonical spelling (`nDCG@10`) with the Measure read from
 * that spelling, or the parse error's message. What the loader returns here travels on (ResolvedConfig's
 * `parsedMeasures`), so no later step reads the text again. An alias (`ndcg_cut_10`) is read a second time in
 * its canonical spelling, so the value is the one every spelling of the measure shares.
 */
export function canonicalMeasure(m: string): ReportedMeasure | { error: string } {
  try {
    const written = reportedMeasure(m);
    const spelling = formatMeasure(written.measure);
    return spelling === written.spelling ? written : reportedMeasure(spelling);
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** `measures:` read once, in canonical spellings, no duplicates; a preset name expands in place. */
export function resolveMeasures(list: readonly string[] | undefined): Resolved<ReportedMeasure[]> {
  const measures: ReportedMeasure[] = [];
  const problems: string[] = [];
  (list ?? []).forEach((entry, i) => {
    for (const m of isMeasurePreset(entry) ? measurePresets[entry] : [entry]) {
      const c = canonicalMeasure(m);
      if ('error' in c) problems.push(`measures[${i}]: ${c.error}`);
      else if (measures.some((x) => x.spelling === c.spelling)) problems.push(`measures[${i}]: "${m}" is listed twice (as ${c.spelling})`);
      else measures.push(c);
    }
  });
  return { value: measures, problems };
}

/**
 * A measure another block names (`tune.measure`, `gate.measure`), canonical and among the config's measures;
 * `measures` undefined (the block failed or is missing, a problem of its own) checks the spelling only.
 */
export function listedMeasure(m: string, path: string, measures: readonly string[] | undefined): Resolved<ReportedMeasure | undefined> {
  const c = canonicalMeasure(m);
  if ('error' in c) return { value: undefined, problems: [`${path}: ${c.error}`] };
  if (measures !== undefined && !measures.includes(c.spelling))
    return { value: c, problems: [`${path}: "${m}" is not among measures (${measures.join(', ')})`] };
  return { value: c, problems: [] };
}
