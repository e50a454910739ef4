/**
 * The concept graph of a corpus: which concepts each document mentions (and how often), which concepts are
 * named entities, and concept-concept links (synonyms by embedding cosine, relations from extracted triples).
 * Built once per (corpus fingerprint, builder params), cached in binary form (typed arrays) through the content
 * store, and shaped into a PPR transition by `shapes.ts`.
 */
import type { Corpus, JsonValue } from '../../evalset/types.js';
import { corpusFingerprint } from '../../evalset/fingerprint.js';
import { cacheKey, type ContentStore } from '../../harness/cache/index.js';
import type { Logger } from '../../harness/log.js';
import type { TextConcepts } from './concepts.js';

/** Bump when the layout of the binary form changes. */
const FORMAT_VERSION = 1;

/** Link kinds between concepts. */
export const LINK_SYNONYM = 0;
export const LINK_RELATION = 1;

export interface ConceptGraph {
  readonly docIds: readonly string[];
  /** Canonical concept names, interned: concept id = index. */
  readonly concepts: readonly string[];
  /** 1 where the concept is a named entity. */
  readonly entity: Uint8Array;
  /** Document -> concept CSR with mention counts; concept ids ascending within a document. */
  readonly docPtr: Int32Array;
  readonly docConcept: Int32Array;
  readonly docMentions: Int32Array;
  /** Concept-concept links (each stored once, read both ways). */
  readonly linkSrc: Int32Array;
  readonly linkDst: Int32Array;
  readonly linkWeight: Float64Array;
  readonly linkKind: Uint8Array;
  /** Counters of the build that made it (LLM batches, parse failures), kept with the graph so a cached graph reports them. */
  readonly buildStats?: Readonly<Record<string, number>>;
}

/** The transpose of the document -> concept CSR: concept -> documents, with mention counts. */
export interface ConceptIndex {
  readonly ptr: Int32Array;
  readonly doc: Int32Array;
  readonly mentions: Int32Array;
  readonly byName: ReadonlyMap<string, number>;
}

export function conceptIndex(g: ConceptGraph): ConceptIndex {
  const c = g.concepts.length;
  const ptr = new Int32Array(c + 1);
  for (const k of g.docConcept) ptr[k + 1] = (ptr[k + 1] as number) + 1;
  for (let i = 0; i < c; i++) ptr[i + 1] = (ptr[i + 1] as number) + (ptr[i] as number);
  const fill = ptr.slice(0, c);
  const doc = new Int32Array(g.docConcept.length);
  const mentions = new Int32Array(g.docConcept.length);
  for (let d = 0; d < g.docIds.length; d++) {
    for (let i = g.docPtr[d] as number; i < (g.docPtr[d + 1] as number); i++) {
      const k = g.docConcept[i] as number;
      const pos = fill[k] as number;
      fill[k] = pos + 1;
      doc[pos] = d;
      mentions[pos] = g.docMentions[i] as number;
    }
  }
  return { ptr, doc, mentions, byName: new Map(g.concepts.map((name, i) => [name, i])) };
}

/** Embeds texts as unit-normalisable vectors, `n * dims` row-major (the dense arms' Embedder satisfies it). */
export type EmbedFn = (texts: readonly string[]) => Promise<{ readonly vectors: Float32Array; readonly dims: number }>;

export interface SynonymOptions {
  readonly embed: EmbedFn;
  /** Cosine above which two concepts are linked (HippoRAG: 0.8). */
  readonly threshold: number;
  /** At most this many synonyms per concept, the most similar (HippoRAG 2 keeps the top 2,047 neighbours). */
  readonly maxPerConcept: number;
}

/**
 * Synonym links: pairs of concepts whose embedding cosine exceeds `threshold` (HippoRAG's synonymy edges), each
 * pair once with its cosine as weight, at most `maxPerConcept` per concept by cosine. Exact all-pairs, O(c^2 d):
 * fine for the tens of thousands of concepts of a memory store; an ANN index would replace it beyond that.
 */
