/**
 * Building (or loading) the concept graph of one corpus for a graph arm or node: the extractor, the cache key,
 * progress on stderr. Every graph arm and the `graph-ppr` node share it, so one corpus is extracted once per
 * builder params whichever arm asks first.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { Corpus, Document, JsonValue } from '../../evalset/types.js';
import type { ContentStore } from '../../harness/cache/index.js';
import type { Logger } from '../../harness/log.js';
import { loadOnnxEmbedder, onnxEmbedArm } from '../dense/onnx.js';
import { EmbeddingStore } from '../dense/store.js';
import { loadUseLite, useLiteArm } from '../dense/use-lite.js';
import { extractTriples, llmIdentity, llmParamsSchema, type LlmParams } from './llm.js';
import { LEXICAL_VERSION, lexicalExtractor, type ConceptExtractor, type TextConcepts } from './concepts.js';
import { cachedGraph, type EmbedFn, graphOf, LINK_RELATION, LINK_SYNONYM, synonymLinks, withLinks, type ConceptGraph } from './graph.js';

/** The embedding models a graph can take synonym links from: the local dense arm kinds, by their params. */
const embedders = { 'use-lite': useLiteArm, 'onnx-embed': onnxEmbedArm } as const;
type EmbedderKind = keyof typeof embedders;

/**
 * Synonym links (HippoRAG's synonymy edges): concepts whose embedding cosine exceeds `threshold`, with the
 * embedder of a local dense arm kind configured by `params` (that kind's own params, checked by its schema).
 */
const synonymsSchema = z
  .object({
    embedder: z.enum(['use-lite', 'onnx-embed']),
    params: z.record(z.string(), z.unknown()).default({}),
    threshold: z.number().min(-1).max(1).default(0.8),
    maxPerConcept: z.number().int().positive().default(10),
  })
  .strict()
  .superRefine((s, zctx) => {
    const r = embedders[s.embedder].params.safeParse(s.params);
    if (!r.success)
      for (const issue of r.error.issues)
        zctx.addIssue({ code: 'custom', path: ['params', ...issue.path.map(String)], message: `${s.embedder}: ${issue.message}` });
  })
  .transform((s) => ({ ...s, params: embedders[s.embedder].params.parse(s.params) as Record<string, JsonValue> }));

/** Params that decide the concept graph; shared by every graph arm kind. */
export const builderParams = {
  /**
   * `lexical`: noun phrases and named entities (wink-nlp). `llm`: subjects and objects of the triples an LLM
   * extracts (`llm` params), linked by their relations; sends the documents' text to that LLM.
   */
  concepts: z.enum(['lexical', 'llm']).default('lexical'),
  /** The LLM of `concepts: llm` (defaults apply when absent); ignored for `lexical`. */
  llm: llmParamsSchema.optional(),
  /** `flat`: title and text; `text`: the text only. */
  fields: z.enum(['flat', 'text']).default('flat'),
  /** Synonym links between concepts by embedding cosine; absent: none. */
  synonyms: synonymsSchema.optional(),
};

export interface SynonymParams {
  readonly embedder: EmbedderKind;
  readonly params: Record<string, JsonValue>;
  readonly threshold: number;
  readonly maxPerConcept: number;
}

export interface BuilderParams {
  readonly concepts: 'lexical' | 'llm';
  readonly llm?: LlmParams | undefined;
  readonly fields: 'flat' | 'text';
  readonly synonyms?: SynonymParams | undefined;
}

export interface GraphContext {
  readonly cache: ContentStore;
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
}

/** Loads the embedder of a synonyms param; its vectors go through the dense arms' embedding store (cached). */
export type EmbedLoader = (s: SynonymParams, ctx: GraphContext) => Promise<EmbedFn>;

export const loadSynonymEmbedder: EmbedLoader = async (s, ctx) => {
  const embedder =
    s.embedder === 'use-lite'
      ? await loadUseLite(useLiteArm.params.parse(s.params))
      : await loadOnnxEmbedder(onnxEmbedArm.params.parse(s.params), { modelDir: join(ctx.cache.root, 'models'), env: ctx.env, log: ctx.log });
  const store = new EmbeddingStore(ctx.cache, embedder, ctx.log);
  return async (texts) => {
    const m = await store.corpus(
      texts.map((t) => ({ id: t, text: t })),
      'document',
      `graph: embedding ${texts.length} concepts`,
    );
    return { vectors: m.vectors, dims: m.dims };
  };
};

export function documentText(doc: Document, fields: BuilderParams['fields']): string {
  return fields === 'flat' && doc.title !== undefined && doc.title !== '' ? `${doc.title}\n${doc.text}` : doc.text;
}

