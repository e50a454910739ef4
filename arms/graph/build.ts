/**
 * Building (or loading) the concept graph of one corpus for a graph arm or node: the extractor, the cache key,
 * progress on stderr. Every graph arm and the `graph-ppr` node share it, so one corpus is extracted once per
 * builder params whichever arm asks first.
 */
import { z } from 'zod';
import type { Corpus, Document, JsonValue } from '../../evalset/types.js';
import type { ContentStore } from '../../harness/cache/index.js';
import type { Logger } from '../../harness/log.js';
import { LEXICAL_VERSION, lexicalExtractor, type ConceptExtractor, type TextConcepts } from './concepts.js';
import { cachedGraph, graphOf, type ConceptGraph } from './graph.js';

/** Params that decide the concept graph; shared by every graph arm kind. */
export const builderParams = {
  /** `lexical`: noun phrases and named entities (wink-nlp). */
  concepts: z.enum(['lexical']).default('lexical'),
  /** `flat`: title and text; `text`: the text only. */
  fields: z.enum(['flat', 'text']).default('flat'),
};

export interface BuilderParams {
  readonly concepts: 'lexical';
  readonly fields: 'flat' | 'text';
}

export function documentText(doc: Document, fields: BuilderParams['fields']): string {
  return fields === 'flat' && doc.title !== undefined && doc.title !== '' ? `${doc.title}\n${doc.text}` : doc.text;
}

/** Everything that makes two builds of one corpus give the same graph: the graph cache key's builder part. */
export function builderFingerprint(p: BuilderParams, extractor: ConceptExtractor): JsonValue {
  return { concepts: p.concepts, v: LEXICAL_VERSION, model: extractor.model, fields: p.fields };
}

export function builderIdentity(p: BuilderParams): JsonValue {
  return { concepts: p.concepts, v: LEXICAL_VERSION, fields: p.fields };
}

/** The concept graph of `corpus`, from the cache or extracted (with progress) and stored. */
export async function corpusGraph(
  corpus: Corpus,
  p: BuilderParams,
  ctx: { readonly cache: ContentStore; readonly log: Logger },
): Promise<{ graph: ConceptGraph; extractor: ConceptExtractor; cached: boolean }> {
  const extractor = lexicalExtractor();
  const { graph, cached } = await cachedGraph(ctx.cache, ctx.log, corpus, builderFingerprint(p, extractor), async () => {
    const progress = ctx.log.progress('graph: extracting concepts', corpus.length);
    const perDoc: TextConcepts[] = [];
    for (const d of corpus) {
      perDoc.push(extractor.extract(documentText(d, p.fields)));
      progress.tick(1);
    }
    progress.done();
    return graphOf(
      corpus.map((d) => d.id),
      perDoc,
    );
  });
  return { graph, extractor, cached };
}

/** Index statistics every graph arm reports (additive over scopes: the manifest sums them). */
export function graphStats(graph: ConceptGraph): Record<string, number> {
  return {
    documents: graph.docIds.length,
    concepts: graph.concepts.length,
    entities: graph.entity.reduce((a, b) => a + b, 0),
    conceptMentions: graph.docConcept.length,
    links: graph.linkSrc.length,
  };
}
