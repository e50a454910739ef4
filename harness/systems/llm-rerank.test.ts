import { afterEach, describe, expect, it } from 'vitest';
import type { Document, Query } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import { memoryLogger } from '../log.js';
import { classifyQuery, parseRerankReply, QUERY_TYPES, rerankPrompt } from '../recipes/llm-rerank.js';
import { type Loopback, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import { llmRerankNode } from './llm-rerank.js';
import type { BoundNode, ScopeData, ScopeRun } from './types.js';
import { tempDir } from '../testing/temp.js';

const KEY = 'sk-loopback-rerank-secret-0123456789';
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function context() {
  const root = tempDir('llm-rerank');
  const log = memoryLogger();
  return { root, log, ctx: { cache: new ContentStore(root), log, workDir: root, env: { OPENAI_API_KEY: KEY } } };
}

const bound = (params: unknown): BoundNode => {
  const r = llmRerankNode.bind({ kind: 'llm-rerank', params, inputs: [], topK: 100 });
  if ('problems' in r) throw new Error(r.problems.join('\n'));
  return r.node;
};

/** 45 candidates d00..d44 best first (the node reads 40). */
const docs: Document[] = Array.from({ length: 45 }, (_, i) => ({ id: `d${String(i).padStart(2, '0')}`, text: `memory number ${i}` }));
const query: Query = { id: 'q1', text: 'When did Caroline go to the adoption agency?', stratum: 's' };
const scope: ScopeData = { scope: undefined, documents: docs, queries: [query], corpusFingerprint: 'c', queriesFingerprint: 'q' };
const input: ScopeRun = { indexStats: {}, indexMs: 0, searchMs: 0, queryMs: {}, results: { q1: docs.map((d, i): [string, number] => [d.id, 100 - i]) } };

const completion = (content: string) => ({
  id: 'x',
  object: 'chat.completion',
  created: 0,
  model: 'loopback',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});

describe('query classifier and prompt', () => {
  it('puts one question of each kind in each of the 7 types', () => {
    expect(QUERY_TYPES).toHaveLength(7);
    expect(
      [
        'When did Melanie paint a sunrise?',
        'Where does Caroline live now?',
        'What do Caroline and Melanie both enjoy doing?',
        'Do you think she likes hiking?',
        'What book did you recommend to me last month?',
        'What is the name of her dog?',
        'Tell me about the concert',
      ].map(classifyQuery),
    ).toEqual(['temporal', 'knowledge-update', 'multi-hop', 'preference', 'assistant-recall', 'factual', 'general']);
  });

  it('asks for a JSON array of {index, score} with the type instruction, and parses only well-formed replies', () => {
    const prompt = rerankPrompt('When?', 'temporal', ['a', 'b']);
    expect(prompt).toContain('Question type: temporal. Prefer memories that state when');
    expect(prompt).toContain('[0] a\n[1] b');
    expect(prompt).toContain('[{"index": 0, "score": 7}, ...]');
    expect(parseRerankReply('Sure! ```json\n[{"index": 1, "score": 9}, {"index": 0, "score": 2.5}]\n```', 2)).toEqual(
      new Map([
        [1, 9],
        [0, 2.5],
      ]),
    );
    for (const bad of [
      'no json',
      '[]',
      '[{"index": 2, "score": 1}]',
      '[{"index": 0, "score": 11}]',
      '[{"index": 0, "score": 1}, {"index": 0, "score": 2}]',
      '[{"index": 0}]',
    ])
      expect(parseRerankReply(bad, 2)).toBeUndefined();
  });
});

describe('llm-rerank node against a loopback OpenAI-compatible server', () => {
  it('reads 40, returns 20 ordered by the model, caches the reply, and no file holds the key', async () => {
    server = await startLoopback(() => ({ body: completion('[{"index": 39, "score": 10}, {"index": 5, "score": 8}, {"index": 0, "score": 8}]') }));
    const { root, log, ctx } = context();
    const node = bound({ llm: { baseURL: `${server.url}/v1`, model: 'loopback' } });
    expect(node.sendsTextOffMachine).toBe(true);
    const run = await node.create(ctx).runScope(scope, [input], 100);
    const ids = run.results['q1']!.map(([d]) => d);
    expect(ids).toHaveLength(20);
    // 39 first; 0 and 5 tie at 8 and keep the input's order; then the unscored in input order.
    expect(ids.slice(0, 5)).toEqual(['d39', 'd00', 'd05', 'd01', 'd02']);
    expect(run.results['q1']![0]![1]).toBeCloseTo(10 + 1e-3 * (1 - 39 / 40), 12);
    const sent = server.requests[0]!.json as { model: string; messages: { content: string }[] };
    expect(sent.model).toBe('loopback');
    expect(sent.messages[0]!.content).toContain('[39] memory number 39');
    expect(sent.messages[0]!.content).not.toContain('memory number 40');
    expect(server.requests[0]!.headers['authorization']).toBe(`Bearer ${KEY}`);
    // A second run asks nothing: the reply is cached.
    await node.create(ctx).runScope(scope, [input], 100);
    expect(server.requests).toHaveLength(1);
    expect(filesContaining([root], KEY)).toEqual([]);
    expect(log.lines.join('\n')).not.toContain(KEY);
  });

  it('takes a reply that parses on the third attempt; after 3 failures keeps the input order and caches nothing', async () => {
    server = await startLoopback(() => ({ body: completion('I cannot rank these.') }));
    server.enqueue('/v1/chat/completions', { body: completion('nope') }, { status: 500, body: 'boom' }, { body: completion('[{"index": 3, "score": 6}]') });
    const { ctx } = context();
    const node = bound({ llm: { baseURL: `${server.url}/v1`, model: 'loopback' }, maxAttempts: 3 });
    const ok = await node.create(ctx).runScope(scope, [input], 100);
    expect(ok.results['q1']![0]![0]).toBe('d03');
    const failing = { ...scope, queries: [{ ...query, text: 'Another question?' }] };
    const { ctx: ctx2, log } = context();
    const before = server.requests.length;
    const fb = await node.create(ctx2).runScope(failing, [input], 100);
    expect(server.requests.length - before).toBe(3);
    expect(fb.indexStats).toMatchObject({ llmQueries: 1, llmFallbacks: 1, llmAttempts: 3 });
    expect(fb.results['q1']!.map(([d]) => d)).toEqual(docs.slice(0, 20).map((d) => d.id));
    expect(log.lines.join('\n')).toMatch(/1 of 1 queries kept the input's order after 3 failed replies/);
    await node.create(ctx2).runScope(failing, [input], 100);
    expect(server.requests.length - before).toBe(6);
  });

  it("without an LLM keeps the input's order (top 20), and says so in its kind", async () => {
    const node = bound({});
    expect(node.kind).toBe('llm-rerank (no LLM: input order)');
    expect(node.sendsTextOffMachine).toBe(false);
    const run = await node.create(context().ctx).runScope(scope, [input], 100);
    expect(run.results['q1']!.map(([d]) => d)).toEqual(docs.slice(0, 20).map((d) => d.id));
  });

  it('refuses to run without the API key, naming the variable, never a value', async () => {
    const node = bound({ llm: { baseURL: 'http://127.0.0.1:9/v1', model: 'm', apiKeyEnv: 'RERANK_KEY' } });
    const { ctx } = context();
    await expect(node.create({ ...ctx, env: {} }).runScope(scope, [input], 100)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/RERANK_KEY/),
    });
  });
});
