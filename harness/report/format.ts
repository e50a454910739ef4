/**
 * The one place numbers become text. Every rendering (Markdown, LaTeX, HTML, ADR) and the gate's reason use
 * these, so a number quoted in an ADR is character-for-character the one in report.md. CSV and report.json
 * keep full precision.
 */

/** Decimals of means, deltas, CIs and MDEs: trec_eval's 4. */
export const DECIMALS = 4;

/** A mean: `0.4123`. */
export function fmtMean(x: number): string {
  return noNegativeZero(x.toFixed(DECIMALS));
}

/** A signed difference: `+0.0302`, `-0.0150`; a difference that rounds to zero prints as `+0.0000`. */
export function fmtDelta(x: number): string {
  const s = noNegativeZero(x.toFixed(DECIMALS));
  return s.startsWith('-') ? s : `+${s}`;
}

/** An interval of differences: `[-0.0120, +0.0450]`; an unbounded end prints as `-inf` / `+inf`. */
export function fmtCI(ci: readonly [number | null, number | null]): string {
  return `[${ci[0] === null ? '-inf' : fmtDelta(ci[0])}, ${ci[1] === null ? '+inf' : fmtDelta(ci[1])}]`;
}

/**
 * A confidence level as a percentage with just enough decimals to show how far it is from 100%: `95.0%`,
 * `98.8%`, `99.917%`; `n/a` when there is none.
 */
export function fmtLevel(level: number | null): string {
  if (level === null) return 'n/a';
  const decimals = Math.max(1, Math.ceil(-Math.log10(1 - level)) - 1);
  return `${(level * 100).toFixed(decimals)}%`;
}

/** A p-value: four decimals, `<0.0001` below that, `n/a` when the test has no p for the data. */
export function fmtP(p: number | null): string {
  if (p === null) return 'n/a';
  if (p < 0.0001) return '<0.0001';
  return p.toFixed(DECIMALS);
}

/** Cohen's d_z: two decimals, `n/a` when undefined. */
export function fmtDz(x: number | null): string {
  return x === null ? 'n/a' : noNegativeZero(x.toFixed(2));
}

/** A minimum detectable effect: four decimals, `n/a` when undefined. */
export function fmtMde(x: number | null): string {
  return x === null ? 'n/a' : x.toFixed(DECIMALS);
}

/** Win/tie/loss counts of the system against its baseline: `7/3/2`. */
export function fmtWtl(c: { readonly wins: number; readonly ties: number; readonly losses: number }): string {
  return `${c.wins}/${c.ties}/${c.losses}`;
}

function noNegativeZero(s: string): string {
  return /^-0\.0*$/.test(s) ? s.slice(1) : s;
}