export async function synonymLinks(names: readonly string[], opts: SynonymOptions): Promise<{ src: Int32Array; dst: Int32Array; weight: Float64Array }> {
  const c = names.length;
  if (c === 0) return { src: new Int32Array(0), dst: new Int32Array(0), weight: new Float64Array(0) };
  const { vectors, dims } = await opts.embed(names);
  if (vectors.length !== c * dims) throw new RangeError(`synonymLinks: embedder returned ${vectors.length} values for ${c} texts of ${dims} dims`);
  const unit = new Float32Array(vectors.length);
  for (let i = 0; i < c; i++) {
    let norm = 0;
    for (let k = 0; k < dims; k++) norm += (vectors[i * dims + k] as number) ** 2;
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let k = 0; k < dims; k++) unit[i * dims + k] = (vectors[i * dims + k] as number) * inv;
  }
  const pairs: [number, number, number][] = [];
  for (let i = 0; i < c; i++) {
    const mine: [number, number, number][] = [];
    for (let j = i + 1; j < c; j++) {
      let dot = 0;
      for (let k = 0; k < dims; k++) dot += (unit[i * dims + k] as number) * (unit[j * dims + k] as number);
      if (dot > opts.threshold) mine.push([i, j, dot]);
    }
    mine.sort((a, b) => b[2] - a[2]);
    pairs.push(...mine.slice(0, opts.maxPerConcept));
  }
  return {
    src: Int32Array.from(pairs, (p) => p[0]),
    dst: Int32Array.from(pairs, (p) => p[1]),
    weight: Float64Array.from(pairs, (p) => p[2]),
  };
}

/** Concept mentions per document (from any extractor) as a graph without links. */
export function graphOf(docIds: readonly string[], perDoc: readonly TextConcepts[]): ConceptGraph {
  const ids = new Map<string, number>();
  const entitySet = new Set<string>();
  for (const tc of perDoc) {
    for (const name of tc.concepts) if (!ids.has(name)) ids.set(name, ids.size);
    for (const name of tc.entities) {
      entitySet.add(name);
      if (!ids.has(name)) ids.set(name, ids.size);
    }
  }
  const concepts = [...ids.keys()];
  const entity = Uint8Array.from(concepts, (n) => (entitySet.has(n) ? 1 : 0));
  const docPtr = new Int32Array(docIds.length + 1);
  const conceptList: number[] = [];
  const mentionList: number[] = [];
  perDoc.forEach((tc, d) => {
    const counts = new Map<number, number>();
    for (const name of tc.concepts) counts.set(ids.get(name) as number, (counts.get(ids.get(name) as number) ?? 0) + 1);
    // An entity is also a concept of its document even when no noun run equals it ("seattle humane" inside
    // "seattle humane shelter"): one mention per occurrence.
    for (const name of tc.entities) if (!tc.concepts.includes(name)) counts.set(ids.get(name) as number, (counts.get(ids.get(name) as number) ?? 0) + 1);
    for (const [k, n] of [...counts].sort((a, b) => a[0] - b[0])) {
      conceptList.push(k);
      mentionList.push(n);
    }
    docPtr[d + 1] = conceptList.length;
  });
  const none = { linkSrc: new Int32Array(0), linkDst: new Int32Array(0), linkWeight: new Float64Array(0), linkKind: new Uint8Array(0) };
  return { docIds, concepts, entity, docPtr, docConcept: Int32Array.from(conceptList), docMentions: Int32Array.from(mentionList), ...none };
}

