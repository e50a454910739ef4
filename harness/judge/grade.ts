/**
 * The grade in a judge's reply, or undefined when there is none to trust. Accepted: the UMBRELA answer line
 * `##final score: N` (case and spacing free, the last such line wins, as the prompt asks for the final
 * score last), or a reply that is only the digit. A grade outside 0-3, two different final scores, or
 * prose without the line is unparsable: a guess would be a label the judge never gave (UMBRELA's own code
 * maps such replies to 0, which silently lowers relevance).
 */
export function parseGrade(reply: string): number | undefined {
  const finals = [...reply.matchAll(/##\s*final\s*score\s*:\s*(-?\d+(?:\.\d+)?)/gi)].map((m) => m[1] as string);
  if (finals.length > 0) {
    if (new Set(finals).size > 1) return undefined;
    return gradeOf(finals[finals.length - 1] as string);
  }
  const bare = reply.trim();
  return /^\d$/.test(bare) ? gradeOf(bare) : undefined;
}

function gradeOf(text: string): number | undefined {
  if (!/^[0-3]$/.test(text)) return undefined;
  return Number(text);
}

/**
 * The majority grade of several samples of one pair. Ties go to the lowest tied grade: a tie never raises a
 * document's relevance, so sampling more can only confirm or lower a grade that one sample would have given.
 * Undefined for no samples.
 */
export function majorityGrade(samples: readonly number[]): number | undefined {
  if (samples.length === 0) return undefined;
  const counts = new Map<number, number>();
  for (const g of samples) counts.set(g, (counts.get(g) ?? 0) + 1);
  let best: number | undefined;
  let bestCount = 0;
  for (const [g, c] of counts) {
    if (c > bestCount || (c === bestCount && best !== undefined && g < best)) {
      best = g;
      bestCount = c;
    }
  }
  return best;
}
