import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Document, Query } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import { memoryLogger } from '../log.js';
import { extractionPrompt, parseExtraction } from '../recipes/extract.js';
import { buildSessions } from '../recipes/session.js';
import { startBatchLoopback } from '../testing/batch-loopback.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import { tempDir } from '../testing/temp.js';
import { chunkNode } from './chunk.js';
import type { BoundNode, NodeContext, ScopeData } from './types.js';

const KEY = 'sk-loopback-extract-secret-0123456789';
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Two sessions a day apart (turns a minute apart), as LoCoMo's conversations are. */
const turn = (id: string, day: number, minute: number, speaker: string, text: string): Document => ({
  id,
  text: `${speaker}: ${text}`,
  timestamp: `2023-05-0${day}T10:0${minute}:00`,
  metadata: { speaker },
});
const docs: Document[] = [
  turn('s1-1', 1, 0, 'Caroline', 'I went to the adoption agency yesterday.'),
  turn('s1-2', 1, 1, 'Melanie', 'That is wonderful news!'),
  turn('s1-3', 1, 2, 'Caroline', 'They said the interview is next week.'),
  turn('s2-1', 3, 0, 'Melanie', 'I painted a sunrise by the lake.'),
  turn('s2-2', 3, 1, 'Caroline', 'Send me a photo of the painting!'),
];
const queries: Query[] = [
  { id: 'q-agency', text: 'When did Caroline visit the adoption agency?', stratum: 's' },
  { id: 'q-paint', text: 'What did Melanie paint?', stratum: 's' },
];
const scope: ScopeData = { scope: 'conv-1', documents: docs, queries, corpusFingerprint: 'c', queriesFingerprint: 'q' };

/** What a model would answer: the facts of each session, citing their messages, from the prompt's session date. */
function extractionReply(prompt: string): string {
  return prompt.includes('Session date: 2023-05-01')
    ? '<memories>\n[2023-04-30] Caroline visited the adoption agency. (messages: 1)\n[2023-05-01] Caroline has an adoption interview the next week. (messages: 3)\n</memories>\n<entities>\nCaroline|person|adopting a child\n</entities>\n<relationships>\n</relationships>'
    : '<memories>\n[2023-05-03] Melanie painted a sunrise by the lake. (messages: 1, 2)\n</memories>\n<entities>\nMelanie|person|paints\n</entities>\n<relationships>\nMelanie|painted|sunrise|2023-05-03\n</relationships>';
}

function reply(req: LoopbackRequest) {
  const content = extractionReply((req.json as { messages: { content: string }[] }).messages[0]?.content ?? '');
  return {
    body: {
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'loopback',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    },
  };
}

function bound(params: unknown): BoundNode {
  const r = chunkNode.bind({ kind: 'chunk', params, inputs: [], topK: 10 });
  if ('problems' in r) throw new Error(r.problems.join('\n'));
  return r.node;
}

