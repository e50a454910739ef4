import { distance } from 'fastest-levenshtein';

/** The closest of `known` to `word`, when it is close enough to be a likely typo. */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  for (const k of known) {
    const d = distance(word.toLowerCase(), k.toLowerCase());
    if (d < bestDist) {
      bestDist = d;
      best = k;
    }
  }
  return best !== undefined && bestDist <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** `; did you mean "x"?` or the empty string. */
export function didYouMean(word: string, known: readonly string[]): string {
  const c = closest(word, known);
  return c === undefined ? '' : `; did you mean "${c}"?`;
}
