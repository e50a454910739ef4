import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Document } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { memoryLogger } from '../../harness/log.js';
import { z } from 'zod';
import { builderParams, corpusGraph, type SynonymParams } from './build.js';
import { conceptsOfTokens, lexicalExtractor, matchConcepts } from './concepts.js';
import { cachedGraph, conceptIndex, decodeGraph, encodeGraph, graphOf, LINK_SYNONYM, synonymLinks, withLinks } from './graph.js';
import { addConceptSeeds, inputSeedWeights, shapeGraph } from './shapes.js';
import { tempDir } from '../../harness/testing/temp.js';

const tok = (canon: string, pos: string, stop = false) => ({ canon, pos, stop });

describe('concepts', () => {
  it('noun runs lose leading adjectives and numbers, keep their head, and yield PROPN runs as entities', () => {
    // "Easy 7 km recovery run around the Green Lake loop"
    const got = conceptsOfTokens([
      tok('easy', 'ADJ'),
      tok('7', 'NUM'),
      tok('km', 'NOUN'),
      tok('recovery', 'NOUN'),
      tok('run', 'NOUN'),
      tok('around', 'ADP', true),
      tok('the', 'DET', true),
      tok('green', 'PROPN'),
      tok('lake', 'PROPN'),
      tok('loop', 'NOUN'),
      tok('fresh', 'ADJ'),
    ]);
    expect(got.concepts).toEqual(['km recovery run', 'run', 'green lake loop', 'loop']);
    expect(got.entities).toEqual(['green lake']);
  });

  it('a lone adjective, a contraction or a stop word is no concept', () => {
    expect(conceptsOfTokens([tok('good', 'ADJ'), tok("i'm", 'PROPN'), tok('it', 'NOUN', true)]).concepts).toEqual([]);
  });

  it('wink-nlp: lemmas and plural folding make a document and a query meet on the same names', () => {
    const x = lexicalExtractor();
    const doc = x.extract('Alex adopted a dog named Biscuit, a beagle mix, from the Seattle Humane shelter in July 2023.');
    expect(doc.concepts).toEqual(expect.arrayContaining(['alex', 'dog', 'biscuit', 'beagle mix', 'mix']));
    expect(doc.entities).toEqual(expect.arrayContaining(['alex', 'biscuit']));
    expect(x.extract('She walked the dogs to the parks.').concepts).toEqual(['dog', 'park']);
    expect(x.extract('The dog met other dogs.').concepts).toEqual(['dog', 'dog']);
    const dict = new Map([...new Set(doc.concepts)].map((c, i) => [c, i]));
    const hit = matchConcepts(x.tokens("What is Alex's dog named?"), dict).map((i) => [...dict.keys()][i]);
    expect(hit).toEqual(['alex', 'dog']);
  });

  it('matches whole token runs only: "tom" never matches "tomato"; overlapping names both match', () => {
    const dict = new Map([
      ['tom', 0],
      ['beagle mix', 1],
      ['mix', 2],
    ]);
    expect(matchConcepts(['tomato', 'soup'], dict)).toEqual([]);
    expect(matchConcepts(['tom', 'like', 'tomato'], dict)).toEqual([0]);
    expect(matchConcepts(['a', 'beagle', 'mix'], dict)).toEqual([1, 2]);
  });
});

