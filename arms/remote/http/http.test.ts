import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../../harness/testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../../../harness/testing/loopback.js';
import { filesContaining } from '../../../harness/testing/secret.js';
import { writeMemoryEvalSet, writeStudy } from '../../../harness/testing/study.js';
import { tempDir } from '../../../harness/testing/temp.js';

const SECRET = 'sk-memory-loopback-7f3a91c2e8';
const corpus = [
  { id: 'm1', text: 'dog named Biscuit' },
  { id: 'm2', text: 'cat named Tom' },
  { id: 'm3', text: 'dog food brand' },
  { id: 'm4', text: 'Biscuit likes the park', sensitive: true },
];
const queries = [
  { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 3, m4: 1 } },
  { id: 'q2', text: 'cat', stratum: 'exact', qrels: { m2: 2 } },
  { id: 'q3', text: 'food brand', stratum: 'paraphrase', qrels: { m3: 2 } },
];

/** The service's scorer: how many query words a stored document holds (0-hit documents left out). */
const words = (t: string) => t.toLowerCase().split(/\s+/);
function hits(stored: Map<string, string>, q: string, k: number) {
  return [...stored]
    .map(([id, text]) => ({ id, n: words(q).filter((w) => words(text).includes(w)).length }))
    .filter((h) => h.n > 0)
    .sort((a, b) => b.n - a.n || (a.id < b.id ? 1 : -1))
    .slice(0, k);
}

let dir: string;
let server: Loopback;
const stored = new Map<string, string>();
/** When each request reached the server. */
const arrivals: number[] = [];
/** How the service answers index requests: in plain text; keeping only every other one (a lossy store). */
const storeMode = { plain: false, dropEveryOther: false, calls: 0 };
beforeEach(async () => {
  arrivals.length = 0;
  Object.assign(storeMode, { plain: false, dropEveryOther: false, calls: 0 });
  dir = tempDir('harness-http');
  writeMemoryEvalSet(dir, corpus, queries);
  stored.clear();
  server = await startLoopback((req: LoopbackRequest) => {
    arrivals.push(performance.now());
    if (req.headers['x-api-key'] !== SECRET) return { status: 401, body: { error: 'no key' } };
    const b = req.json as { id?: string; text?: string; q?: string; k?: number };
    if (req.path === '/store') {
      storeMode.calls++;
      if (!storeMode.dropEveryOther || storeMode.calls % 2 === 1) stored.set(b.id as string, b.text as string);
      return { body: storeMode.plain ? 'stored' : { ok: true } };
    }
    return { delayMs: 40, body: { data: { hits: hits(stored, b.q as string, b.k as number).map((h) => ({ doc: { id: h.id }, relevance: h.n })) } } };
  });
});
afterEach(async () => {
  await server.close();
});

function config(more: readonly string[] = ['local: true']): string {
  const timeout = more.some((m) => m.startsWith('timeoutMs')) ? [] : ['timeoutMs: 2000'];
  // These tests count the service's requests; the store check's own searches are tested on their own below.
  const check = more.some((m) => m.startsWith('storeCheck')) ? [] : ['storeCheck: { sample: 0 }'];
  return writeStudy(
    dir,
    'h.yaml',
    'http',
    `arms:
  - id: svc
    kind: http
    params:
      search:
        url: ${server.url}/search?tenant=t1
        headers: { X-Api-Key: { env: MEMORY_KEY } }
        body: { q: "{{query.text}}", k: "{{topK}}", scope: "{{scope}}", tag: "q-{{query.id}}" }
      response: { results: "$.data.hits[*]", docId: "$.doc.id", score: "$.relevance" }
      index:
        url: ${server.url}/store
        headers: { X-Api-Key: { env: MEMORY_KEY } }
        body: { id: "{{document.id}}", text: "{{document.text}}", scope: "{{scope}}", title: "{{document.title}}" }
      retries: 2
${[...timeout, ...check, ...more].map((m) => `      ${m}\n`).join('')}compare: { permutations: 100, resamples: 100 }
`,
  );
}

const env = { MEMORY_KEY: SECRET };
const run = (file: string, more: string[] = []) => runCaptured(['ablate', '--config', file, ...more], dir, env);
const reportDir = () => join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);
const searches = () => server.requests.filter((r) => r.path === '/search');

