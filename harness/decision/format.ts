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

/**
 * An interval of differences: `[-0.0120, +0.0450]`; one unbounded end prints as `-inf` / `+inf`. With both ends
 * unbounded no shift can be rejected at the interval's level, which says nothing about the difference, so it
 * prints as `not computable`, with `why` when the caller knows it (see {@link ciWhy}).
 */
export function fmtCI(ci: readonly [number | null, number | null], why?: string): string {
  if (ci[0] === null && ci[1] === null) return `not computable${why ? `: ${why}` : ''}`;
  return `[${ci[0] === null ? '-inf' : fmtDelta(ci[0])}, ${ci[1] === null ? '+inf' : fmtDelta(ci[1])}]`;
}

/**
 * Why a comparison's interval is unbounded on both sides: a randomization test of B draws resolves no p below
 * 1/(B + 1), so at a corrected level above 1 - 1/(B + 1) every shift is kept. Undefined when it has bounds.
 */
export function ciWhy(c: {
  readonly ci: readonly [number | null, number | null];
  readonly ciLevel: number | null;
  readonly permutations: number | null;
}): string | undefined {
  if (c.ci[0] !== null || c.ci[1] !== null) return undefined;
  if (c.permutations === null) return `no shift can be rejected at the ${fmtLevel(c.ciLevel)} level`;
  return `${c.permutations.toLocaleString('en-US')} permutations cannot reach the corrected ${fmtLevel(c.ciLevel)} level`;
}

/** A comparison's interval, with the reason in words when it has no bounds. */
export function fmtCompCI(c: Parameters<typeof ciWhy>[0]): string {
  return fmtCI(c.ci, ciWhy(c));
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
