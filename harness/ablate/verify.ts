import type { ResolvedConfig } from '../config/load.js';

export type VerifyStatus = 'OK' | 'OKISH' | 'FAIL';

export interface VerifyLine {
  readonly run: string;
  readonly measure: string;
  readonly expected: number | undefined;
  readonly tolerance: number | undefined;
  readonly actual: number;
  readonly status: VerifyStatus | undefined;
}

/**
 * Checks the `expect:` block: OK within tolerance, OKISH within 1.5x (Anserini's band), FAIL beyond — in either
 * direction, since an unexplained improvement is a change too. Runs without expectations are listed beside
 * them for reference.
 */
export function verify(cfg: ResolvedConfig, means: ReadonlyMap<string, ReadonlyMap<string, number>>): VerifyLine[] {
  const measures = new Set<string>();
  for (const entries of Object.values(cfg.expect)) for (const m of Object.keys(entries)) measures.add(m);
  const lines: VerifyLine[] = [];
  const gridMembers = new Set([...cfg.plan.groups.values()].flat());
  for (const runId of cfg.runIds) {
    // Grid members without expectations would bury the lines that matter; they stay in the report.
    if (gridMembers.has(runId) && cfg.expect[runId] === undefined) continue;
    for (const m of measures) {
      const actual = means.get(runId)?.get(m);
      if (actual === undefined) continue;
      const e = cfg.expect[runId]?.[m];
      let status: VerifyStatus | undefined;
      if (e) {
        const d = Math.abs(actual - e.value);
        // Compare at a hair above the tolerance so 0.3218 vs 0.3268 at tolerance 0.005 is not lost to binary rounding.
        const slack = 1e-12;
        status = d <= e.tolerance + slack ? 'OK' : d <= 1.5 * e.tolerance + slack ? 'OKISH' : 'FAIL';
      }
      lines.push({ run: runId, measure: m, expected: e?.value, tolerance: e?.tolerance, actual, status });
    }
  }
  return lines;
}

export function formatVerify(lines: readonly VerifyLine[]): string {
  const runW = Math.max(16, ...lines.map((l) => l.run.length));
  const mW = Math.max(10, ...lines.map((l) => l.measure.length));
  return lines
    .map((l) => {
      const head = `  ${(l.status ?? '--').padEnd(6)} ${l.run.padEnd(runW)} ${l.measure.padEnd(mW)}`;
      if (l.status === undefined) return `${head} actual ${l.actual.toFixed(4)} (no expectation)`;
      const d = l.actual - l.expected!;
      return `${head} expected ${l.expected!.toFixed(4)} actual ${l.actual.toFixed(4)} delta ${d >= 0 ? '+' : ''}${d.toFixed(4)} tolerance ${l.tolerance!.toFixed(4)}`;
    })
    .join('\n');
}
