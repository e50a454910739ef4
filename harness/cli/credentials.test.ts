import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { stderrLogger } from '../log.js';
import { type Captured, runCaptured } from '../testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import { writeMemoryEvalSet, writeStudy } from '../testing/study.js';
import { tempDir } from '../testing/temp.js';

/**
 * Issue 32, credentials: a key planted in a URL of the config is refused at load (exit 2, `--dry-run`
 * included, before any arm runs); a key in the environment reaches its server and nothing else. Every file a
 * run writes and the stdout, stderr and log of every failure below are searched for the planted key.
 */

const PLANTED = 'planted-Key-4c1d9e77ab';

const corpus = [
  { id: 'm1', text: 'dog named Biscuit g3' },
  { id: 'm2', text: 'cat named Tom g2' },
  { id: 'm3', text: 'dog food brand g1' },
];
const queries = [
  { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 3 } },
  { id: 'q2', text: 'cat', stratum: 'exact', qrels: { m2: 2 } },
];

let dir: string;
let server: Loopback;
/** How the service and the judge answer: normally, or with a 401 that echoes the key they were sent. */
const mode = { echo401: false };

/** A search service (`/search`, key in X-Api-Key) and an OpenAI-compatible judge (`/v1/chat/completions`). */
function serve(req: LoopbackRequest) {
  const key = req.headers['x-api-key'] ?? req.headers.authorization;
  if (mode.echo401) return { status: 401, body: { error: { message: `invalid key ${String(key)}` } } };
  if (req.path === '/v1/chat/completions') {
    const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
    const content = `##final score: ${/Passage: [^\n]*g(\d)/.exec(prompt)?.[1] ?? '0'}`;
    return { body: { id: 'c', object: 'chat.completion', created: 0, model: 'judge-m', choices: [{ index: 0, message: { role: 'assistant', content } }] } };
  }
  if (req.headers['x-api-key'] !== PLANTED) return { status: 401, body: { error: 'no key' } };
  const q = String((req.json as { q: string }).q).split(' ');
  return { body: corpus.filter((d) => q.some((w) => d.text.includes(w))).map((d, i) => ({ id: d.id, score: 10 - i })) };
}

beforeEach(async () => {
  mode.echo401 = false;
  dir = tempDir('harness-credentials');
  writeMemoryEvalSet(dir, corpus, queries);
  server = await startLoopback(serve);
});
afterEach(async () => {
  await server.close();
});

/** An ablation of a bm25 arm and `arm` (YAML lines under `arms:`), with extra top-level lines. */
function config(arm: string, top: readonly string[] = []): string {
  return writeStudy(
    dir,
    'c.yaml',
    'creds',
    `${top.join('\n')}
arms:
  - id: bm25
    kind: bm25
${arm}
compare: { permutations: 100, resamples: 100 }
`,
  );
}

const httpArm = (url: string) => `  - id: svc
    kind: http
    params:
      search:
        url: ${url}
        headers: { X-Api-Key: { env: SVC_KEY } }
        body: { q: "{{query.text}}" }
      response: { results: "$[*]", docId: "$.id", score: "$.score" }
      retries: 0
      timeoutMs: 2000`;

const env = { SVC_KEY: PLANTED, OPENAI_API_KEY: PLANTED, VOYAGE_API_KEY: PLANTED };

/** Everything a run said and every file it wrote (the config itself, which holds what the user wrote, aside). */
function leaks(r: Captured): string[] {
  const said = [r.out, r.stderr, ...r.log].join('\n').includes(PLANTED) ? ['(stdout, stderr or log)'] : [];
  return [...said, ...filesContaining([dir], PLANTED).filter((f) => !f.endsWith('c.yaml'))];
}

