/**
 * `concepts: lexical`: noun phrases and named entities of a text with wink-nlp and its English lite model
 * (POS tags and lemmas; docs/adr/0019-graph-arms.md says why wink-nlp over compromise), canonicalised so
 * the same concept gets one name in every document and in every query.
 */
import { createRequire } from 'node:module';

/**
 * Bump when a change here changes any concept name of any text; part of every graph cache key. Also covers
 * the wink-nlp model (its tags and lemmas decide the names), whose version goes into the key as well.
 */
export const LEXICAL_VERSION = 1;

/** The concepts of one text: every mention, in order (repeats count mentions); entities are a subset. */
export interface TextConcepts {
  readonly concepts: readonly string[];
  readonly entities: readonly string[];
}

/** Canonical tokens of a text and its concept mentions; one instance per process (the model loads once). */
export interface ConceptExtractor {
  /** Lower-cased lemmas of the text's word tokens, in order: what concept names are made of. */
  tokens(text: string): string[];
  extract(text: string): TextConcepts;
  /** The canonical name of a phrase given as a whole (an LLM's subject or object): its name tokens' lemmas. */
  canonical(phrase: string): string;
  /** The NLP model's identity, for cache keys. */
  readonly model: string;
}

/** Longest concept name in tokens; a longer noun run keeps its last tokens (the head and its modifiers). */
export const MAX_CONCEPT_TOKENS = 4;

const CONTENT = new Set(['NOUN', 'PROPN', 'ADJ', 'NUM']);
/** A token that can be part of a name: letters or digits, inner `.`, `&`, `-` (no contractions, no symbols). */
const NAME_TOKEN = /^[\p{L}\p{N}](?:[\p{L}\p{N}.&-]*[\p{L}\p{N}])?$/u;

interface Tok {
  readonly canon: string;
  readonly pos: string;
  readonly stop: boolean;
}

/**
 * Concepts from tagged tokens (pure; exported for tests). A noun run is a maximal run of NOUN / PROPN / ADJ /
 * NUM tokens; leading adjectives and numbers and trailing adjectives are dropped ("easy 7 km recovery run"
 * -> "km recovery run"), stop words and non-name tokens break a run, and a run needs a noun. Each run is one
 * concept; a run of several tokens also gives its head (last noun) so "beagle mix" and "mix" connect. A maximal
 * PROPN run is a named entity ("seattle humane").
 */
export function conceptsOfTokens(toks: readonly Tok[]): TextConcepts {
  const concepts: string[] = [];
  const entities: string[] = [];
  let i = 0;
  while (i < toks.length) {
    const usable = (t: Tok) => CONTENT.has(t.pos) && !t.stop && NAME_TOKEN.test(t.canon);
    if (!usable(toks[i] as Tok)) {
      i++;
      continue;
    }
    let j = i;
    while (j < toks.length && usable(toks[j] as Tok)) j++;
    let run = toks.slice(i, j);
    i = j;
    while (run.length > 0 && (run[0]?.pos === 'ADJ' || run[0]?.pos === 'NUM')) run = run.slice(1);
    while (run.length > 0 && run[run.length - 1]?.pos === 'ADJ') run = run.slice(0, -1);
    if (!run.some((t) => t.pos === 'NOUN' || t.pos === 'PROPN')) continue;
    if (run.length > MAX_CONCEPT_TOKENS) run = run.slice(run.length - MAX_CONCEPT_TOKENS);
    concepts.push(run.map((t) => t.canon).join(' '));
    if (run.length > 1) {
      const head = [...run].reverse().find((t) => t.pos === 'NOUN' || t.pos === 'PROPN') as Tok;
      concepts.push(head.canon);
    }
    let k = 0;
    while (k < run.length) {
      if (run[k]?.pos !== 'PROPN') {
        k++;
        continue;
      }
      let e = k;
      while (e < run.length && run[e]?.pos === 'PROPN') e++;
      entities.push(
        run
          .slice(k, e)
          .map((t) => t.canon)
          .join(' '),
      );
      k = e;
    }
  }
  return { concepts, entities };
}

let shared: ConceptExtractor | undefined;

/** The wink-nlp extractor, loaded on first use (about 100 ms for the model). */
export function lexicalExtractor(): ConceptExtractor {
  if (shared) return shared;
  const require = createRequire(import.meta.url);
  const winkNLP = require('wink-nlp') as (model: unknown) => WinkNlp;
  const model = require('wink-eng-lite-web-model') as unknown;
  const version = (require('wink-eng-lite-web-model/package.json') as { version: string }).version;
  const nlpVersion = (require('wink-nlp/package.json') as { version: string }).version;
  const nlp = winkNLP(model);
  const its = nlp.its;
  const tagged = (text: string): Tok[] => {
    const tokens = nlp.readDoc(text).tokens();
    const lemma = tokens.out(its.lemma) as string[];
    const pos = tokens.out(its.pos) as string[];
    const stop = tokens.out(its.stopWordFlag) as boolean[];
    return lemma.map((l, i) => ({ canon: l.toLowerCase(), pos: pos[i] as string, stop: stop[i] as boolean }));
  };
  shared = {
    model: `wink-nlp@${nlpVersion}+wink-eng-lite-web-model@${version}`,
    tokens: (text) => tagged(text).map((t) => t.canon),
    extract: (text) => conceptsOfTokens(tagged(text)),
    canonical: (phrase) =>
      tagged(phrase)
        .filter((t) => !t.stop && NAME_TOKEN.test(t.canon))
        .map((t) => t.canon)
        .join(' '),
  };
  return shared;
}

/** The slice of wink-nlp's API used here (its own typings describe the whole). */
interface WinkNlp {
  readonly its: { readonly lemma: unknown; readonly pos: unknown; readonly stopWordFlag: unknown };
  readDoc(text: string): { tokens(): { out(what: unknown): unknown[] } };
}

/**
 * Every concept of `dictionary` whose name occurs in `tokens` as a whole run of tokens (so "tom" never matches
 * "tomato"), longest first at each position but overlapping matches kept ("beagle mix" and "mix"). Returns
 * dictionary ids, each once, in order of first occurrence.
 */
export function matchConcepts(tokens: readonly string[], dictionary: ReadonlyMap<string, number>): number[] {
  const found: number[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < tokens.length; i++) {
    for (let n = Math.min(MAX_CONCEPT_TOKENS, tokens.length - i); n >= 1; n--) {
      const id = dictionary.get(tokens.slice(i, i + n).join(' '));
      if (id !== undefined && !seen.has(id)) {
        seen.add(id);
        found.push(id);
      }
    }
  }
  return found;
}