describe('http arm', () => {
  it('fills the templates, maps the answer by JSONPath, records per-query latency, and leaks the key nowhere', async () => {
    const r = await run(config());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // Stored once per document, with the absent title left out rather than sent empty.
    const stores = server.requests.filter((q) => q.path === '/store');
    expect(stores.map((s) => s.json)).toEqual(corpus.map((d) => ({ id: d.id, text: d.text, scope: expect.stringMatching(/^harness-[0-9a-f]{16}$/) })));
    const scope = (stores[0]!.json as { scope: string }).scope;
    expect(searches().map((s) => [s.method, s.query.get('tenant'), s.headers['x-api-key'], s.json])).toEqual(
      queries.map((q) => ['POST', 't1', SECRET, { q: q.text, k: 10, scope, tag: `q-${q.id}` }]),
    );
    const trec = readFileSync(join(reportDir(), 'runs', 'svc.trec'), 'utf8');
    const expected = queries.flatMap((q) =>
      hits(new Map(corpus.map((d) => [d.id, d.text])), q.text, 10).map((h, i) => `${q.id} Q0 ${h.id} ${i + 1} ${h.n} svc`),
    );
    expect(trec.trim().split('\n')).toEqual(expected);
    // Each query's own latency (the server waits 40 ms per search), not a batch's time shared out.
    const report = JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as { costs: Record<string, { queryMsP50: number }> };
    expect(report.costs['svc']!.queryMsP50).toBeGreaterThanOrEqual(35);
    // The credential went to the server and nowhere else: no file, no output, no log line.
    expect(filesContaining([dir], SECRET)).toEqual([]);
    expect([r.out, r.stderr, ...r.log].join('\n')).not.toContain(SECRET);
  });

  it('retries a 429 after its Retry-After, then succeeds; a second run is served from the cache', async () => {
    server.enqueue('/search', { status: 429, headers: { 'retry-after': '0' }, body: { error: 'slow down' } });
    const r = await run(config());
    expect(r.code).toBe(0);
    expect(searches()).toHaveLength(queries.length + 1);
    expect(r.log.join('\n')).toMatch(/arm svc: search query q1: http:\/\/127\.0\.0\.1:\d+\/search answered HTTP 429; retry 1\/2 in 0 ms/);
    const again = await run(config());
    expect(again.out).toMatch(/system runs from cache: 1 hit\(s\), 0 computed/);
    expect(searches()).toHaveLength(queries.length + 1);
  });

  it('abandons an attempt at the timeout and gives up after the retries: exit 1, nothing cached', async () => {
    server.enqueue('/search', { delayMs: 1500, body: {} }, { delayMs: 1500, body: {} }, { delayMs: 1500, body: {} });
    const r = await run(config(['local: true', 'concurrency: 1', 'timeoutMs: 300']));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/arm svc: search query q1: no answer from http:\/\/127\.0\.0\.1:\d+\/search within 300 ms \(gave up after 3 attempt\(s\)\)/);
    const dry = await run(config(['local: true', 'concurrency: 1', 'timeoutMs: 300']), ['--dry-run']);
    expect(dry.out).toMatch(/svc \[retrieve http\] fingerprint \w+: 0\/1 scope run\(s\) cached/);
  });

  it('a malformed answer is a clear error that quotes no part of it, and nothing is cached', async () => {
    server.enqueue('/search', { body: '<html>memory: the secret garden</html>' });
    const r = await run(config(['local: true', 'concurrency: 1']));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/arm svc: search query q1: the answer of http:\/\/127\.0\.0\.1:\d+\/search is not JSON \(38 bytes\)/);
    expect(r.stderr).not.toContain('secret garden');
    // An answer in JSON but not in the mapped shape names the path it missed.
    server.enqueue('/search', { body: { data: { hits: [{ doc: { name: 'm1' }, relevance: 1 }] } } });
    const shape = await run(config(['local: true', 'concurrency: 1']));
    expect(shape.code).toBe(1);
    expect(shape.stderr).toMatch(/the answer to query q1 does not fit response: hit 1 has no string docId at \$\.doc\.id \(found nothing\)/);
    const dry = await run(config(), ['--dry-run']);
    expect(dry.out).toMatch(/0\/1 scope run\(s\) cached/);
  });

  it('refuses to store sensitive documents on a service not declared local, and wants its env vars set (exit 2)', async () => {
    const r = await run(config([]));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /arms\[0\]\.sensitive: system "svc" \(http\) would send text off this machine and the eval set has 1 sensitive document,.*or set arms\[0\]\.params\.local: true if the service runs on this machine/,
    );
    expect(server.requests.filter((q) => q.path === '/store')).toHaveLength(0);
    const unset = await runCaptured(['ablate', '--config', config()], dir, {});
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/headers read the environment variable\(s\) MEMORY_KEY, which are not set/);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps to ratePerSecond across store and search calls', async () => {
    // 4 stores and 3 searches through one bucket of 2 per second (burst 2): at least 5 waits of 500 ms.
    const r = await run(config(['local: true', 'ratePerSecond: 2']));
    expect(r.code).toBe(0);
    expect(arrivals).toHaveLength(7);
    // Without the bucket they would all arrive within the time of one search; the first arrival lags its start
    // by the connection set-up, so the bound allows one wait of slack.
    expect(arrivals[6]! - arrivals[0]!).toBeGreaterThanOrEqual(4 * 500);
  });

  it('refuses a credential written into the config (exit 2)', async () => {
    const file = config();
    writeFileSync(file, readFileSync(file, 'utf8').replace('{ X-Api-Key: { env: MEMORY_KEY } }', `{ X-Api-Key: "${SECRET}" }`));
    const r = await run(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/arms\[0\]\.params\.search\.headers\.X-Api-Key: looks like a credential; write \{ env: VARIABLE \}/);
  });

  it('accepts a store answered in plain text and records the store check; a service that keeps every other store fails it (exit 1)', async () => {
    storeMode.plain = true;
    const ok = await run(config(['local: true', 'storeCheck: { sample: 4 }']));
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8')) as { systems: { indexStats: Record<string, number> }[] };
    expect(manifest.systems[0]!.indexStats).toMatchObject({ storeCheckSampled: 4, storeCheckTop10: 4, storeCheckMissing: 0 });
    Object.assign(storeMode, { dropEveryOther: true, calls: 0 });
    stored.clear();
    const lossy = config(['local: true', 'storeCheck: { sample: 4, seed: 1 }']);
    const r = await run(lossy);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /arm svc: store check failed: 2 of 4 sampled memories were not found by their own text within the top 10 \(rank 1: \d, ranks 2-10: \d, not found: 2: m\d, m\d\)/,
    );
    const dry = await run(lossy, ['--dry-run']);
    expect(dry.out).toMatch(/svc \[retrieve http\] fingerprint \w+: 0\/1 scope run\(s\) cached/);
  });
});