/** The graph with extra concept-concept links appended. */
export function withLinks(g: ConceptGraph, kind: number, links: { src: Int32Array; dst: Int32Array; weight: Float64Array }): ConceptGraph {
  const cat = <T extends Int32Array | Float64Array | Uint8Array>(a: T, b: T, make: (n: number) => T): T => {
    const out = make(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  };
  return {
    ...g,
    linkSrc: cat(g.linkSrc, links.src, (n) => new Int32Array(n)),
    linkDst: cat(g.linkDst, links.dst, (n) => new Int32Array(n)),
    linkWeight: cat(g.linkWeight, links.weight, (n) => new Float64Array(n)),
    linkKind: cat(g.linkKind, new Uint8Array(links.src.length).fill(kind), (n) => new Uint8Array(n)),
  };
}

const ARRAYS = ['entity', 'docPtr', 'docConcept', 'docMentions', 'linkSrc', 'linkDst', 'linkWeight', 'linkKind'] as const;

/**
 * The binary form: a 4-byte little-endian header length, a JSON header (names, array lengths), then each typed
 * array at an 8-byte aligned offset, so loading is a copy per array and no parsing of numbers.
 */
export function encodeGraph(g: ConceptGraph): Uint8Array {
  const header = Buffer.from(
    JSON.stringify({ v: FORMAT_VERSION, docIds: g.docIds, concepts: g.concepts, lengths: ARRAYS.map((a) => g[a].length), buildStats: g.buildStats ?? {} }),
  );
  const align = (n: number) => Math.ceil(n / 8) * 8;
  let size = align(4 + header.length);
  for (const a of ARRAYS) size = align(size + g[a].byteLength);
  const out = new Uint8Array(size);
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let at = align(4 + header.length);
  for (const a of ARRAYS) {
    const arr = g[a];
    out.set(new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength), at);
    at = align(at + arr.byteLength);
  }
  return out;
}

/** Inverse of {@link encodeGraph}; undefined (a cache miss) when the bytes are not a graph of this format. */
export function decodeGraph(bytes: Uint8Array): ConceptGraph | undefined {
  try {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const hlen = view.getUint32(0, true);
    const header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 4, hlen).toString('utf8')) as {
      v: number;
      docIds: string[];
      concepts: string[];
      lengths: number[];
      buildStats?: Record<string, number>;
    };
    if (header.v !== FORMAT_VERSION || header.lengths.length !== ARRAYS.length) return undefined;
    const align = (n: number) => Math.ceil(n / 8) * 8;
    let at = align(4 + hlen);
    const arrays: Record<string, Int32Array | Float64Array | Uint8Array> = {};
    ARRAYS.forEach((name, i) => {
      const len = header.lengths[i] as number;
      const ctor = name === 'entity' || name === 'linkKind' ? Uint8Array : name === 'linkWeight' ? Float64Array : Int32Array;
      const byteLength = len * ctor.BYTES_PER_ELEMENT;
      if (at + byteLength > bytes.byteLength) throw new RangeError('truncated');
      // A copy: the cache's buffer may not be aligned for the element size (and a Buffer's slice is a view).
      const copy = new Uint8Array(byteLength);
      copy.set(bytes.subarray(at, at + byteLength));
      arrays[name] = new ctor(copy.buffer);
      at = align(at + byteLength);
    });
    const g = { docIds: header.docIds, concepts: header.concepts, ...arrays, buildStats: header.buildStats ?? {} } as unknown as ConceptGraph;
    if (g.docPtr.length !== g.docIds.length + 1 || g.entity.length !== g.concepts.length) return undefined;
    return g;
  } catch {
    return undefined;
  }
}

/**
 * The graph of `corpus` under `builder` (everything that changes it: extractor and model, synonym settings,
 * the embedding arm's fingerprint, the LLM prompt version), from the cache or built and stored atomically.
 */
export async function cachedGraph(
  cache: ContentStore,
  log: Logger,
  corpus: Corpus,
  builder: JsonValue,
  build: () => Promise<ConceptGraph>,
): Promise<{ graph: ConceptGraph; cached: boolean }> {
  const key = cacheKey('index', FORMAT_VERSION, { graph: builder, corpus: corpusFingerprint(corpus) });
  const hit = await cache.get('index', key);
  if (hit !== undefined) {
    const g = decodeGraph(hit);
    if (g !== undefined && g.docIds.length === corpus.length) return { graph: g, cached: true };
    log.warn(`graph cache entry ${key.slice(0, 12)} does not decode as a concept graph; rebuilding it`);
  }
  const graph = await build();
  await cache.put('index', key, encodeGraph(graph));
  return { graph, cached: false };
}
