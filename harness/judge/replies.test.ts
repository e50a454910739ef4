import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackReply, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { judgeArgv } from '../testing/judge-argv.js';
import { filesContaining } from '../testing/secret.js';
import { readJudgments } from './store.js';

/**
 * The judge against broken servers (issue 32): only a parsed grade is cached, a body that stalls after its
 * headers is cut at timeoutMs, and every failure names the status, the reason and the real number of attempts.
 */

const KEY = 'sk-judge-replies-planted-9c41e7';

let server: Loopback | undefined;
let stall: { server: Server; url: string; requests: number; open: Set<ServerResponse> } | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (stall) {
    for (const res of stall.open) res.destroy();
    stall.server.closeAllConnections();
    await new Promise((r) => stall!.server.close(r));
    stall = undefined;
  }
});

const corpus = [
  { id: 'd1', text: 'Alex runs the Green Lake loop g3' },
  { id: 'd2', text: 'Alex bought oat milk g2' },
  { id: 'd3', text: 'Rent is due on the first g1' },
  { id: 'd4', text: 'Dog named Biscuit g0' },
];
const queries = [
  { id: 'q1', text: 'Where does Alex run?', stratum: 'exact', qrels: { d4: 1 } },
  { id: 'q2', text: 'What did Alex buy?', stratum: 'paraphrase', qrels: { d4: 1 } },
];
// depth 2 over one run: q1 {d1, d2}, q2 {d2, d3}: 4 pairs, none graded by gold.
const run = 'q1 Q0 d1 1 3 A\nq1 Q0 d2 2 2 A\nq2 Q0 d2 1 3 A\nq2 Q0 d3 2 2 A\n';

function fixture(): Promise<string> {
  return tempFolder('judge-replies', {
    'es/corpus.jsonl': corpus.map((d) => JSON.stringify(d)).join('\n'),
    'es/queries.jsonl': queries.map((q) => JSON.stringify(q)).join('\n'),
    'a.trec': run,
  });
}

function args(baseUrl: string, extra: string[] = [], out = 'judgments'): string[] {
  return judgeArgv('judge-m', out, ['--base-url', baseUrl, '--concurrency', '1', ...extra]);
}

