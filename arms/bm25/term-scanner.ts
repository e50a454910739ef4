import { simpleTokenizeAt, type Analyzer } from './analyzer.js';
import { ASCII_DIGIT, ASCII_LETTER, ASCII_WORD_CLASS, asciiRunIsToken, standardTokenizeAt } from './standard-tokenizer.js';
import type { TokenSink } from './standard-tokenizer.js';
import { FNV_OFFSET, FNV_PRIME, hashRange, TokenTable } from './token-table.js';

/**
 * Text to term ids for an indexer, with no allocation per token. Runs of ASCII letters and digits (most tokens
 * of English text) are recognised by a scan over char codes that hashes the run as it reads it; the run is
 * looked up in a table of surface forms keyed by its code units (`TokenTable`), whose value is the run's term
 * id. Only a surface form seen for the first time is cut out as a string and analysed (lower-case, possessive,
 * stop word, minimum length, Porter): once per distinct surface form. Wherever the ASCII scan cannot decide a
 * token by itself (a non-ASCII character, `_`, `e.g`, `3.5`, a token longer than 255 units) it hands the
 * position to the analyzer's own tokenizer (`standardTokenizeAt`, `simpleTokenizeAt`), which carries on from
 * the same place its own loop would be, so the tokens are the analyzer's, position for position
 * (term-scanner.test.ts compares them on NFCorpus-like and random Unicode text).
 */
export class TermScanner {
  /** Term -> id, ids numbered from 0 in order of first appearance. */
  readonly vocabulary = new Map<string, number>();
  /** After {@link scan}: the term ids of the text's indexed tokens, in order, in `ids[0 .. returned count)`. */
  ids = new Int32Array(1 << 14);
  private count = 0;
  private text = '';
  /**
   * The UTF-16 code units of the text being scanned, `units[0, text.length)`. The scan reads them from a typed
   * array rather than with `charCodeAt`: a document text is usually a rope (title + text) or a two-byte string,
   * and each `charCodeAt` in optimised code dispatches on the string's representation, while Buffer's native
   * `utf16le` write copies the whole text at memcpy speed (about 2% of the scan's time on NFCorpus).
   */
  private units = new Uint16Array(1 << 14);
  private unitBytes = bufferOver(this.units);
  /** Surface form -> term id, -1 for a token the analyzer filters out. */
  private readonly surfaces = new TokenTable();
  private readonly standard: boolean;

  constructor(private readonly analyzer: Analyzer) {
    this.standard = analyzer.tokenizer === 'standard';
  }

  /** Tokenizes and analyses `text`; returns how many term ids it left in {@link ids}. */
  scan(text: string): number {
    this.text = text;
    this.count = 0;
    scanning = this;
    const n = text.length;
    if (n > this.units.length) {
      this.units = new Uint16Array(Math.max(n, 2 * this.units.length));
      this.unitBytes = bufferOver(this.units);
      // A text has at most one token per code unit, so `push` never has to grow `ids` mid-scan: a growth
      // branch first taken on a long real document deoptimised the whole scan loop (ADR 0012, 2026-11-23 evening).
      this.ids = new Int32Array(this.units.length);
    }
    const u = this.units;
    copyUnits(text, u, this.unitBytes);
    const standard = this.standard;
    let i = 0;
    while (i < n) {
      const c = u[i]!;
      if (c < 128) {
        const cls = ASCII_WORD_CLASS[c]!;
        if (cls === ASCII_LETTER || cls === ASCII_DIGIT) {
          // Surface forms are keyed case-folded (see foldRange); `| 0x20` folds an ASCII letter and leaves a
          // digit (0x30-0x39) as it is.
          const e = c | 0x20;
          u[i] = e;
          let h = Math.imul(FNV_OFFSET ^ e, FNV_PRIME);
          let last = cls;
          let j = i + 1;
          for (; j < n; j++) {
            const d = u[j]!;
            if (d >= 128) break;
            const k = ASCII_WORD_CLASS[d]!;
            if (k !== ASCII_LETTER && k !== ASCII_DIGIT) break;
            const g = d | 0x20;
            u[j] = g;
            h = Math.imul(h ^ g, FNV_PRIME);
            last = k;
          }
          if (standard ? asciiRunIsToken(u, n, i, j, last) : j === n || u[j]! < 128) {
            this.push(this.lookup(i, j, h));
            i = j;
            continue;
          }
        } else if (!standard || cls !== ASCII_UNDERSCORE) {
          // Never the start of a token: other ASCII characters, and (simple) `_`.
          i++;
          continue;
        }
      }
      i = standard ? standardTokenizeAt(text, i, emitToScanner) : simpleTokenizeAt(text, i, emitToScanner);
    }
    return this.count;
  }

  /** A token found by the analyzer's own tokenizer. */
  take(start: number, end: number): void {
    foldRange(this.units, start, end);
    this.push(this.lookup(start, end, hashRange(this.units, start, end)));
  }

  private lookup(start: number, end: number, h: number): number {
    const id = this.surfaces.get(this.units, start, end, h);
    return id === undefined ? this.addSurface(start, end, h) : id;
  }

  private addSurface(start: number, end: number, h: number): number {
    const term = this.analyzer.analyze(this.text.slice(start, end));
    let id = -1;
    if (term !== null) {
      id = this.vocabulary.get(term) ?? -1;
      if (id < 0) {
        id = this.vocabulary.size;
        this.vocabulary.set(term, id);
      }
    }
    this.surfaces.set(this.units, start, end, id, h);
    return id;
  }

  private push(id: number): void {
    if (id >= 0) this.ids[this.count++] = id;
  }
}

const ASCII_UNDERSCORE = ASCII_WORD_CLASS[0x5f]!;

/**
 * Folds ASCII capitals in `units[start, end)` to lower case, in the scanner's copy of the text (the analyzer
 * still reads the original string). Surface forms are keyed on folded code units, so `The` and `the` share one
 * entry: the analyzer lower-cases before anything else, per code point, mapping A-Z to a-z as this does, so a
 * token and its folded form always analyse to the same term. On NFCorpus this is about 35,000 surface forms
 * down to 29,600: fewer analyses, and fewer cache lines for the table's probes.
 */
function foldRange(units: Uint16Array, start: number, end: number): void {
  for (let k = start; k < end; k++) {
    const c = units[k]!;
    if (c >= 0x41 && c <= 0x5a) units[k] = c | 0x20;
  }
}

/** Whether a Uint16Array stores its elements little-endian, as Buffer's `utf16le` encoding writes them. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function bufferOver(units: Uint16Array): Buffer {
  return Buffer.from(units.buffer, units.byteOffset, units.byteLength);
}

/** Copies the UTF-16 code units of `text` to `units[0, text.length)`, which must be long enough. */
function copyUnits(text: string, units: Uint16Array, bytes: Buffer): void {
  if (LITTLE_ENDIAN) bytes.write(text, 0, 'utf16le');
  else for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
}

/**
 * The scanner whose `scan` is running. One module-level sink instead of a closure per scanner, so that the
 * tokenizer's JIT code sees one call target whichever scanner (arm) calls it. Scans never nest.
 */
let scanning: TermScanner | undefined;
const emitToScanner: TokenSink = (start, end) => scanning!.take(start, end);
