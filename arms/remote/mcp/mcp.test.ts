import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMemory } from '../../../evalset/memory.js';
import { KeywordMemory } from '../../../examples/keyword-memory.js';
import { filesContaining } from '../../../harness/testing/secret.js';
import { runCaptured } from '../../../harness/testing/cli.js';
import { PROJECT_ROOT } from '../../../harness/testing/shared.js';
import { type McpHttpServer, serveMemoryOverHttp } from '../../../harness/testing/mcp-http.js';
import { tempDir } from '../../../harness/testing/temp.js';

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
// The MCP server under test: written with the same SDK (McpServer, stdio transport), a keyword memory with
// `store` and `search` tools; the repository's example, so the config that shows the pattern runs it too.
const SERVER = `{ command: ${JSON.stringify(process.execPath)}, args: [--import, tsx, examples/mcp-memory-server.ts], cwd: ${JSON.stringify(PROJECT_ROOT)} }`;

let dir: string;
beforeEach(() => {
  dir = tempDir('harness-mcp');
});

function config(params: string, server = SERVER): string {
  const file = join(dir, 'm.yaml');
  writeFileSync(
    file,
    `name: mcp
evalset: { format: memory, path: ${EXAMPLE} }
measures: [nDCG@10]
topK: 10
output: out
cache: cache
arms:
  - { id: own, kind: mcp, params: { server: ${server}${params} } }
compare: { permutations: 100, resamples: 100 }
`,
  );
  return file;
}

const reportDir = () => join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);