describe('the concept graph', () => {
  const g = graphOf(
    ['d1', 'd2', 'd3'],
    [
      { concepts: ['dog', 'biscuit', 'dog'], entities: ['biscuit'] },
      { concepts: ['dog', 'park'], entities: [] },
      { concepts: ['lisbon'], entities: ['lisbon', 'maya'] },
    ],
  );

  it('interns concepts, counts mentions per document, and adds entities that no noun run equals', () => {
    expect(g.concepts).toEqual(['dog', 'biscuit', 'park', 'lisbon', 'maya']);
    expect([...g.entity]).toEqual([0, 1, 0, 1, 1]);
    expect([...g.docPtr]).toEqual([0, 2, 4, 6]);
    expect([...g.docConcept]).toEqual([0, 1, 0, 2, 3, 4]);
    expect([...g.docMentions]).toEqual([2, 1, 1, 1, 1, 1]);
    const idx = conceptIndex(g);
    expect([...idx.doc.subarray(idx.ptr[0], idx.ptr[1])]).toEqual([0, 1]);
  });

  it('round-trips its binary form; a truncated one decodes to nothing', () => {
    const linked = withLinks(g, LINK_SYNONYM, { src: Int32Array.of(0), dst: Int32Array.of(2), weight: Float64Array.of(0.9) });
    const back = decodeGraph(encodeGraph(linked));
    expect(back).toEqual({ ...linked, buildStats: {} });
    const stamped = { ...linked, buildStats: { llmParseFailures: 2 } };
    expect(decodeGraph(encodeGraph(stamped))).toEqual(stamped);
    expect(decodeGraph(encodeGraph(linked).subarray(0, 60))).toBeUndefined();
  });

  it('is cached by corpus and builder: a second build reads the cache; a damaged entry is rebuilt', async () => {
    const root = tempDir('harness-graph');
    const log = memoryLogger();
    const cache = new ContentStore(root, { log });
    const corpus: Document[] = [
      { id: 'a', text: 'Maya moved to Lisbon.' },
      { id: 'b', text: 'Lisbon has trams.' },
    ];
    let builds = 0;
    const build = async () => {
      builds++;
      return graphOf(
        ['a', 'b'],
        [
          { concepts: ['maya', 'lisbon'], entities: ['maya', 'lisbon'] },
          { concepts: ['lisbon', 'tram'], entities: ['lisbon'] },
        ],
      );
    };
    expect((await cachedGraph(cache, log, corpus, { b: 1 }, build)).cached).toBe(false);
    const again = await cachedGraph(cache, log, corpus, { b: 1 }, build);
    expect(again.cached).toBe(true);
    expect(again.graph.concepts).toEqual(['maya', 'lisbon', 'tram']);
    expect(builds).toBe(1);
    expect((await cachedGraph(cache, log, corpus, { b: 2 }, build)).cached).toBe(false);
    // Damage the payload of every entry: the envelope check evicts it and the graph is rebuilt.
    const dir = join(root, 'index');
    for (const sub of readdirSync(dir)) for (const f of readdirSync(join(dir, sub))) writeFileSync(join(dir, sub, f), 'garbage');
    expect((await cachedGraph(cache, log, corpus, { b: 1 }, build)).cached).toBe(false);
    expect(builds).toBe(3);
  });

  it('corpusGraph extracts once per corpus and builder params', async () => {
    const cache = new ContentStore(tempDir('harness-graph'), { log: memoryLogger() });
    const corpus: Document[] = [{ id: 'a', text: 'Maya moved to Lisbon with her husband Tomás.' }];
    const ctx = { cache, log: memoryLogger(), env: {} };
    const first = await corpusGraph(corpus, { concepts: 'lexical', fields: 'flat' }, ctx);
    const second = await corpusGraph(corpus, { concepts: 'lexical', fields: 'flat' }, ctx);
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.graph.concepts).toEqual(first.graph.concepts);
    expect(first.graph.concepts).toEqual(expect.arrayContaining(['maya', 'lisbon', 'husband tomás', 'tomás']));
  });
});

describe('synonym links', () => {
  it('link concepts whose cosine exceeds the threshold, weighted by it, at most maxPerConcept each', async () => {
    // Hand-made 2-d embedding: "dog" and "puppy" 0.8 + small apart, "car" orthogonal.
    const angle = Math.acos(0.9);
    const vectors = Float32Array.of(1, 0, Math.cos(angle), Math.sin(angle), 0, 3, 2, 0);
    const embed = async (texts: readonly string[]) => {
      expect(texts).toEqual(['dog', 'puppy', 'car', 'hound']);
      return { vectors, dims: 2 };
    };
    const links = await synonymLinks(['dog', 'puppy', 'car', 'hound'], { embed, threshold: 0.8, maxPerConcept: 10 });
    expect([...links.src]).toEqual([0, 0, 1]);
    expect([...links.dst]).toEqual([3, 1, 3]);
    expect(links.weight[0]).toBeCloseTo(1, 6);
    expect(links.weight[1]).toBeCloseTo(0.9, 6);
    const capped = await synonymLinks(['dog', 'puppy', 'car', 'hound'], { embed, threshold: 0.8, maxPerConcept: 1 });
    expect([...capped.dst]).toEqual([3, 3]);
  });
});