/** Everything that makes two builds of one corpus give the same graph: the graph cache key's builder part. */
export function builderFingerprint(p: BuilderParams, extractor: ConceptExtractor): JsonValue {
  return { ...(builderIdentity(p) as Record<string, JsonValue>), model: extractor.model };
}

/** The graph's identity in arm fingerprints (an LLM's endpoint and key never enter it). */
export function builderIdentity(p: BuilderParams): JsonValue {
  return {
    concepts: p.concepts,
    v: LEXICAL_VERSION,
    fields: p.fields,
    synonyms: (p.synonyms ?? null) as unknown as JsonValue,
    // Only an LLM graph names its LLM, so lexical graphs keep the identity they had before `concepts: llm`.
    ...(p.concepts === 'llm' ? { llm: llmIdentity(llmOf(p)) } : {}),
  };
}

export function llmOf(p: BuilderParams): LlmParams {
  return p.llm ?? llmParamsSchema.parse({});
}

/** Whether building the graph sends document text off this machine (to the LLM). */
export function graphSendsText(p: BuilderParams): boolean {
  return p.concepts === 'llm';
}

/** Concepts of each document from LLM triples (subject and object, canonicalised) and their relation links. */
async function llmGraph(corpus: Corpus, p: BuilderParams, extractor: ConceptExtractor, ctx: GraphContext): Promise<ConceptGraph> {
  const { triples, stats } = await extractTriples(
    corpus.map((d) => documentText(d, p.fields)),
    llmOf(p),
    ctx,
  );
  const perDoc: TextConcepts[] = [];
  const pairs: [string, string][] = [];
  for (const list of triples) {
    const names: string[] = [];
    for (const [s, , o] of list) {
      const a = extractor.canonical(s);
      const b = extractor.canonical(o);
      if (a !== '') names.push(a);
      if (b !== '') names.push(b);
      if (a !== '' && b !== '' && a !== b) pairs.push([a, b]);
    }
    perDoc.push({ concepts: names, entities: names });
  }
  const graph = graphOf(
    corpus.map((d) => d.id),
    perDoc,
  );
  const id = new Map(graph.concepts.map((n, i) => [n, i]));
  const linked = withLinks(graph, LINK_RELATION, {
    src: Int32Array.from(pairs, ([a]) => id.get(a) as number),
    dst: Int32Array.from(pairs, ([, b]) => id.get(b) as number),
    weight: new Float64Array(pairs.length).fill(1),
  });
  return {
    ...linked,
    buildStats: { llmBatches: stats.batches, llmCachedBatches: stats.cachedBatches, llmParseFailures: stats.parseFailures, triples: pairs.length },
  };
}

/** The concept graph of `corpus`, from the cache or extracted (with progress) and stored. */
export async function corpusGraph(
  corpus: Corpus,
  p: BuilderParams,
  ctx: GraphContext,
  loadEmbed: EmbedLoader = loadSynonymEmbedder,
): Promise<{ graph: ConceptGraph; extractor: ConceptExtractor; cached: boolean }> {
  const extractor = lexicalExtractor();
  const { graph, cached } = await cachedGraph(ctx.cache, ctx.log, corpus, builderFingerprint(p, extractor), async () => {
    if (p.concepts === 'llm') return withSynonyms(await llmGraph(corpus, p, extractor, ctx), p, ctx, loadEmbed);
    const progress = ctx.log.progress('graph: extracting concepts', corpus.length);
    const perDoc: TextConcepts[] = [];
    for (const d of corpus) {
      perDoc.push(extractor.extract(documentText(d, p.fields)));
      progress.tick(1);
    }
    progress.done();
    return withSynonyms(
      graphOf(
        corpus.map((d) => d.id),
        perDoc,
      ),
      p,
      ctx,
      loadEmbed,
    );
  });
  return { graph, extractor, cached };
}

async function withSynonyms(graph: ConceptGraph, p: BuilderParams, ctx: GraphContext, loadEmbed: EmbedLoader): Promise<ConceptGraph> {
  if (p.synonyms === undefined) return graph;
  const links = await synonymLinks(graph.concepts, { ...p.synonyms, embed: await loadEmbed(p.synonyms, ctx) });
  return withLinks(graph, LINK_SYNONYM, links);
}

/** Index statistics every graph arm reports (additive over scopes: the manifest sums them). */
export function graphStats(graph: ConceptGraph): Record<string, number> {
  return {
    documents: graph.docIds.length,
    concepts: graph.concepts.length,
    entities: graph.entity.reduce((a, b) => a + b, 0),
    conceptMentions: graph.docConcept.length,
    links: graph.linkSrc.length,
    ...graph.buildStats,
  };
}
