import { afterEach, describe, expect, it } from 'vitest';
import type { Document } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { memoryLogger } from '../../harness/log.js';
import { startLoopback, type Loopback } from '../../harness/testing/loopback.js';
import { filesContaining } from '../../harness/testing/secret.js';
import { corpusGraph } from './build.js';
import { LINK_RELATION } from './graph.js';
import { parseTriples, TRIPLES_PROMPT } from './llm.js';
import { tempDir } from '../../harness/testing/temp.js';

const SECRET = 'sk-graph-llm-test-0123456789';

const completion = (content: string) => ({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('parseTriples', () => {
  it('reads triples by text number, strips a code fence, and names what is wrong otherwise', () => {
    expect(parseTriples('```json\n{"triples": [[2, "Maya", "moved to", "Lisbon"]]}\n```', 2)).toEqual([[], [['Maya', 'moved to', 'Lisbon']]]);
    expect(parseTriples('Sure! Here are the triples', 1)).toBe('the answer is not JSON');
    expect(parseTriples('{"facts": []}', 1)).toBe('the answer has no "triples" list');
    expect(parseTriples('{"triples": [[3, "a", "b", "c"]]}', 2)).toBe('a triple names text 3 of 2');
    expect(parseTriples('{"triples": [["1", "a", "b", "c"]]}', 2)).toMatch(/not \[textNumber/);
  });
});

describe('concepts: llm', () => {
  const corpus: Document[] = [
    { id: 'd1', text: 'Maya moved to Lisbon.' },
    { id: 'd2', text: 'Lisbon has yellow trams.' },
    { id: 'd3', text: 'Alex adopted Biscuit.' },
  ];

  it('extracts triples in batches through the openai SDK, canonicalises them, links subject and object, counts a malformed answer', async () => {
    server = await startLoopback((req) => {
      const body = req.json as { model: string; messages: { role: string; content: string }[] };
      expect(body.model).toBe('gpt-4o-mini');
      expect(body.messages[0]?.content).toBe(TRIPLES_PROMPT);
      const user = body.messages[1]?.content ?? '';
      // Batches of 2: "1. Maya moved ... 2. Lisbon has ..." then "1. Alex adopted Biscuit."
      if (user.includes('Maya'))
        return {
          body: completion(
            JSON.stringify({
              triples: [
                [1, 'Maya', 'moved to', 'Lisbon'],
                [2, 'Lisbon', 'has', 'yellow trams'],
              ],
            }),
          ),
        };
      return { body: completion('{"triples": [[1, "Alex", "adopted", "Biscuit"]]}') };
    });
    // The second batch's first answer is malformed: counted, its document gets no triples, nothing cached.
    server.enqueue(
      '/v1/chat/completions',
      {
        body: completion(
          JSON.stringify({
            triples: [
              [1, 'Maya', 'moved to', 'Lisbon'],
              [2, 'Lisbon', 'has', 'yellow trams'],
            ],
          }),
        ),
      },
      { body: completion('I cannot help with that.') },
    );
    const root = tempDir('harness-graph-llm');
    const log = memoryLogger();
    const ctx = { cache: new ContentStore(root, { log }), log, env: { OPENAI_API_KEY: SECRET } };
    const p = {
      concepts: 'llm' as const,
      fields: 'flat' as const,
      llm: { model: 'gpt-4o-mini', baseURL: `${server.url}/v1`, apiKeyEnv: 'OPENAI_API_KEY', batchSize: 2 },
    };
    const first = await corpusGraph(corpus, p, ctx);
    expect(server.requests.length).toBe(2);
    expect(server.requests[0]?.headers['authorization']).toBe(`Bearer ${SECRET}`);
    const g = first.graph;
    expect(g.concepts).toEqual(['maya', 'lisbon', 'yellow tram']);
    expect([...g.entity]).toEqual([1, 1, 1]);
    expect([...g.linkKind]).toEqual([LINK_RELATION, LINK_RELATION]);
    expect([...g.linkSrc].map((a, e) => `${g.concepts[a]} -> ${g.concepts[g.linkDst[e] as number]}`)).toEqual(['maya -> lisbon', 'lisbon -> yellow tram']);
    expect(g.buildStats).toEqual({ llmBatches: 2, llmCachedBatches: 0, llmParseFailures: 1, triples: 2 });
    expect(log.lines.join('\n')).toMatch(/triples of documents 3-3 not used: the answer is not JSON/);
    // The same graph again: from the graph cache, no request. A rebuild (other fields) reuses the answered batch.
    expect((await corpusGraph(corpus, p, ctx)).cached).toBe(true);
    expect(server.requests.length).toBe(2);
    const again = await corpusGraph(corpus, { ...p, fields: 'text' }, ctx);
    expect(server.requests.length).toBe(3);
    expect(again.graph.buildStats).toEqual({ llmBatches: 2, llmCachedBatches: 1, llmParseFailures: 0, triples: 3 });
    expect(again.graph.concepts).toEqual(['maya', 'lisbon', 'yellow tram', 'alex', 'biscuit']);
    // The key reached no file: not the cache, not a cache key.
    expect(filesContaining([root], SECRET)).toEqual([]);
  });

  it('names the missing key variable (exit 2) before sending anything', async () => {
    const log = memoryLogger();
    const ctx = { cache: new ContentStore(tempDir('harness-graph-llm'), { log }), log, env: {} };
    await expect(corpusGraph(corpus, { concepts: 'llm', fields: 'flat', llm: { model: 'm', apiKeyEnv: 'MY_KEY', batchSize: 8 } }, ctx)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('MY_KEY'),
    });
  });
});