describe('synonyms param', () => {
  const schema = z.object(builderParams).strict();

  it("checks the embedder's own params by its schema and fills HippoRAG's threshold", () => {
    const ok = schema.parse({ synonyms: { embedder: 'use-lite', params: { maxWords: 8 } } });
    expect(ok.synonyms).toMatchObject({ embedder: 'use-lite', threshold: 0.8, maxPerConcept: 10, params: { maxWords: 8, batchSize: 32 } });
    const bad = schema.safeParse({ synonyms: { embedder: 'use-lite', params: { maxWords: 0, nope: 1 } } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path.join('.'))).toEqual(expect.arrayContaining(['synonyms.params.maxWords']));
  });

  it('adds synonym links to the built graph, keyed apart from the graph without them', async () => {
    const cache = new ContentStore(tempDir('harness-graph'), { log: memoryLogger() });
    const ctx = { cache, log: memoryLogger(), env: {} };
    const corpus: Document[] = [
      { id: 'a', text: 'The puppy sleeps.' },
      { id: 'b', text: 'A dog barks.' },
    ];
    const seen: SynonymParams[] = [];
    // Hand-made embedding: "puppy" and "dog" on one axis, everything else on its own.
    const loader = async (s: SynonymParams) => {
      seen.push(s);
      return async (texts: readonly string[]) => {
        const vectors = new Float32Array(texts.length * texts.length);
        texts.forEach((t, i) => {
          vectors[i * texts.length + (t === 'puppy' || t === 'dog' ? 0 : i)] = 1;
        });
        return { vectors, dims: texts.length };
      };
    };
    const synonyms = { embedder: 'use-lite' as const, params: {}, threshold: 0.8, maxPerConcept: 10 };
    const plain = await corpusGraph(corpus, { concepts: 'lexical', fields: 'flat' }, ctx, loader);
    expect(plain.graph.linkSrc.length).toBe(0);
    const linked = await corpusGraph(corpus, { concepts: 'lexical', fields: 'flat', synonyms }, ctx, loader);
    expect(linked.cached).toBe(false);
    expect(seen).toEqual([synonyms]);
    const names = [...linked.graph.linkSrc].map((a, e) => [linked.graph.concepts[a], linked.graph.concepts[linked.graph.linkDst[e] as number]]);
    expect(names).toEqual([['puppy', 'dog']]);
    expect(linked.graph.linkWeight[0]).toBeCloseTo(1, 6);
  });
});

describe('shapes and seeds', () => {
  const g = graphOf(
    ['d1', 'd2', 'd3'],
    [
      { concepts: ['dog', 'park'], entities: [] },
      { concepts: ['dog', 'vet'], entities: [] },
      { concepts: ['dog', 'vet', 'park'], entities: [] },
    ],
  );
  const idx = conceptIndex(g);

  it('passage: documents then concepts, one edge per mention, concept seeds weighted 1 / df', () => {
    const s = shapeGraph(g, idx, 'passage', 50);
    expect(s.nodes).toBe(3 + 3);
    expect(s.edges).toBe(7);
    const seed = new Float64Array(s.nodes);
    // vet is in 2 documents, dog in 3.
    expect(addConceptSeeds(seed, s, idx, [2, 0])).toBeCloseTo(1 / 2 + 1 / 3, 15);
    expect([...seed]).toEqual([0, 0, 0, 1 / 3, 0, 1 / 2]);
  });

  it('memory: documents linked by Σ 1/df over shared concepts; seeds spread onto the documents', () => {
    const s = shapeGraph(g, idx, 'memory', 50);
    expect(s.nodes).toBe(3);
    expect(s.edges).toBe(3);
    // d1-d3 share dog (df 3) and park (df 2): the transition from d3 splits by weight 1/3 + 1/2 vs 1/3 + 1/2.
    const { indptr, indices, values } = s.transition.matrix;
    const p = (to: number, from: number) => {
      for (let i = indptr[to] as number; i < (indptr[to + 1] as number); i++) if (indices[i] === from) return values[i] as number;
      return 0;
    };
    // out(d1) = (1/3 + 1/2) [to d3] + 1/3 [to d2, dog]
    expect(p(2, 0)).toBeCloseTo((1 / 3 + 1 / 2) / (1 / 3 + 1 / 2 + 1 / 3), 15);
    const seed = new Float64Array(3);
    addConceptSeeds(seed, s, idx, [2]);
    expect([...seed]).toEqual([0, 1 / 2, 1 / 2]);
    // maxDf 2 drops dog: d1-d2 no longer linked.
    expect(shapeGraph(g, idx, 'memory', 2).edges).toBe(2);
  });

  it('input seeds: scores mapped to [0, 1] against the theoretical minimum, else the least score read', () => {
    expect(inputSeedWeights([10, 5, 0], 0)).toEqual([1, 0.5, 0]);
    expect(inputSeedWeights([0.5, 0, -0.5], -1)).toEqual([1, 2 / 3, 1 / 3]);
    expect(inputSeedWeights([4, 3, 2], undefined)).toEqual([1, 0.5, 0]);
    expect(inputSeedWeights([2, 2], undefined)).toEqual([1, 1]);
  });
});