/** A chat completion with `content` (the grade tag of the passage when absent), from `model`. */
function completion(req: LoopbackRequest, opts: { content?: string; model?: string; choices?: unknown[] } = {}): LoopbackReply {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  const grade = /Passage: [^\n]*g(\d)/.exec(prompt)?.[1] ?? '0';
  const content = opts.content ?? `##final score: ${grade}`;
  return {
    body: {
      id: 'c',
      object: 'chat.completion',
      created: 0,
      model: opts.model ?? 'judge-m',
      choices: opts.choices ?? [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
      usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
    },
  };
}

/** A server that sends a 200, its headers and the first bytes of a body, then nothing, ever (or, without `headers`, nothing at all). */
async function startStalling(headers = true): Promise<NonNullable<typeof stall>> {
  const open = new Set<ServerResponse>();
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.requests++;
      open.add(res);
      if (!headers) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"c","object":"chat.completion","choices":[');
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const state = { server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1`, requests: 0, open };
  return state;
}

const said = (r: { stderr: string; log: readonly string[] }) => `${r.stderr}\n${r.log.join('\n')}`;

describe('harness judge against broken servers', () => {
  it('an empty choices list fails naming it and the real attempts; nothing is cached, so a rerun against a working server judges', async () => {
    server = await startLoopback((req) => completion(req, { choices: [] }));
    const dir = await fixture();
    const broken = await runCaptured(args(`${server.url}/v1`, ['--max-retries', '1', '--local']), dir, { OPENAI_API_KEY: KEY });
    expect(broken.code).toBe(1);
    expect(said(broken)).toContain(
      'chat completion with model judge-m failed after 2 attempts (maxRetries 1 used up): 2 x HTTP 200 with no choices in the reply',
    );
    expect(server.requests).toHaveLength(2);
    expect(existsSync(join(dir, 'judgments'))).toBe(false);
    await server.close();

    server = await startLoopback((req) => completion(req));
    const fixed = await runCaptured(args(`${server.url}/v1`, ['--local']), dir, { OPENAI_API_KEY: KEY });
    expect(fixed.code, said(fixed)).toBe(0);
    const j = await readJudgments(join(dir, 'judgments'));
    expect(j.manifest.counts).toMatchObject({ judged: 4, parseFailures: 0, requests: 4, cachedReplies: 0 });
    expect(filesContaining([dir], KEY)).toEqual([]);
  });

  it('replies without a score line are parse failures that are not cached: the run fails writing nothing, and a rerun against a working server judges', async () => {
    server = await startLoopback((req) => completion(req, { content: 'It depends on what the user meant.' }));
    const dir = await fixture();
    const first = await runCaptured(args(`${server.url}/v1`, ['--local']), dir, {});
    expect(first.code, said(first)).toBe(1);
    expect(server.requests).toHaveLength(12);
    expect(said(first)).toContain(
      `judge: 4 of 4 pairs have no grade (no "##final score: 0-3" line in any reply; 4 of the 4 asked this run), more than half: nothing written to ${join(dir, 'judgments')}`,
    );
    expect(said(first)).toContain('hint: check the model and the prompt');
    expect(existsSync(join(dir, 'judgments'))).toBe(false);
    await server.close();

    server = await startLoopback((req) => completion(req));
    const again = await runCaptured(args(`${server.url}/v1`, ['--local']), dir, {});
    expect(again.code, said(again)).toBe(0);
    const j = await readJudgments(join(dir, 'judgments'));
    expect(j.manifest.counts).toMatchObject({ judged: 4, parseFailures: 0, requests: 4, cachedReplies: 0 });
    expect(j.records.map((r) => r.grade)).toEqual([3, 2, 2, 1]);
    // A third run reads every grade from the cache (or keeps it from the folder) and sends nothing.
    const third = await runCaptured(args(`${server.url}/v1`, ['--local']), dir, {});
    expect(third.code).toBe(0);
    expect(server.requests).toHaveLength(4);
  });

  it('more than half of the pairs without a grade fails (exit 1, nothing written); up to half is a warning and the graded pairs are written', async () => {
    // Each pair's grade tag decides: d2 (in two pairs) and d3 get no score line, d1 does.
    const vague = (tags: string[]) => (req: LoopbackRequest) => {
      const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
      return tags.some((t) => prompt.includes(t)) ? completion(req, { content: 'Hard to say.' }) : completion(req);
    };
    server = await startLoopback(vague(['g2', 'g1']));
    const dir = await fixture();
    const three = await runCaptured(args(`${server.url}/v1`, ['--local'], 'j3'), dir, {});
    expect(three.code, said(three)).toBe(1);
    expect(said(three)).toContain('judge: 3 of 4 pairs have no grade');
    expect(existsSync(join(dir, 'j3'))).toBe(false);
    await server.close();

    server = await startLoopback(vague(['g2']));
    const two = await runCaptured(args(`${server.url}/v1`, ['--local'], 'j2'), dir, {});
    expect(two.code, said(two)).toBe(0);
    expect(said(two)).toContain(
      'judge: 2 of 4 pairs have no grade (no "##final score: 0-3" line in any reply; 2 of the 4 asked this run); they are holes in the qrels',
    );
    const j = await readJudgments(join(dir, 'j2'));
    expect(j.manifest.counts).toMatchObject({ judged: 2, parseFailures: 2 });
  });

  it('a body that stalls after the headers is cut at timeoutMs for the whole reply, each attempt, well inside a stated bound', async () => {
    stall = await startStalling();
    const dir = await fixture();
    const t0 = performance.now();
    const r = await runCaptured(args(stall.url, ['--timeout-ms', '300', '--max-retries', '1', '--local']), dir, {});
    const seconds = (performance.now() - t0) / 1000;
    expect(r.code).toBe(1);
    // Two attempts of 300 ms and a backoff of at most 0.5 s: well under 4 s, whatever the machine.
    expect(seconds).toBeLessThan(4);
    expect(seconds).toBeGreaterThanOrEqual(0.6);
    expect(stall.requests).toBe(2);
    expect(said(r)).toContain('failed after 2 attempts (maxRetries 1 used up): 2 x no complete reply within 300 ms (timeoutMs)');
    expect(said(r)).toContain('raise timeoutMs');
    expect(existsSync(join(dir, 'judgments'))).toBe(false);
  }, 10_000);

  it('a server that never sends its headers is cut at timeoutMs the same way', async () => {
    stall = await startStalling(false);
    const dir = await fixture();
    const t0 = performance.now();
    const r = await runCaptured(args(stall.url, ['--timeout-ms', '300', '--max-retries', '0', '--local']), dir, {});
    expect((performance.now() - t0) / 1000).toBeLessThan(3);
    expect(r.code).toBe(1);
    expect(said(r)).toContain('failed after 1 attempt (maxRetries 0 used up): no complete reply within 300 ms (timeoutMs)');
  }, 10_000);

  it('a failure that is not retried says so and names the server message, with a planted key blanked', async () => {
    server = await startLoopback(() => ({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}` } } }));
    const dir = await fixture();
    const r = await runCaptured(args(`${server.url}/v1`), dir, { OPENAI_API_KEY: KEY });
    expect(r.code).toBe(1);
    expect(said(r)).toContain('failed after 1 attempt (HTTP 401 is not retried): HTTP 401 (Incorrect API key provided: [redacted])');
    expect(said(r)).toContain('hint: check OPENAI_API_KEY');
    expect(said(r)).not.toContain(KEY);
    expect(server.requests).toHaveLength(1);
    expect(filesContaining([dir], KEY)).toEqual([]);
  });

  it('a server that went away names the connection error and every attempt', async () => {
    const gone = await startLoopback(() => ({}));
    const url = `${gone.url}/v1`;
    await gone.close();
    const dir = await fixture();
    const r = await runCaptured(args(url, ['--max-retries', '2', '--local']), dir, {});
    expect(r.code).toBe(1);
    expect(said(r)).toContain('failed after 3 attempts (maxRetries 2 used up): 3 x connection failed (ECONNREFUSED)');
  }, 15_000);

  it('records the model the server answers as, and says so when it differs from the one asked for', async () => {
    server = await startLoopback((req) => completion(req, { model: 'judge-m-2026-01-15' }));
    const dir = await fixture();
    const r = await runCaptured(args(`${server.url}/v1`, ['--local']), dir, {});
    expect(r.code, said(r)).toBe(0);
    const j = await readJudgments(join(dir, 'judgments'));
    expect(j.manifest.judge.model).toBe('judge-m');
    expect(j.manifest.servedModels).toEqual(['judge-m-2026-01-15']);
    expect(said(r)).toContain('asked for model judge-m, the server answered as judge-m-2026-01-15');
    // From the cache, the served model is still known.
    const again = await runCaptured(args(`${server.url}/v1`, ['--local'], 'judgments2'), dir, {});
    expect(again.code).toBe(0);
    const j2 = await readJudgments(join(dir, 'judgments2'));
    expect(j2.manifest.counts).toMatchObject({ requests: 0, cachedReplies: 4 });
    expect(j2.manifest.servedModels).toEqual(['judge-m-2026-01-15']);
  });
});
