import type { Document } from '../../evalset/types.js';

/** The v1 hybrid provider's chunking rules (docs/adr/0025-v1-chunking.md). */
export interface ChunkRules {
  /** Largest chunk body, in UTF-16 code units (1,600 in v1). */
  readonly size: number;
  /** Characters the next chunk repeats from the end of the previous one (320 in v1). */
  readonly overlap: number;
  /**
   * A boundary is accepted only at or past this share of `size` from the chunk start (0.5 in v1: "minimum
   * overlap threshold at 50% of chunk size"); earlier boundaries fall through to the next separator.
   */
  readonly minBoundary: number;
  /** Separators tried in order; after the last, a hard cut at `size`. */
  readonly separators: readonly string[];
}

export const V1_CHUNK_RULES: ChunkRules = { size: 1600, overlap: 320, minBoundary: 0.5, separators: ['. ', '\n', ' '] };

/** One chunk of a text: `[start, end)` in code units of the source. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * Splits `text` into overlapping spans. From `start`, a text no longer than `size` is the last span. Otherwise
 * the window `[start, start + size)` is cut after the last occurrence of the first separator (". ", then
 * newline, then space) that ends at or past `start + minBoundary * size` (a ". " keeps its period; a newline or
 * space is left out); with no such separator, a hard cut at `start + size`. The next span starts `overlap`
 * before the cut. Because every cut is at least `minBoundary * size` from its start and `overlap` is below
 * that, each step advances by at least `minBoundary * size - overlap` (480 with v1's numbers), so no two spans
 * overlap by more than `overlap` and no span is a sliver.
 */
export function chunkSpans(text: string, rules: ChunkRules = V1_CHUNK_RULES): Span[] {
  const { size, overlap } = rules;
  const floor = Math.ceil(rules.minBoundary * size);
  if (!(overlap < floor)) throw new RangeError(`overlap (${overlap}) must be below minBoundary * size (${floor}), or chunking would not advance`);
  const spans: Span[] = [];
  let start = 0;
  while (text.length - start > size) {
    const window = text.slice(start, start + size);
    let cut = start + size;
    for (const sep of rules.separators) {
      const at = window.lastIndexOf(sep);
      const end = sep === '. ' ? at + 1 : at;
      if (at >= 0 && end >= floor) {
        cut = start + end;
        break;
      }
    }
    spans.push({ start, end: cut });
    start = cut - overlap;
  }
  spans.push({ start, end: text.length });
  return spans;
}

/** "# Memories from YYYY-MM-DD" from a document's ISO timestamp; undefined when it has none. */
export function memoriesHeader(timestamp: string | undefined): string | undefined {
  const day = timestamp === undefined ? undefined : /^\d{4}-\d{2}-\d{2}/.exec(timestamp)?.[0];
  return day === undefined ? undefined : `# Memories from ${day}`;
}

/** A chunk as a document of the transformed corpus, with the id of the document it came from. */
export interface Chunk {
  readonly doc: Document;
  readonly source: string;
}

/**
 * The chunks of every document, each headed by {@link memoriesHeader} of its source's timestamp (on a line of
 * its own; the header is not counted in `size`). Chunk ids are `<source id>#<n>` (n from 0); title, metadata and
 * timestamp are the source's.
 */
export function chunkCorpus(documents: readonly Document[], rules: ChunkRules = V1_CHUNK_RULES): Chunk[] {
  const out: Chunk[] = [];
  for (const d of documents) {
    const header = memoriesHeader(d.timestamp);
    chunkSpans(d.text, rules).forEach((s, n) => {
      const body = d.text.slice(s.start, s.end);
      out.push({ source: d.id, doc: { ...d, id: `${d.id}#${n}`, text: header === undefined ? body : `${header}\n${body}` } });
    });
  }
  return out;
}
