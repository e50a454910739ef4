/**
 * The tiered entity resolver of the worlddb recipe (docs/adr/0024-reference-recipes.md): a mention resolves to
 * a known entity by the first tier that accepts it, cheapest and surest first: exact or alias match after
 * normalisation, Jaro-Winkler similarity at or above a threshold, equal phonetic keys (WorldDB's Soundex-style
 * key, or Metaphone), embedding cosine at or above a threshold.
 */

/** Lower-case, letters and digits only, single spaces: "Dr.  O'Neil" -> "dr o neil". */
export function normalizeName(name: string): string {
  return (name.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/**
 * Jaro similarity (Jaro, JASA 1989, doi:10.1080/01621459.1989.10478785): with m characters matching within a
 * window of floor(max(|s|, |t|) / 2) - 1 and t half the matched characters out of order,
 * (m/|s| + m/|t| + (m - t)/m) / 3; 0 when nothing matches, 1 for equal strings.
 */
export function jaro(s: string, t: string): number {
  if (s === t) return 1;
  if (s.length === 0 || t.length === 0) return 0;
  const window = Math.max(0, Math.floor(Math.max(s.length, t.length) / 2) - 1);
  const sm = new Uint8Array(s.length);
  const tm = new Uint8Array(t.length);
  let m = 0;
  for (let i = 0; i < s.length; i++) {
    for (let j = Math.max(0, i - window); j < Math.min(t.length, i + window + 1); j++) {
      if (tm[j] === 0 && s[i] === t[j]) {
        sm[i] = tm[j] = 1;
        m++;
        break;
      }
    }
  }
  if (m === 0) return 0;
  let k = 0;
  let half = 0;
  for (let i = 0; i < s.length; i++) {
    if (sm[i] === 0) continue;
    while (tm[k] === 0) k++;
    if (s[i] !== t[k]) half++;
    k++;
  }
  return (m / s.length + m / t.length + (m - half / 2) / m) / 3;
}

/**
 * Jaro-Winkler similarity (Winkler, 1990, "String Comparator Metrics and Enhanced Decision Rules in the
 * Fellegi-Sunter Model of Record Linkage"): jaro + l * p * (1 - jaro), l the common prefix length up to 4,
 * p = 0.1. Winkler's examples: MARTHA/MARHTA 0.961, DWAYNE/DUANE 0.840, DIXON/DICKSONX 0.813.
 */
export function jaroWinkler(s: string, t: string, p = 0.1): number {
  const j = jaro(s, t);
  let l = 0;
  while (l < 4 && l < s.length && l < t.length && s[l] === t[l]) l++;
  return j + l * p * (1 - j);
}

const VOWEL = new Set(['A', 'E', 'I', 'O', 'U']);
const FRONT = new Set(['E', 'I', 'Y']);

/**
 * Metaphone key of one word (Philips, "Hanging on the Metaphone", Computer Language 7(12), 1990), the original
 * rules: initial AE/GN/KN/PN/WR drop their first letter, initial X is S and WH is W; doubled letters other than C
 * count once; vowels are kept only in first position; B is silent after M at the end; C is X before IA/H (K in
 * SCH), S before E/I/Y, else K; D is J before GE/GI/GY, else T; G is silent in GH not at the end or before a
 * vowel and in GN/GNED at the end, J before E/I/Y, else K; H is silent after a vowel with no vowel next and after
 * C/G/P/S/T; K is silent after C; PH is F; Q is K; S is X in SH/SIO/SIA; T is X in TIA/TIO, 0 (theta) in TH,
 * silent in TCH; V is F; W and Y are kept only before a vowel; X is KS; Z is S. "Phillip" and "Filip" are FLP.
 */
export function metaphone(word: string): string {
  const w = metaphoneLetters(word);
  let out = '';
  for (let i = 0; i < w.length; i++) out += metaphoneCode(w, i);
  return out;
}

/** The letters Metaphone codes: A-Z only, the initial exceptions applied, doubled letters other than C once. */
function metaphoneLetters(word: string): string {
  let w = word.toUpperCase().replace(/[^A-Z]/g, '');
  if (/^(AE|GN|KN|PN|WR)/.test(w)) w = w.slice(1);
  else if (w[0] === 'X') w = `S${w.slice(1)}`;
  else if (w.startsWith('WH')) w = `W${w.slice(2)}`;
  let d = '';
  for (let i = 0; i < w.length; i++) if (w[i] !== w[i - 1] || w[i] === 'C') d += w[i];
  return d;
}

/** The code of the letter at `i` of the prepared word (empty when silent). */
function metaphoneCode(w: string, i: number): string {
  const at = (k: number) => w[k] ?? '';
  const c = w[i] as string;
  const next = at(i + 1);
  const prev = at(i - 1);
  let out = '';
  switch (c) {
    case 'A':
    case 'E':
    case 'I':
    case 'O':
    case 'U':
      if (i === 0) out += c;
      break;
    case 'B':
      if (!(prev === 'M' && i === w.length - 1)) out += 'B';
      break;
    case 'C':
      if (next === 'I' && at(i + 2) === 'A') out += 'X';
      else if (next === 'H') out += prev === 'S' ? 'K' : 'X';
      else if (FRONT.has(next)) {
        if (prev !== 'S') out += 'S';
      } else out += 'K';
      break;
    case 'D':
      out += next === 'G' && FRONT.has(at(i + 2)) ? 'J' : 'T';
      break;
    case 'G':
      if (next === 'H' && !(i + 2 >= w.length || VOWEL.has(at(i + 2)))) break;
      if (next === 'N' && (i + 2 === w.length || (w.slice(i + 1) === 'NED' && i + 4 === w.length))) break;
      out += FRONT.has(next) && prev !== 'G' ? 'J' : 'K';
      break;
    case 'H':
      if ('CGPST'.includes(prev) && prev !== '') break;
      if (VOWEL.has(prev) && !VOWEL.has(next)) break;
      out += 'H';
      break;
    case 'K':
      if (prev !== 'C') out += 'K';
      break;
    case 'P':
      out += next === 'H' ? 'F' : 'P';
      break;
    case 'Q':
      out += 'K';
      break;
    case 'S':
      if (next === 'H' || (next === 'I' && (at(i + 2) === 'O' || at(i + 2) === 'A'))) out += 'X';
      else out += 'S';
      break;
    case 'T':
      if (next === 'I' && (at(i + 2) === 'O' || at(i + 2) === 'A')) out += 'X';
      else if (next === 'H') out += '0';
      else if (!(next === 'C' && at(i + 2) === 'H')) out += 'T';
      break;
    case 'V':
      out += 'F';
      break;
    case 'W':
    case 'Y':
      if (VOWEL.has(next)) out += c;
      break;
    case 'X':
      out += 'KS';
      break;
    case 'Z':
      out += 'S';
      break;
    default:
      out += c;
  }
  return out;
}

/** Soundex digit of each consonant; vowels, Y, H and W have none (H and W do not separate equal digits). */
const SOUNDEX_DIGIT: Readonly<Record<string, string>> = Object.fromEntries(
  (['BFPV', 'CGJKQSXZ', 'DT', 'L', 'MN', 'R'] as const).flatMap((letters, i) => [...letters].map((c) => [c, String(i + 1)])),
);

/**
 * The digraph rewrites WorldDB's source names for its Soundex-style key (docs/recipes/worlddb.md), applied
 * anywhere in the word before coding, so "Phillip" and "Filip" share a key.
 */
const SOUNDEX_DIGRAPHS: readonly (readonly [RegExp, string])[] = [
  [/PH/g, 'F'],
  [/CK/g, 'K'],
  [/KN/g, 'N'],
  [/WR/g, 'R'],
];

/**
 * A Soundex-style key (American Soundex as the US National Archives code it, after WorldDB's digraph rewrites
 * PH->F, CK->K, KN->N, WR->R): the first letter, then the digits of the following consonants, equal adjacent
 * digits (also across H and W) written once, vowels and Y separating them, cut or zero-padded to 4 characters.
 * "Phillip", "Filip" -> F410; "Robert", "Rupert" -> R163; "Tymczak" -> T522; "" for a word without letters A-Z.
 */
export function soundex(word: string): string {
  let w = word.toUpperCase().replace(/[^A-Z]/g, '');
  for (const [from, to] of SOUNDEX_DIGRAPHS) w = w.replace(from, to);
  if (w === '') return '';
  let out = w[0] as string;
  let prev = SOUNDEX_DIGIT[out] ?? '';
  for (let i = 1; i < w.length && out.length < 4; i++) {
    const c = w[i] as string;
    const d = SOUNDEX_DIGIT[c];
    if (d === undefined) {
      // A vowel (or Y) separates equal digits; H and W do not.
      if (c !== 'H' && c !== 'W') prev = '';
      continue;
    }
    if (d !== prev) out += d;
    prev = d;
  }
  return out.padEnd(4, '0');
}

/** Which phonetic code keys the resolver's phonetic tier: WorldDB's Soundex-style key, or Metaphone. */
export type PhoneticCode = 'soundex' | 'metaphone';

/** The phonetic key of a name: the key of each word by `code` (Metaphone unless given), space-joined. */
export function phoneticKey(name: string, code: PhoneticCode = 'metaphone'): string {
  return normalizeName(name)
    .split(' ')
    .filter((x) => x !== '')
    .map(code === 'soundex' ? soundex : metaphone)
    .join(' ');
}

/** A known entity: its canonical name and the aliases it also goes by. */
export interface Entity {
  readonly id: string;
  readonly name: string;
  readonly aliases?: readonly string[];
}

export type ResolverTier = 'exact' | 'fuzzy' | 'phonetic' | 'embedding';

export interface Resolution {
  readonly id: string;
  readonly tier: ResolverTier;
  /** 1 for exact and phonetic; the Jaro-Winkler similarity or the cosine for the other two. */
  readonly score: number;
}

export interface ResolverOptions {
  /** Jaro-Winkler similarity a fuzzy match needs (0.9: "Melanie"/"Melany" 0.910 pass, "Jon"/"Jan" 0.800 do not). */
  readonly fuzzyThreshold: number;
  /** Cosine an embedding match needs; the tier is skipped without `embed`. */
  readonly cosineThreshold: number;
  /** L2-normalised vector of a name (any Embedder's output row), for the last tier. */
  readonly embed?: (name: string) => Float32Array;
  /** The phonetic tier's key (default Metaphone, the key this resolver had first). */
  readonly phonetic?: PhoneticCode;
}

export const RESOLVER_DEFAULTS: ResolverOptions = { fuzzyThreshold: 0.9, cosineThreshold: 0.85 };

/**
 * Resolves a mention to a known entity by the first tier that accepts it: (1) exact: its normalised form equals
 * an entity's normalised name or alias; (2) fuzzy: the best Jaro-Winkler similarity against names and aliases,
 * if >= `fuzzyThreshold`; (3) phonetic: equal {@link phoneticKey}s (the first such entity in the list); (4)
 * embedding: the best cosine, if >= `cosineThreshold`. Ties within a tier go to the earlier entity. Undefined
 * when no tier accepts: a new entity.
 */
export function resolveEntity(mention: string, entities: readonly Entity[], opts: ResolverOptions = RESOLVER_DEFAULTS): Resolution | undefined {
  const m = normalizeName(mention);
  if (m === '') return undefined;
  const names = (e: Entity) => [e.name, ...(e.aliases ?? [])].map(normalizeName);
  for (const e of entities) if (names(e).includes(m)) return { id: e.id, tier: 'exact', score: 1 };
  let best: Resolution | undefined;
  for (const e of entities)
    for (const n of names(e)) {
      const s = jaroWinkler(m, n);
      if (s >= opts.fuzzyThreshold && (best === undefined || s > best.score)) best = { id: e.id, tier: 'fuzzy', score: s };
    }
  if (best) return best;
  const key = phoneticKey(m, opts.phonetic);
  for (const e of entities) if (names(e).some((n) => phoneticKey(n, opts.phonetic) === key)) return { id: e.id, tier: 'phonetic', score: 1 };
  if (!opts.embed) return undefined;
  const v = opts.embed(mention);
  for (const e of entities)
    for (const n of [e.name, ...(e.aliases ?? [])]) {
      const u = opts.embed(n);
      let dot = 0;
      for (let i = 0; i < v.length; i++) dot += (v[i] as number) * (u[i] as number);
      if (dot >= opts.cosineThreshold && (best === undefined || dot > best.score)) best = { id: e.id, tier: 'embedding', score: dot };
    }
  return best;
}
