/**
 * The lexical-overlap rule that splits single-hop questions into `exact` and `paraphrase` strata. Neither
 * LoCoMo nor LongMemEval labels this; the rule is ours (docs/adr/0007-locomo-strata.md) and is fixed here so
 * every run derives the same strata:
 *
 * 1. Tokenise: lowercase, split on every character that is not `a-z` or `0-9` (so "Caroline's" gives
 *    `caroline`, `s`; "LGBTQ+" gives `lgbtq`).
 * 2. Content tokens: drop tokens of one character and tokens in {@link STOP_WORDS}; keep the distinct rest.
 *    No stemming: "paint" and "painting" differ, which is the kind of gap a paraphrase stratum should catch.
 * 3. `overlap` = |question content tokens ∩ evidence content tokens| / |question content tokens|, where the
 *    evidence tokens are the union over the question's evidence documents (the text as indexed, speaker
 *    prefix included). A question with no content tokens has overlap 0.
 * 4. `exact` when overlap >= the threshold (default 0.5), else `paraphrase`.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these ' +
    'they this those through to too under until up very was we were what when where which while who whom whose why will with ' +
    'would you your yours yourself yourselves ever also get got kind many much one ones thing things type way like'
  ).split(' '),
);

export const DEFAULT_EXACT_THRESHOLD = 0.5;

export function contentTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const t of text.toLowerCase().split(/[^a-z0-9]+/)) {
    if (t.length > 1 && !STOP_WORDS.has(t)) out.add(t);
  }
  return out;
}

/** The share of the question's content tokens found in the evidence texts (rule above, step 3). */
export function contentOverlap(question: string, evidenceTexts: readonly string[]): number {
  const q = contentTokens(question);
  if (q.size === 0) return 0;
  const ev = new Set<string>();
  for (const t of evidenceTexts) for (const tok of contentTokens(t)) ev.add(tok);
  let hit = 0;
  for (const t of q) if (ev.has(t)) hit += 1;
  return hit / q.size;
}

export function exactOrParaphrase(question: string, evidenceTexts: readonly string[], threshold = DEFAULT_EXACT_THRESHOLD): 'exact' | 'paraphrase' {
  return contentOverlap(question, evidenceTexts) >= threshold ? 'exact' : 'paraphrase';
}
