import { createRequire } from 'node:module';

// fastest-levenshtein is CommonJS: imported from ESM at start-up it also loads Node's CJS export lexer
// (8-14 ms of every `harness eval`, node --cpu-prof). It is required on the first suggestion instead, which
// only an error message makes.
let distanceFn: ((a: string, b: string) => number) | undefined;
function distance(a: string, b: string): number {
  distanceFn ??= (createRequire(import.meta.url)('fastest-levenshtein') as typeof import('fastest-levenshtein')).distance;
  return distanceFn(a, b);
}

/**
 * The one "did you mean" of the workbench (config keys and kinds, measures, trec_eval names, eval-set formats):
 * the entry of `known` nearest to `word` by edit distance, ignoring case; ties go to the earlier entry. By
 * default only a likely typo (within a third of the word's length, at least 2 edits) is suggested; `always`
 * returns the nearest whatever the distance, for lists a user picks from anyway (measure names).
 */
export function closest(word: string, known: readonly string[], opts: { readonly always?: boolean } = {}): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  for (const k of known) {
    const d = distance(word.toLowerCase(), k.toLowerCase());
    if (d < bestDist) {
      bestDist = d;
      best = k;
    }
  }
  if (opts.always) return best;
  return best !== undefined && bestDist <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** `; did you mean "x"?` or the empty string. */
export function didYouMean(word: string, known: readonly string[]): string {
  const c = closest(word, known);
  return c === undefined ? '' : `; did you mean "${c}"?`;
}
