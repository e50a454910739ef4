import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runCaptured } from '../../harness/testing/cli.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';
import { writeMemoryEvalSet, writeStudy } from '../../harness/testing/study.js';
import { tempDir } from '../../harness/testing/temp.js';

/**
 * How remote arms fail when the other side misbehaves: each failure is named for what it is (a handshake
 * that never came, a reset connection, a flood of stderr, a timeout no timer can hold), within bounded time.
 */

const corpus = [
  { id: 'm1', text: 'Alex adopted a beagle named Biscuit' },
  { id: 'm2', text: 'Alex runs every Tuesday along the river' },
];
const queries = [{ id: 'q1', text: 'which dog', stratum: 'exact', qrels: { m1: 2 } }];

let dir: string;
let servers: Server[] = [];
beforeEach(() => {
  dir = tempDir('harness-remote-failures');
  writeMemoryEvalSet(dir, corpus, queries);
});
afterEach(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  servers = [];
});

function config(kind: string, params: string): string {
  return writeStudy(
    dir,
    'c.yaml',
    'failures',
    `arms:
  - { id: own, kind: ${kind}, params: { ${params} } }
compare: { permutations: 100, resamples: 100 }
`,
  );
}

const hostile = (...args: string[]) =>
  `server: { command: ${JSON.stringify(process.execPath)}, args: [arms/remote/mcp/fixtures/hostile-server.mjs, ${args.join(', ')}], cwd: ${JSON.stringify(PROJECT_ROOT)} }`;

/** A loopback HTTP server; `handle` may reset the socket instead of answering. */
async function serve(handle: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, body: string) => void): Promise<string> {
  const s = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += String(c)));
    req.on('end', () => handle(req, res, body));
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('the mcp handshake', () => {
  it('a server that never answers initialize fails at params.timeoutMs (exit 1), not at the SDK default of 60 s', async () => {
    const t0 = performance.now();
    const r = await runCaptured(['ablate', '--config', config('mcp', `${hostile('silent')}, timeoutMs: 1500`)], dir);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`arm own: the MCP server ${process.execPath} (stdio) did not answer the handshake (initialize) within 1500 ms`);
    expect(r.stderr).toMatch(/hint: .*params\.timeoutMs/);
  });

  it('a server flooding stderr gets 64 KiB of it logged, the rest counted, and its end quoted in the error', async () => {
    const r = await runCaptured(['ablate', '--config', config('mcp', `${hostile('flood', "'4'")}, timeoutMs: 1500`)], dir);
    expect(r.code).toBe(1);
    const logged = r.log.join('\n').length;
    expect(logged).toBeGreaterThan(60 * 1024);
    expect(logged).toBeLessThan(80 * 1024);
    expect(r.log.join('\n')).toContain('own (server stderr): more than 64 KiB of stderr; the rest is counted, not logged');
    const dropped = Number(/; (\d+) characters of its stderr were not logged/.exec(r.stderr)?.[1]);
    expect(dropped).toBeGreaterThan(1_000_000);
    expect(r.stderr.length).toBeLessThan(4096);
  });
});

describe('an mcp tool call', () => {
  it('that gets no answer fails at params.timeoutMs (exit 1), named as a timeout of that call', async () => {
    const url = await serve((req, res, body) => {
      if (body.includes('"tools/call"')) return; // never answered
      const server = new McpServer({ name: 'stalling', version: '1' });
      server.registerTool('search', { inputSchema: { query: z.string() } }, async () => ({ content: [{ type: 'text', text: '{"results":[]}' }] }));
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      void server.connect(t).then(() => t.handleRequest(req, res, body === '' ? undefined : JSON.parse(body)));
    });
    const t0 = performance.now();
    const r = await runCaptured(['ablate', '--config', config('mcp', `server: { url: "${url}/mcp" }, timeoutMs: 800`)], dir);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /arm own: the MCP server http:\/\/127\.0\.0\.1:\d+\/mcp did not answer a search call within 800 ms \(params\.timeoutMs\); 0 store and 0 search call\(s\) had answered/,
    );
  });
});

describe('timeouts longer than a Node.js timer can hold (2^31 - 1 ms)', () => {
  it.each([
    ['mcp', `${hostile('silent')}`],
    ['http', 'search: { url: "http://127.0.0.1:1/search" }'],
    ['command', `command: ${JSON.stringify(process.execPath)}`],
  ])('are refused for the %s arm when the config loads (exit 2), naming the key', async (kind, params) => {
    const r = await runCaptured(['ablate', '--config', config(kind, `${params}, timeoutMs: 2147483648`)], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('arms[0].params.timeoutMs: must be at most 2147483647 (about 24.8 days), the longest timer Node.js can set');
  });

  it('the longest one a timer holds waits for the answer instead of failing at once', async () => {
    const url = await serve((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ id: 'm1' }])), 50);
    });
    const r = await runCaptured(['ablate', '--config', config('http', `search: { url: "${url}/search" }, timeoutMs: 2147483647, retries: 0`)], dir);
    expect(r.stderr).not.toMatch(/within|error/);
    expect(r.code).toBe(0);
  });
});

describe('a connection reset', () => {
  it('is reported by the http arm as a reset naming the URL without its query, not as a timeout', async () => {
    const url = await serve((req) => req.socket.resetAndDestroy());
    const r = await runCaptured(['ablate', '--config', config('http', `search: { url: "${url}/search?tenant=t1" }, retries: 1, timeoutMs: 5000`)], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /arm own: search query q1: http:\/\/127\.0\.0\.1:\d+\/search reset the connection mid-request \(ECONNRESET\) \(gave up after 2 attempt\(s\)\)/,
    );
    expect(r.stderr).not.toMatch(/within \d+ ms|tenant=/);
  });

  it('is reported by the mcp arm over streamable HTTP as a reset, naming the tool and the redacted URL', async () => {
    const url = await serve((req, res, body) => {
      if (body.includes('"tools/call"')) return void req.socket.resetAndDestroy();
      const server = new McpServer({ name: 'resetting', version: '1' });
      server.registerTool('search', { inputSchema: { query: z.string() } }, async () => ({ content: [{ type: 'text', text: '{"results":[]}' }] }));
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      void server.connect(t).then(() => t.handleRequest(req, res, body === '' ? undefined : JSON.parse(body)));
    });
    const r = await runCaptured(['ablate', '--config', config('mcp', `server: { url: "${url}/mcp" }, timeoutMs: 5000`)], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/arm own: the MCP server http:\/\/127\.0\.0\.1:\d+\/mcp\S* reset the connection during a search call/);
    expect(r.stderr).not.toMatch(/did not answer|within \d+ ms/);
  });
});
