import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReportData } from '../decision/types.js';
import { runCaptured } from '../testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A model that restates every numbered message of the session as one dated fact citing it. */
function restate(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
  const date = /Session date: (\S+)/.exec(prompt)?.[1] ?? '2023-01-01';
  const facts = [...prompt.matchAll(/^\[(\d+)\] (.*)$/gm)].map(([, n, text]) => `[${date}] ${text} (messages: ${n})`);
  const content = `<memories>\n${facts.join('\n')}\n</memories>\n<entities>\n</entities>\n<relationships>\n</relationships>`;
  return {
    body: {
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    },
  };
}

describe("v1's extraction stage in an ablation", () => {
  it('extracts through an OpenAI-compatible server, reports the stage, and a rerun of the system sends nothing', async () => {
    server = await startLoopback(restate);
    const dir = tempDir('v1-extract');
    writeFileSync(
      join(dir, 'study.yaml'),
      [
        'name: v1-extract',
        `evalset: { format: memory, path: ${join(PROJECT_ROOT, 'evalset/examples/alex-memory')} }`,
        'measures: [nDCG@10]',
        'topK: 20',
        'arms:',
        '  - { id: bm25, kind: bm25, params: { preset: simple, k1: 1.2, b: 0.75 } }',
        'systems:',
        '  - id: v1-bm25',
        '    kind: chunk',
        `    params: { arm: { kind: bm25, params: { preset: simple, k1: 1.2, b: 0.75 } }, extract: { baseURL: "${server.url}/v1", model: gpt-5-mini, local: true } }`,
        'compare: { baseline: bm25 }',
        'output: ./reports',
        'cache: ./cache',
      ].join('\n'),
    );
    const first = await runCaptured(['ablate', '--config', 'study.yaml'], dir);
    expect(first.code, [...first.log, first.stderr].join('\n')).toBe(0);
    const sent = server.requests.length;
    expect(sent).toBeGreaterThan(10);
    const report = () => {
      const [folder] = readdirSync(join(dir, 'reports'));
      return JSON.parse(readFileSync(join(dir, 'reports', folder as string, 'report.json'), 'utf8')) as ReportData;
    };
    const run = report().runs.find((r) => r.id === 'v1-bm25');
    expect(run?.kind).toBe('chunk(extract, bm25)');
    // Facts restating each memory, each citing it: the stage retrieves what plain BM25 over the memories does.
    const mean = (r: ReportData, id: string) => r.comparisons.find((c) => c.system === id && c.measure === 'nDCG@10' && c.stratum === 'all')?.systemMean;
    expect(mean(report(), 'v1-bm25')).toBeGreaterThan(0.3);
    // Recomputing the system (not its cached run) finds every reply in the cache.
    const again = await runCaptured(['ablate', '--config', 'study.yaml', '--refresh', 'v1-bm25'], dir);
    expect(again.code, [...again.log, again.stderr].join('\n')).toBe(0);
    expect([again.out, ...again.log, again.stderr].join('\n')).toMatch(/system runs from cache: \d+ hit\(s\), 1 computed/);
    expect(server.requests.length).toBe(sent);
  }, 300_000);
});
