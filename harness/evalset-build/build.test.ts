import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMemory } from '../../evalset/memory.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import { contentTerms, rejection, seedGroup, sharedTerms } from './build.js';

const KEY = 'sk-generator-loopback-secret-7';
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const corpus = [
  { id: 'f1', text: 'Ran ten kilometres around Green Lake on Sunday.', category: 'fitness', importance: 0.2 },
  { id: 'f2', text: 'Stubborn knee pain after the climbing gym session.', category: 'fitness', importance: 0.5 },
  { id: 'm1', text: 'Sister Maya moved to Lisbon in March.', category: 'family', importance: 0.9 },
  { id: 'm2', text: 'Unrelated note: the dog Biscuit needs a vet visit.', category: 'family', importance: 0.4 },
  { id: 'm3', text: 'Therapy session about panic attacks.', category: 'family', importance: 0.8, sensitive: true },
];

function reply(content: string) {
  return {
    body: {
      object: 'chat.completion',
      model: 'gen-m',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
      usage: { prompt_tokens: 10, completion_tokens: 3 },
    },
  };
}

/**
 * A scripted generator: exact questions quote the memory; a paraphrase leaks the memory's first word on its
 * first try and is clean once told why (except for the stubborn memory, which always leaks); multi-hop says
 * NONE when one memory is "Unrelated".
 */
function generator(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  if (prompt.includes('combining every one')) return reply(prompt.includes('Unrelated') ? 'NONE' : 'How did the weekend go overall?');
  const memory = /Memory: (.*)\n/.exec(prompt)![1]!;
  const first = memory.split(' ')[0]!.toLowerCase();
  if (prompt.includes('entirely different words')) {
    const retry = prompt.includes('was rejected because');
    return reply(!retry || memory.startsWith('Stubborn') ? `What about the ${first} thing?` : 'Which pastime did I pursue lately?');
  }
  return reply(`What do I know about this: ${memory}`);
}

describe('overlap rules', () => {
  it('stem and drop stop words before comparing', () => {
    expect([...contentTerms('The runners were running to Lisbon!')].sort()).toEqual(['lisbon', 'runner', 'run'].sort());
    expect(sharedTerms('Where did I go running?', ['Ran ten km; I run daily'])).toEqual(['run']);
    expect(rejection('paraphrase', 'Which pastime did I pursue lately?', [corpus[0]!.text])).toBeUndefined();
    // "ran" is not stemmed to "run" (Porter leaves irregular forms), so only these two leak.
    expect(rejection('paraphrase', 'How far did I run around the lake?', ['Ran ten kilometres around Green Lake'])).toBe(
      'it shares words with the memory (around, lake)',
    );
    expect(rejection('exact', 'Which pastime did I pursue lately?', [corpus[0]!.text])).toBe('it shares no key word with the memory');
    expect(rejection('exact', '', ['x'])).toBe('the reply was empty');
  });
  it('buckets numbers in [0, 1] and names missing fields', () => {
    const d = { id: 'x', text: 't', metadata: { category: 'family', importance: 0.5 } };
    expect(seedGroup(d, ['category', 'importance'])).toBe('category=family,importance=mid');
    expect(seedGroup(d, ['mood'])).toBe('mood=(none)');
    expect(seedGroup(d, [])).toBe('all');
  });
});

describe('harness evalset build through the openai SDK against a loopback server', () => {
  it('samples seeds by category, rejects a leaking paraphrase and regenerates it, drops and counts, and a rerun sends nothing', async () => {
    server = await startLoopback(generator);
    const dir = await tempFolder('build', {
      'store/corpus.jsonl': corpus.map((d) => JSON.stringify(d)).join('\n'),
      'hand.jsonl': JSON.stringify({ id: 'hand-1', text: 'Who moved abroad and who got hurt?', stratum: 'multi-hop', qrels: { m1: 2, f2: 2 } }),
    });
    const args = ['evalset', 'build', '--corpus', 'store', '--out', 'eval', '--model', 'gen-m', '--judge-model', 'judge-m', '--base-url', `${server.url}/v1`];
    const more = ['--per-stratum', '2', '--hand', 'hand.jsonl', '--cache', 'cache', '--concurrency', '1'];
    const r = await runCaptured([...args, ...more], dir, { OPENAI_API_KEY: KEY });
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const m = JSON.parse(readFileSync(join(dir, 'eval', 'build-manifest.json'), 'utf8'));
    expect(m.seeds).toEqual({ 'category=family': expect.arrayContaining(['m1', 'm2']), 'category=fitness': expect.arrayContaining(['f1', 'f2']) });
    // exact: 4 accepted at once. paraphrase: f1, m1, m2 rejected once each then accepted; f2 rejected 3 times
    // and dropped. multi-hop: (f1, f2) or (f2, f1) accepted; (m1, m2) answered NONE and dropped.
    expect(m.counts).toMatchObject({
      sensitiveExcluded: 1,
      requested: { exact: 4, paraphrase: 4, 'multi-hop': 2 },
      accepted: { exact: 4, paraphrase: 3, 'multi-hop': 1 },
      rejected: { exact: 0, paraphrase: 6, 'multi-hop': 0 },
      dropped: { exact: 0, paraphrase: 1, 'multi-hop': 1 },
      hand: 1,
      requests: 4 + (2 + 3 + 2 + 2) + 2,
      cachedReplies: 0,
    });
    expect(m.generator.model).toBe('gen-m');
    expect(m.judgeModel).toBe('judge-m');
    expect(m.prompts.paraphrase).toEqual({ name: 'paraphrase-v1', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(server.requests.some((q) => q.body.includes('Therapy'))).toBe(false);

    const es = await loadMemory(join(dir, 'eval'));
    expect(es.documents).toHaveLength(5);
    const strata = es.queries.map((q) => q.stratum);
    expect(strata.filter((s) => s === 'paraphrase')).toHaveLength(3);
    expect(strata.filter((s) => s === 'multi-hop')).toHaveLength(2);
    for (const q of es.queries.filter((x) => x.stratum === 'paraphrase')) {
      const seed = Object.keys(Object.fromEntries(es.qrels.get(q.id)!))[0]!;
      expect(sharedTerms(q.text, [corpus.find((d) => d.id === seed)!.text])).toEqual([]);
    }
    const hop = es.queries.find((q) => q.stratum === 'multi-hop' && q.id.startsWith('gen-'))!;
    expect(Object.fromEntries(es.qrels.get(hop.id)!)).toEqual({ f1: 2, f2: 2 });

    const again = await runCaptured([...args, ...more], dir, { OPENAI_API_KEY: KEY });
    expect(again.code).toBe(0);
    expect(server.requests).toHaveLength(15);
    expect(JSON.parse(readFileSync(join(dir, 'eval', 'build-manifest.json'), 'utf8')).counts).toMatchObject({ requests: 0, cachedReplies: 15 });
    expect(filesContaining([dir], KEY)).toEqual([]);
  });

  it('refuses a judge model that is the generator', async () => {
    server = await startLoopback(generator);
    const dir = await tempFolder('build-same', { 'store/corpus.jsonl': corpus.map((d) => JSON.stringify(d)).join('\n') });
    const r = await runCaptured(
      ['evalset', 'build', '--corpus', 'store', '--out', 'eval', '--model', 'm', '--judge-model', 'm', '--base-url', `${server.url}/v1`, '--local'],
      dir,
      {},
    );
    expect(r.code).toBe(2);
    expect(r.stderr + r.log.join('\n')).toContain('is also the generator');
    expect(server.requests).toHaveLength(0);
  });
});