describe('a credential written into a URL of the config', () => {
  const cases: [string, () => string, RegExp][] = [
    [
      'an http arm URL query',
      () => config(httpArm(`${server.url}/search?tenant=t1&api_key=${PLANTED}`)),
      /arms\[1\]\.params\.search\.url: holds a credential in its query \(api_key;/,
    ],
    [
      'an http arm URL with user:password',
      () => config(httpArm(`${server.url.replace('http://', `http://alex:${PLANTED}@`)}/search`)),
      /arms\[1\]\.params\.search\.url: holds a user:password \(shown as http:\/\/\*\*\*@127\.0\.0\.1/,
    ],
    [
      'a voyage-embed baseUrl with user:password',
      () => config(`  - id: voy\n    kind: voyage-embed\n    params: { baseUrl: "https://alex:${PLANTED}@proxy.example/v1" }`),
      /arms\[1\]\.params\.baseUrl: holds a user:password/,
    ],
    [
      'an openai-embed baseUrl query',
      () => config(`  - id: oai\n    kind: openai-embed\n    params: { dimensions: 16, baseUrl: "${server.url}/v1?api-key=${PLANTED}" }`),
      /arms\[1\]\.params\.baseUrl: holds a credential in its query \(api-key;/,
    ],
    [
      'an MCP server URL with ?token=',
      () => config(`  - id: own\n    kind: mcp\n    params: { server: { url: "${server.url}/mcp?token=${PLANTED}" }, local: true }`),
      /arms\[1\]\.params\.server\.url: holds a credential in its query \(token;/,
    ],
    [
      "the judge's baseURL",
      () => config('', ['judgments: judgments', `judge: { model: judge-m, baseURL: "http://u:${PLANTED}@127.0.0.1:9/v1", local: true }`]),
      /judge\.baseURL: holds a user:password/,
    ],
  ];
  for (const [what, make, message] of cases) {
    it(`${what}: refused at load with exit 2, --dry-run too, before any arm runs; the key is nowhere`, async () => {
      const file = make();
      for (const more of [['--dry-run'], []]) {
        const r = await runCaptured(['ablate', '--config', file, ...more], dir, env);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(message);
        expect(leaks(r)).toEqual([]);
      }
      expect(server.requests).toHaveLength(0);
      expect(existsSync(join(dir, 'out'))).toBe(false);
    });
  }

  it('harness evalset build --base-url with ?api_key=: exit 2, the key nowhere', async () => {
    const url = `${server.url}/v1?api_key=${PLANTED}`;
    const r = await runCaptured(
      ['evalset', 'build', '--corpus', 'es', '--out', 'built', '--model', 'gen-m', '--judge-model', 'judge-m', '--base-url', url, '--local'],
      dir,
      env,
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--base-url holds a credential in its query \(api_key;/);
    expect(leaks(r)).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('harness judge --base-url with user:password: exit 2, the key nowhere', async () => {
    writeFileSync(join(dir, 'a.trec'), 'q1 Q0 m1 1 3 A\nq1 Q0 m3 2 2 A\n');
    const url = `${server.url.replace('http://', `http://u:${PLANTED}@`)}/v1`;
    const r = await runCaptured(['judge', '--runs', 'a.trec', '--evalset', 'es', '--out', 'j', '--model', 'judge-m', '--base-url', url, '--local'], dir, env);
    expect(r.code).toBe(2);
    // The flag gave the URL, so the flag is named (a judge: block's would be judge.baseURL).
    expect(r.stderr).toMatch(/--base-url: holds a user:password/);
    expect(leaks(r)).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});

describe('a key in the environment reaches its server and nothing else', () => {
  const judged = () => config(httpArm(`${server.url}/search?tenant=t1`), ['judgments: judgments', `judge: { model: judge-m, baseURL: "${server.url}/v1" }`]);

  it('an ablation and a judging that succeed: no file they write and nothing they print holds the key', async () => {
    const file = judged();
    const run = await runCaptured(['ablate', '--config', file], dir, env);
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests.filter((q) => q.path === '/search').every((q) => q.headers['x-api-key'] === PLANTED)).toBe(true);
    const judge = await runCaptured(['judge', '--config', file], dir, env);
    expect(judge.code, judge.stderr).toBe(0);
    expect(server.requests.filter((q) => q.path === '/v1/chat/completions').length).toBeGreaterThan(0);
    expect(readdirSync(join(dir, 'out')).length).toBe(1);
    expect(readdirSync(join(dir, 'judgments'))).toEqual(expect.arrayContaining(['manifest.json', 'judgments.jsonl']));
    expect(leaks(run)).toEqual([]);
    expect(leaks(judge)).toEqual([]);
  });

  it('servers that answer 401 quoting the key: the failures (exit 1) print it nowhere and write it nowhere', async () => {
    mode.echo401 = true;
    const file = judged();
    const run = await runCaptured(['ablate', '--config', file], dir, env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/HTTP 401/);
    expect(leaks(run)).toEqual([]);
    writeFileSync(join(dir, 'a.trec'), 'q1 Q0 m1 1 3 A\nq1 Q0 m3 2 2 A\n');
    const judge = await runCaptured(
      ['judge', '--runs', 'a.trec', '--evalset', 'es', '--out', 'j', '--model', 'judge-m', '--base-url', `${server.url}/v1`],
      dir,
      env,
    );
    expect(judge.code).toBe(1);
    expect(judge.stderr).toContain('HTTP 401 (invalid key Bearer [redacted])');
    expect(leaks(judge)).toEqual([]);
  });

  it('a base URL with user:password from the environment: the failure names it redacted', async () => {
    const closed = await startLoopback(() => ({}));
    const url = `${closed.url.replace('http://', `http://alex:${PLANTED}@`)}/v1`;
    await closed.close();
    const file = config(`  - id: oai\n    kind: openai-embed\n    params: { dimensions: 16, maxRetries: 0 }`);
    const r = await runCaptured(['ablate', '--config', file], dir, { ...env, OPENAI_BASE_URL: url });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1/);
    expect(leaks(r)).toEqual([]);
  });
});

describe('the stderr logger', () => {
  it('redacts every URL of a log line or warning', () => {
    let said = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      said += String(s);
      return true;
    });
    try {
      const log = stderrLogger();
      log.info(`GET http://alex:${PLANTED}@127.0.0.1:9/s?q=cat&token=${PLANTED} answered 500`);
      log.warn(`retrying https://h.example/v1?sig=${PLANTED}`);
    } finally {
      spy.mockRestore();
    }
    expect(said).toBe('GET http://***@127.0.0.1:9/s?q=cat&token=*** answered 500\nwarning: retrying https://h.example/v1?sig=***\n');
  });
});
