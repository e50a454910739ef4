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

/**
 * Measures looked up by canonical spelling: how a config's measures travel once the loader has read them, so
 * any step holding a spelling (a gate's, a tuned measure, a subset of the list) takes the value read there.
 */
export type MeasureTable = ReadonlyMap<string, ReportedMeasure>;

export function measureTable(measures: readonly ReportedMeasure[]): MeasureTable {
  return new Map(measures.map((m) => [m.spelling, m] as const));
}

/** The measure a table holds under `spelling`; one it lacks is a bug (the loader checked every spelling a config names). */
export function measureNamed(table: MeasureTable, spelling: string): ReportedMeasure {
  const m = table.get(spelling);
  if (m === undefined) throw new Error(`measure ${spelling} was not read by the config loader (read: ${[...table.keys()].join(', ')})`);
  return m;
}