describe('v1 extraction stage (chunk params.extract)', () => {
  it('prompts per session with its date and numbered messages, and parses only dated <memories> lines', () => {
    const [s1] = buildSessions(docs, 30, 'conv-1');
    const prompt = extractionPrompt(s1!);
    expect(prompt).toContain('Session date: 2023-05-01');
    expect(prompt).toContain('[1] Caroline: I went to the adoption agency yesterday.');
    expect(prompt).toContain('<memories>');
    expect(parseExtraction('<memories>\n[2023-05-01] A fact. (messages: 2, 9)\n- [2023-05-01] Another.\n</memories>', 3)).toEqual({
      memories: [
        { text: '[2023-05-01] A fact.', cites: [1] },
        { text: '[2023-05-01] Another.', cites: [] },
      ],
      entities: 0,
      relationships: 0,
    });
    for (const bad of ['no sections', '<memories>\n</memories>', '<memories>\nundated fact\n</memories>']) expect(parseExtraction(bad, 3)).toBeUndefined();
  });

  it('runs against an OpenAI-compatible server: facts are chunked and map back to the messages they cite; a rerun sends nothing', async () => {
    server = await startLoopback(reply);
    const root = tempDir('extract');
    const log = memoryLogger();
    const ctx: NodeContext = { cache: new ContentStore(root), log, workDir: root, env: { OPENAI_API_KEY: KEY } };
    const params = { arm: { kind: 'bm25', params: { preset: 'simple' } }, extract: { baseURL: `${server.url}/v1`, model: 'gpt-5-mini' } };
    const node = bound(params);
    expect(node.kind).toBe('chunk(extract, bm25)');
    expect(node.sendsTextOffMachine).toBe(true);
    expect(JSON.stringify(node.fingerprint)).not.toContain(KEY);
    const run = await node.create(ctx).runScope(scope, [], 10);
    // One request per session, with the key as a bearer token and the session's messages in the prompt.
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(run.indexStats).toMatchObject({ sessions: 2, extractedSessions: 2, extractionFallbacks: 0, memories: 3, entities: 2, relationships: 1, chunks: 2 });
    // A fact block stands for the messages its facts cite: session 1's for s1-1 and s1-3, never s1-2.
    const top2 = (qid: string) =>
      run.results[qid]!.map(([d]) => d)
        .slice(0, 2)
        .sort();
    expect(top2('q-agency')).toEqual(['s1-1', 's1-3']);
    expect(run.results['q-agency']!.map(([d]) => d)).not.toContain('s1-2');
    expect(top2('q-paint')).toEqual(['s2-1', 's2-2']);
    // Replies are cached like the judge's: a new instance on the same cache sends nothing and returns the same run.
    const again = await bound(params)
      .create({ ...ctx, cache: new ContentStore(root) })
      .runScope(scope, [], 10);
    expect(server.requests).toHaveLength(2);
    expect(again.results).toEqual(run.results);
    expect(filesContaining([root], KEY)).toEqual([]);
  });

  it.each(['openai', 'anthropic'] as const)('through %s batches gives the run of one-by-one calls, in one batch per scope', async (provider) => {
    const batches = await startBatchLoopback({ answer: (prompt) => extractionReply(prompt) });
    try {
      const root = tempDir('extract-batch');
      const ctx: NodeContext = { cache: new ContentStore(root), log: memoryLogger(), workDir: root, env: { BATCH_KEY: KEY } };
      const baseURL = provider === 'openai' ? `${batches.url}/v1` : batches.url;
      const extract = { provider, baseURL, model: 'gpt-5-mini', apiKeyEnv: 'BATCH_KEY' };
      const one = await bound({ arm: { kind: 'bm25', params: { preset: 'simple' } }, extract })
        .create(ctx)
        .runScope(scope, [], 10);
      expect(batches.batchIds).toHaveLength(0);
      const batched = { ...extract, batch: { pollSeconds: 0.02, idleMs: 20 } };
      const fresh = { ...ctx, cache: new ContentStore(join(root, 'other')) };
      const run = await bound({ arm: { kind: 'bm25', params: { preset: 'simple' } }, extract: batched })
        .create(fresh)
        .runScope(scope, [], 10);
      expect(batches.batchIds).toHaveLength(1);
      expect(batches.submitted.size).toBe(2);
      expect(run.results).toEqual(one.results);
      expect(run.indexStats).toMatchObject({ extractedSessions: 2, memories: 3 });
      expect(filesContaining([root], KEY)).toEqual([]);
    } finally {
      await batches.close();
    }
  });

  it("keeps a session's messages after unusable replies (not cached), and needs its key unless the server is local", async () => {
    server = await startLoopback(() => ({
      body: {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'I cannot.' }, finish_reason: 'stop' }],
      },
    }));
    const root = tempDir('extract-fallback');
    const log = memoryLogger();
    const ctx: NodeContext = { cache: new ContentStore(root), log, workDir: root, env: {} };
    const extract = { baseURL: `${server.url}/v1`, model: 'm', local: true, maxAttempts: 2 };
    const run = await bound({ arm: { kind: 'bm25' }, extract })
      .create(ctx)
      .runScope(scope, [], 10);
    expect(server.requests).toHaveLength(4);
    expect(run.indexStats).toMatchObject({ extractedSessions: 0, extractionFallbacks: 2, chunks: 5 });
    expect(run.results['q-paint']![0]![0]).toBe('s2-1');
    await bound({ arm: { kind: 'bm25' }, extract })
      .create(ctx)
      .runScope(scope, [], 10);
    expect(server.requests).toHaveLength(8);
    const noKey = bound({ arm: { kind: 'bm25' }, extract: { ...extract, local: false } })
      .create(ctx)
      .runScope(scope, [], 10);
    await expect(noKey).rejects.toThrow(HarnessError);
    await expect(noKey).rejects.toThrow(/OPENAI_API_KEY; set it, declare local: true/);
  });

  it('without a model the messages themselves are chunked, with the identity chunks had before', () => {
    const node = bound({ arm: { kind: 'bm25' } });
    expect(node.kind).toBe('chunk(bm25)');
    expect(node.fingerprint).not.toHaveProperty('extract');
    expect(node.sendsTextOffMachine).toBe(false);
  });
});