describe('mcp arm', () => {
  it('loads the example through the store tool, searches it, and its run equals the same retriever called in-process', async () => {
    const r = await runCaptured(['ablate', '--config', config(', store: { tool: store }')], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const es = await loadMemory(EXAMPLE);
    const memory = new KeywordMemory();
    for (const d of es.documents) memory.store('all', d.id, d.text);
    const expected = es.queries
      .map((q) => q.id)
      .sort()
      .flatMap((qid) => {
        const q = es.queries.find((x) => x.id === qid)!;
        return memory.search('all', q.text, 10).map((h, i) => `${qid} Q0 ${h.id} ${i + 1} ${String(h.score)} own`);
      });
    expect(expected.length).toBeGreaterThan(500);
    expect(
      readFileSync(join(reportDir(), 'runs', 'own.trec'), 'utf8')
        .trim()
        .split('\n'),
    ).toEqual(expected);
    // The handshake's identity is in the fingerprint the manifest records.
    const manifest = JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8')) as { systems: { fingerprint: { live?: unknown } }[] };
    expect(manifest.systems[0]!.fingerprint.live).toEqual({ name: 'example-memory', version: '1.0.0' });
  });

  it('a tool the server does not have is an error (exit 2) listing the tools it has, before anything is stored', async () => {
    const r = await runCaptured(['ablate', '--config', config(', store: { tool: store }, search: { tool: serch }')], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('arm own: the MCP server example-memory 1.0.0 has no tool "serch" (params.search.tool); did you mean "search"?');
    expect(r.stderr).toContain(
      "  its tools:\n    store: Store one memory in a scope (replacing one with the same id)\n    search: Search a scope's memories by keywords (BM25)",
    );
  });

  it('a tool call the server rejects fails the run (exit 1) with the server message, and nothing is cached', async () => {
    const file = config(', store: { tool: store }, search: { tool: search, arguments: { query: "{{query.text}}", topK: "ten" } }');
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/arm own: tool search failed: .*topK/s);
    const dry = await runCaptured(['ablate', '--config', file, '--dry-run'], dir);
    expect(dry.out).toMatch(/own \[retrieve mcp\] fingerprint \w+: 0\/1 scope run\(s\) cached/);
  });

  it('without a store tool nothing is sent: a fresh server then knows no documents and returns empty rankings', async () => {
    const r = await runCaptured(['ablate', '--config', config('')], dir);
    expect(r.code).toBe(0);
    expect(readFileSync(join(reportDir(), 'runs', 'own.trec'), 'utf8')).toBe('');
  });
});

describe('mcp arm over streamable HTTP', () => {
  const SECRET = 'mcp-bearer-loopback-5d2c7a19';
  let server: McpHttpServer;
  let url: string;
  const memory = new KeywordMemory();
  beforeEach(async () => {
    // The same example server, served statelessly over streamable HTTP behind a bearer credential.
    server = await serveMemoryOverHttp(memory, { authorize: (req) => req.headers.authorization === `Bearer ${SECRET}` });
    url = server.url;
  });
  afterEach(() => server.close());
  const httpConfig = (extra: string) =>
    config(`, store: { tool: store }${extra}`, `{ url: ${JSON.stringify(url)}, headers: { Authorization: { env: MEMORY_TOKEN, prefix: "Bearer " } } }`);

  it('stores and searches through a URL with a bearer credential from the environment that reaches no file or output', async () => {
    const r = await runCaptured(['ablate', '--config', httpConfig(', local: true')], dir, { MEMORY_TOKEN: SECRET });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const es = await loadMemory(EXAMPLE);
    const q = es.queries.find((x) => x.id === 'qe01')!;
    const local = new KeywordMemory();
    for (const d of es.documents) local.store('all', d.id, d.text);
    const lines = readFileSync(join(reportDir(), 'runs', 'own.trec'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('qe01 '));
    expect(lines).toEqual(local.search('all', q.text, 10).map((h, i) => `qe01 Q0 ${h.id} ${i + 1} ${String(h.score)} own`));
    expect(filesContaining([dir], SECRET)).toEqual([]);
    expect([r.out, r.stderr, ...r.log].join('\n')).not.toContain(SECRET);
  });

  it('a URL server is not local unless the config says so: sensitive documents are refused (exit 2) before any store call', async () => {
    const r = await runCaptured(['ablate', '--config', httpConfig('')], dir, { MEMORY_TOKEN: SECRET });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /arms\[0\]\.sensitive: system "own" \(mcp\) would send text off this machine and the eval set has \d+ sensitive documents.*or set arms\[0\]\.params\.local: true if the service runs on this machine/,
    );
    expect(memory.size('all')).toBe(0);
  });
});

describe('configs/own-system.yaml', () => {
  it('runs the user-server pattern offline: the MCP server against bm25 and the fused candidate, gated; --refresh recomputes it', async () => {
    // A copy beside the example and the server, so the report and cache land in the temp folder.
    cpSync(join(PROJECT_ROOT, 'configs', 'own-system.yaml'), join(dir, 'own-system.yaml'));
    const text = readFileSync(join(dir, 'own-system.yaml'), 'utf8')
      .replace('path: ../evalset/examples/alex-memory', `path: ${EXAMPLE}`)
      .replace('cwd: ..', `cwd: ${JSON.stringify(PROJECT_ROOT)}`)
      .replace('output: ../reports', 'output: out')
      .replace('cache: ../.cache', 'cache: cache');
    writeFileSync(join(dir, 'own-system.yaml'), text);
    const env = { PATH: process.env['PATH'] ?? '' };
    const r = await runCaptured(['ablate', '--config', 'own-system.yaml'], dir, env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {2}own\s+\d\.\d{4}/m);
    expect(r.out).toMatch(/^ {2}bm25\s+\d\.\d{4}/m);
    expect(r.out).toMatch(/^ {2}own\+bm25\s+\d\.\d{4}/m);
    expect(r.out).toMatch(/^gate: (ADOPT|REJECT|INCONCLUSIVE): /m);
    expect(r.out).toMatch(/system runs from cache: 0 hit\(s\), 3 computed/);
    // A rerun is free; --refresh own asks the server again, and recomputes the fusion over it, not bm25.
    const again = await runCaptured(['ablate', '--config', 'own-system.yaml'], dir, env);
    expect(again.out).toMatch(/system runs from cache: 3 hit\(s\), 0 computed/);
    const refreshed = await runCaptured(['ablate', '--config', 'own-system.yaml', '--refresh', 'own'], dir, env);
    expect(refreshed.code).toBe(0);
    expect(refreshed.out).toMatch(/system runs from cache: 1 hit\(s\), 2 computed/);
    const unknown = await runCaptured(['ablate', '--config', 'own-system.yaml', '--refresh', 'onw'], dir, env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--refresh: "onw" is not a system of own-system\.yaml; did you mean "own"\?/);
  });
});

describe('a server that dies mid-run', () => {
  it('is a runtime error naming the arm, the server, the call and how far the run got, and nothing is cached', async () => {
    // 20 store-check searches and 10 queries answered, then the process exits.
    const dying = `{ command: ${JSON.stringify(process.execPath)}, args: [arms/remote/mcp/fixtures/dying-server.mjs, '30'], cwd: ${JSON.stringify(PROJECT_ROOT)} }`;
    const file = config(', store: { tool: store }, concurrency: 1', dying);
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /arm own: the MCP server .* \(stdio\) closed the connection during a search call \(MCP error -32000: Connection closed\); 351 store and 30 search call\(s\) had answered/,
    );
    expect(r.stderr).toMatch(/hint: the server process exited/);
    expect(r.stderr).not.toMatch(/unexpected failure/);
    expect(readdirSync(dir)).not.toContain('out');
    const runs = join(dir, 'cache', 'run');
    // No run-cache entry at all: the scope's run failed, so nothing of it is stored.
    expect(existsSync(runs) ? readdirSync(runs, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()) : []).toEqual([]);
  });
});
