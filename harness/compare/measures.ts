import { isTested, parseMeasure, type Measure } from '../metrics/measure.js';

/**
 * A Measure as a Report and its Comparisons carry it. `spelling` is the wire form (the key of `perQuery`,
 * `summary` and `comparisons`, a CSV column), kept exactly as given; `measure` is that spelling read once, so
 * no later step reads a family or cutoff out of the text.
 */
export interface ReportedMeasure {
  readonly spelling: string;
  readonly measure: Measure;
  /** False for a coverage diagnostic (`Judged@k`): shown, never compared. */
  readonly tested: boolean;
}

/** Reads a canonical spelling, as a ReportInput or report.json lists it. */
export function reportedMeasure(spelling: string): ReportedMeasure {
  const measure = parseMeasure(spelling);
  return { spelling, measure, tested: isTested(measure) };
}

export function reportedMeasures(spellings: readonly string[]): ReportedMeasure[] {
  return spellings.map(reportedMeasure);
}
