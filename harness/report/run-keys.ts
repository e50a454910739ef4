import type { ReportData } from '../decision/types.js';

/**
 * Run keys: the short name each run has in the means tables and their significance superscripts (ranx's
 * letters). Up to 26 runs they are letters a-z; beyond, numbers 1, 2, ... in run order, because two-letter keys
 * concatenated into a superscript (`aabcdefhkm`) can no longer be read apart. A superscript lists the runs a
 * value is significantly better than as compact ranges (`a–f,h`, `3–27,31`), so it stays short even at 60 runs.
 */

/** Mark after a run key that comes from the gate's confirmatory comparison. */
export const GATE_MARK = '†';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

/** Each run's key, in run order: letters up to 26 runs, numbers from 1 beyond. */
export function runKeys(data: Pick<ReportData, 'runs'>): ReadonlyMap<string, string> {
  const letters = data.runs.length <= ALPHABET.length;
  return new Map(data.runs.map((r, i) => [r.id, letters ? (ALPHABET[i] as string) : String(i + 1)]));
}

/** One run `run` is significantly better than: its position in run order, and whether the gate's comparison says so. */
export interface Win {
  readonly index: number;
  readonly id: string;
  readonly gate: boolean;
}

/**
 * The runs that `run` is significantly better than in `stratum` on `measure`, in run order: from every
 * significant comparison involving `run`, whichever side it is on.
 */
export function winsOf(data: Pick<ReportData, 'comparisons' | 'runs'>, stratum: string, measure: string, run: string): Win[] {
  const index = new Map(data.runs.map((r, i) => [r.id, i]));
  const out: Win[] = [];
  for (const c of data.comparisons) {
    if (c.stratum !== stratum || c.measure !== measure || !c.significant) continue;
    const other = c.system === run && c.delta > 0 ? c.baseline : c.baseline === run && c.delta < 0 ? c.system : undefined;
    if (other !== undefined) out.push({ index: index.get(other) ?? -1, id: other, gate: c.role === 'confirmatory' });
  }
  return out.sort((a, b) => a.index - b.index);
}

/** How a rendering writes a superscript: the range dash, the gate mark, and what separates two segments. */
export interface WinsStyle {
  readonly dash: string;
  readonly mark: string;
  readonly sep: string;
}

export const PLAIN_WINS: WinsStyle = { dash: '–', mark: GATE_MARK, sep: ',' };

/** Most ranges a superscript lists before it gives a count instead. */
export const MAX_SEGMENTS = 6;

/**
 * Wins as compact ranges of keys: runs of three or more consecutive keys become `first–last`; a key from the
 * gate's comparison stands alone with its mark, so the confirmatory win is never hidden inside a range.
 */
export function winsText(keys: ReadonlyMap<string, string>, wins: readonly Win[], style: WinsStyle = PLAIN_WINS): string {
  const key = (w: Win) => keys.get(w.id) ?? '?';
  const segments: string[] = [];
  let i = 0;
  while (i < wins.length) {
    const w = wins[i] as Win;
    let j = i;
    if (!w.gate) while (j + 1 < wins.length && !(wins[j + 1] as Win).gate && (wins[j + 1] as Win).index === (wins[j] as Win).index + 1) j++;
    const last = wins[j] as Win;
    if (w.gate) segments.push(key(w) + style.mark);
    else if (j - i >= 2) segments.push(`${key(w)}${style.dash}${key(last)}`);
    else segments.push(...wins.slice(i, j + 1).map(key));
    i = j + 1;
  }
  if (segments.length <= MAX_SEGMENTS) return segments.join(style.sep);
  // Scattered wins: the count, the gate's win still named; the list is in comparisons.csv (and report.html's tooltip).
  const gate = wins.filter((w) => w.gate);
  return [...gate.map((w) => key(w) + style.mark), `${wins.length - gate.length} runs`].join(style.sep);
}

/** The legend's sentence on superscripts, with examples in this report's own keys; `sup` writes one superscript. */
export function keysLegend(data: Pick<ReportData, 'runs'>, sup: (s: string) => string): string {
  const letters = data.runs.length <= ALPHABET.length;
  const [a, b, c] = letters ? ['a', 'b', 'd'] : ['1', '2', '4'];
  return (
    `Superscripts name, by their key in the runs table, the runs a value is significantly better than (ranx style): ` +
    `${sup(a)} = better than run ${a}; ${sup(`${a}${PLAIN_WINS.dash}${c}`)} = better than runs ${a} to ${c}; ${sup(`${b}${GATE_MARK}`)} comes from the gate's confirmatory comparison, every other key is exploratory; ${sup('40 runs')} counts wins too scattered for ${MAX_SEGMENTS} ranges (each is a row of comparisons.csv). ` +
    `${letters ? 'Keys are letters' : `Keys are numbers (there are more than ${ALPHABET.length} runs)`}, in run order.`
  );
}
