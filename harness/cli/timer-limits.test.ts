import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TIMER_MS } from '../../arms/remote/limits.js';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { judgeArgv } from '../testing/judge-argv.js';
import { type Loopback, startLoopback } from '../testing/loopback.js';

/**
 * A user timeout longer than a Node.js timer keeps (2^31 - 1 ms) would fire after 1 ms and fail every call:
 * each entry point refuses it at load (exit 2), naming the flag or config path, in arms/remote's words.
 */

const TOO_LONG = 'must be at most 2147483647 (about 24.8 days), the longest timer Node.js can set';
const TOO_LONG_S = 'must be at most 2147483.647 (about 24.8 days), the longest timer Node.js can set';
const over = MAX_TIMER_MS + 1;

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const evalset = {
  'es/corpus.jsonl': '{"id":"d1","text":"Alex runs the Green Lake loop"}\n{"id":"d2","text":"Rent is due on the first"}\n',
  'es/queries.jsonl': '{"id":"q1","text":"Where does Alex run?","stratum":"s","qrels":{"d1":1}}\n',
  'a.trec': 'q1 Q0 d1 1 2 A\nq1 Q0 d2 2 1 A\n',
};

function config(lines: readonly string[]): string {
  return ['name: t', 'evalset: { format: memory, path: es }', 'measures: [nDCG@10]', 'output: out', 'cache: cache', ...lines].join('\n');
}

describe('user timeouts above the longest Node.js timer', () => {
  it('are refused in an ablation config: judge, llm-rerank, extract, hosted embedders and the fake arm, every path named', async () => {
    const dir = await tempFolder('timer-limits', {
      ...evalset,
      'c.yaml': config([
        'judgments: j',
        `judge: { model: m, local: true, timeoutMs: ${over} }`,
        'arms:',
        `  - { id: slow, kind: fake, params: { delayMs: ${over} } }`,
        '  - { id: ok, kind: fake }',
        `  - { id: oa, kind: openai-embed, params: { timeoutSeconds: ${over / 1000} } }`,
        `  - { id: vo, kind: voyage-embed, params: { timeoutSeconds: ${over / 1000} } }`,
        'systems:',
        `  - { id: rr, kind: llm-rerank, inputs: [ok], params: { llm: { baseURL: "http://127.0.0.1:9/v1", model: m, timeoutMs: ${over} } } }`,
        `  - { id: ch, kind: chunk, params: { arm: { kind: fake }, extract: { model: m, local: true, timeoutMs: ${over} } } }`,
      ]),
    });
    const r = await runCaptured(['ablate', '--config', 'c.yaml'], dir, { OPENAI_API_KEY: 'k', VOYAGE_API_KEY: 'k' });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`judge.timeoutMs: ${TOO_LONG}`);
    expect(r.stderr).toContain(`arms[0].params.delayMs: ${TOO_LONG}`);
    expect(r.stderr).toContain(`arms[2].params.timeoutSeconds: ${TOO_LONG_S}`);
    expect(r.stderr).toContain(`arms[3].params.timeoutSeconds: ${TOO_LONG_S}`);
    expect(r.stderr).toContain(`systems[0].params.llm.timeoutMs: ${TOO_LONG}`);
    expect(r.stderr).toContain(`systems[1].params.extract.timeoutMs: ${TOO_LONG}`);
  });

  const judge = (extra: readonly string[]) => judgeArgv('judge-m', 'j', ['--local', ...extra]);

  it('are refused as harness judge --timeout-ms, naming the flag, also over a config whose judge: block is fine', async () => {
    const dir = await tempFolder('timer-limits', {
      ...evalset,
      'c.yaml': config(['judgments: j', 'judge: { model: m, local: true, timeoutMs: 1000 }', 'arms:', '  - { id: a, kind: fake }']),
    });
    for (const [value, message] of [
      [String(over), TOO_LONG],
      ['0', 'Too small'],
      ['1.5', 'expected int'],
    ] as const) {
      const r = await runCaptured(judge(['--timeout-ms', value]), dir);
      expect(r.code, r.stderr).toBe(2);
      const line = r.stderr.split('\n').find((l) => l.startsWith('harness: --timeout-ms: '));
      expect(line, r.stderr).toContain(message);
    }
    const viaConfig = await runCaptured(['judge', '--config', 'c.yaml', '--timeout-ms', String(over)], dir);
    expect(viaConfig.code, viaConfig.stderr).toBe(2);
    expect(viaConfig.stderr).toContain(`harness: --timeout-ms: ${TOO_LONG}`);
    expect(viaConfig.stderr).not.toContain('judge.timeoutMs');
  });

  it('the longest timeout the judge takes still judges: its SDK timer, a second past the deadline, is capped too', async () => {
    server = await startLoopback(() => chatCompletion('##final score: 2', { prompt: 1, completion: 1 }));
    const dir = await tempFolder('timer-limits', evalset);
    const r = await runCaptured(judge(['--base-url', `${server.url}/v1`, '--max-retries', '0', '--timeout-ms', String(MAX_TIMER_MS)]), dir);
    expect(r.code, `${r.stderr}${r.log.join('\n')}`).toBe(0);
    // One pair to judge: gold grades the other.
    expect(server.requests.length).toBe(1);
  });

  it('are refused as harness datasets --connect-timeout / --idle-timeout, in seconds, before any download', async () => {
    const dir = await tempFolder('timer-limits', {});
    for (const flag of ['--connect-timeout', '--idle-timeout']) {
      const r = await runCaptured(['datasets', 'get', 'nfcorpus', '--dir', 'd', flag, String(over / 1000)], dir);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`harness: ${flag}: ${TOO_LONG_S}`);
    }
  });
});
