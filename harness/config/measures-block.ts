import { formatMeasure, parseMeasure } from '../metrics/index.js';
import { isMeasurePreset, measurePresets } from '../metrics/presets.js';
import type { Resolved } from './resolved.js';

/** A measure's canonical spelling (`nDCG@10`), or the parse error's message. */
export function canonicalMeasure(m: string): { canonical: string } | { error: string } {
  try {
    return { canonical: formatMeasure(parseMeasure(m)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** `measures:` in canonical spellings, no duplicates; a preset name expands in place. */
export function resolveMeasures(list: readonly string[] | undefined): Resolved<string[]> {
  const measures: string[] = [];
  const problems: string[] = [];
  (list ?? []).forEach((entry, i) => {
    for (const m of isMeasurePreset(entry) ? measurePresets[entry] : [entry]) {
      const c = canonicalMeasure(m);
      if ('error' in c) problems.push(`measures[${i}]: ${c.error}`);
      else if (measures.includes(c.canonical)) problems.push(`measures[${i}]: "${m}" is listed twice (as ${c.canonical})`);
      else measures.push(c.canonical);
    }
  });
  return { value: measures, problems };
}

/**
 * A measure another block names (`tune.measure`, `gate.measure`), canonical and among the config's measures;
 * `measures` undefined (the block failed or is missing, a problem of its own) checks the spelling only.
 */
export function listedMeasure(m: string, path: string, measures: readonly string[] | undefined): Resolved<string | undefined> {
  const c = canonicalMeasure(m);
  if ('error' in c) return { value: undefined, problems: [`${path}: ${c.error}`] };
  if (measures !== undefined && !measures.includes(c.canonical))
    return { value: c.canonical, problems: [`${path}: "${m}" is not among measures (${measures.join(', ')})`] };
  return { value: c.canonical, problems: [] };
}
