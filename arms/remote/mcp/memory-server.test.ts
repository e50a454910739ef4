import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadMemory } from '../../../evalset/memory.js';
import { KeywordMemory } from '../../../examples/keyword-memory.js';
import { runCaptured } from '../../../harness/testing/cli.js';
import { type McpHttpServer, serveMcpOverHttp } from '../../../harness/testing/mcp-http.js';
import { filesContaining } from '../../../harness/testing/secret.js';
import { PROJECT_ROOT } from '../../../harness/testing/shared.js';
import { tempDir } from '../../../harness/testing/temp.js';

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
// The official MCP memory server from npm (a devDependency): a knowledge graph kept in one JSONL file.
const OFFICIAL = join(PROJECT_ROOT, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
// Each memory one entity named by its id, its text the one observation; search_nodes answers { entities, relations }.
const OFFICIAL_TOOLS = `store: { tool: create_entities, arguments: { entities: [{ name: "{{document.id}}", entityType: memory, observations: ["{{document.text}}"] }] } },
      search: { tool: search_nodes, arguments: { query: "{{query.text}}" } },
      response: { results: "$.entities[*]", docId: "$.name" }`;

let dir: string;
beforeEach(() => {
  dir = tempDir('harness-mcp-memory');
});

function config(params: string): string {
  const file = join(dir, 'm.yaml');
  writeFileSync(
    file,
    `name: mcp-memory
evalset: { format: memory, path: ${EXAMPLE} }
measures: [nDCG@10]
topK: 10
output: out
cache: cache
arms:
  - id: own
    kind: mcp
    params: {
      ${params}
    }
compare: { permutations: 100, resamples: 100 }
`,
  );
  return file;
}

const reportDir = () => join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);
const manifest = () =>
  JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8')) as {
    systems: { fingerprint: { own: { arm: Record<string, unknown> }; live: unknown }; indexStats: Record<string, number> }[];
  };

/** The entities of the official server's state file: name -> observations. */
function entities(file: string): Map<string, string[]> {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const out = new Map<string, string[]>();
  for (const l of lines) {
    const e = JSON.parse(l) as { type: string; name: string; observations: string[] };
    if (e.type === 'entity') out.set(e.name, e.observations);
  }
  return out;
}

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true }).map((e) => relative(root, join(e.parentPath, e.name)));
}

describe('the official MCP memory server (@modelcontextprotocol/server-memory) over stdio', () => {
  it('with default settings keeps every one of the 351 memories, passes the store check, and the ablation reports its scores', async () => {
    const state = join(dir, 'memory.jsonl');
    const server = `server: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(OFFICIAL)}], env: { MEMORY_FILE_PATH: ${JSON.stringify(state)} } },`;
    const r = await runCaptured(['ablate', '--config', config(`${server}\n      ${OFFICIAL_TOOLS}`)], dir, { PATH: process.env['PATH'] ?? '' });
    expect(r.code).toBe(0);
    const es = await loadMemory(EXAMPLE);
    const kept = entities(state);
    expect(kept.size).toBe(351);
    for (const d of es.documents) expect(kept.get(d.id)).toEqual([d.text]);
    const system = manifest().systems[0]!;
    // Substring search finds each sampled memory by its own text (rank 1 unless its text is inside another's).
    expect(system.indexStats).toMatchObject({ documents: 351, storeCheckSampled: 20, storeCheckTop10: 20, storeCheckMissing: 0 });
    expect(system.fingerprint.live).toEqual({ name: 'memory-server', version: expect.any(String) });
    expect(system.fingerprint.own.arm).toMatchObject({ mapping: 'json', storeConcurrency: 1, storeCheck: { sample: 20, maxLoss: 0.05, seed: 0 } });
    // Its search is substring matching: whole questions match no memory, so the run is empty and scores 0.
    expect(r.out).toMatch(/^ {2}own\s+0\.0000/m);
    expect(readFileSync(join(reportDir(), 'runs', 'own.trec'), 'utf8')).toBe('');
    expect(readdirSync(reportDir())).toContain('report.md');
    // An empty run is never scored silently: a serious warning, in report.json and on stderr, names the system.
    const report = JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as { warnings: { code: string; severity: string; subject: string }[] };
    expect(report.warnings).toContainEqual(expect.objectContaining({ code: 'empty-results', severity: 'serious', subject: 'own' }));
    expect([...r.log, r.stderr].join('\n')).toMatch(/own.*its search returns nothing for most queries/);
    // Its store check found every sampled memory, so the hint points at the search, not at an empty store.
    expect([...r.log, r.stderr].join('\n')).toMatch(/own.*the store is not empty \(its store check found 20 of 20 sampled memories by their own text\)/);
  });

  it('takes a server env value from the harness environment ({ fromEnv }) that reaches the server and nothing else', async () => {
    // The state file's path is the secret: the server must receive it, and no output, report or cache may hold it.
    const secret = join(dir, 'state-5e81c0d4b7a2.jsonl');
    const server = `server: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(OFFICIAL)}], env: { MEMORY_FILE_PATH: { fromEnv: HARNESS_MEMORY_STATE } } },`;
    const env = { PATH: process.env['PATH'] ?? '', HARNESS_MEMORY_STATE: secret };
    const r = await runCaptured(['ablate', '--config', config(`${server}\n      ${OFFICIAL_TOOLS}`)], dir, env);
    expect(r.code).toBe(0);
    expect(entities(secret).size).toBe(351);
    expect(manifest().systems[0]!.fingerprint.own.arm).toMatchObject({ server: { env: { MEMORY_FILE_PATH: 'fromEnv:HARNESS_MEMORY_STATE' } } });
    const token = '5e81c0d4b7a2';
    expect(filesContaining([join(dir, 'out'), join(dir, 'cache')], token)).toEqual([]);
    expect([...filesUnder(join(dir, 'out')), ...filesUnder(join(dir, 'cache'))].filter((f) => f.includes(token))).toEqual([]);
    expect([r.out, r.stderr, ...r.log].join('\n')).not.toContain(token);
    // Unset, it is named by its config path and variable, and nothing is started.
    const unset = await runCaptured(['ablate', '--config', join(dir, 'm.yaml')], dir, { PATH: env.PATH });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('arm own: params.server.env.MEMORY_FILE_PATH reads the environment variable HARNESS_MEMORY_STATE, which is not set');
  });
});

/** A loopback MCP server over streamable HTTP whose tools answer in plain text, and may drop every other store. */
function servePlainTextMemory(opts: { dropEveryOther: boolean }): Promise<McpHttpServer> {
  const memory = new KeywordMemory();
  let stores = 0;
  const make = () => {
    const server = new McpServer({ name: 'plain-memory', version: '0.3.1' });
    server.registerTool('remember', { inputSchema: { id: z.string(), text: z.string() } }, async ({ id, text }) => {
      stores++;
      if (!opts.dropEveryOther || stores % 2 === 1) memory.store('all', id, text);
      return { content: [{ type: 'text', text: `Remembered ${id}.` }] };
    });
    server.registerTool('recall', { inputSchema: { query: z.string(), limit: z.number() } }, async ({ query, limit }) => {
      const hits = memory.search('all', query, limit);
      const text = hits.length === 0 ? 'No memories found.' : hits.map((h) => `- [${h.id}] (score ${h.score})`).join('\n');
      return { content: [{ type: 'text', text }] };
    });
    return server;
  };
  return serveMcpOverHttp(make);
}

describe('a server that answers in plain text', () => {
  let server: { url: string; close(): Promise<void> } | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const TOOLS = `store: { tool: remember, arguments: { id: "{{document.id}}", text: "{{document.text}}" } },
      search: { tool: recall, arguments: { query: "{{query.text}}", limit: "{{topK}}" } },
      response: { pattern: '^- \\[(?<id>[^\\]]+)\\] \\(score (?<score>[-0-9.e]+)\\)$' }, local: true`;

  it('is loaded (a plain-text store reply is not read) and searched through response.pattern', async () => {
    server = await servePlainTextMemory({ dropEveryOther: false });
    const r = await runCaptured(['ablate', '--config', config(`server: { url: ${JSON.stringify(server.url)} },\n      ${TOOLS}`)], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const system = manifest().systems[0]!;
    expect(system.indexStats).toMatchObject({ storeCheckSampled: 20, storeCheckMissing: 0 });
    expect(system.fingerprint.own.arm).toMatchObject({ mapping: 'text' });
    expect(system.fingerprint.live).toEqual({ name: 'plain-memory', version: '0.3.1' });
    // The hits and scores are those of the same retriever called in-process.
    const es = await loadMemory(EXAMPLE);
    const local = new KeywordMemory();
    for (const d of es.documents) local.store('all', d.id, d.text);
    const q = es.queries.find((x) => x.id === 'qe01')!;
    const lines = readFileSync(join(reportDir(), 'runs', 'own.trec'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('qe01 '));
    expect(lines).toEqual(local.search('all', q.text, 10).map((h, i) => `qe01 Q0 ${h.id} ${i + 1} ${String(h.score)} own`));
  });

  it('that keeps every other store fails the store check (exit 1) with the counts, before any score is written or cached', async () => {
    server = await servePlainTextMemory({ dropEveryOther: true });
    const file = config(`server: { url: ${JSON.stringify(server.url)} },\n      ${TOOLS}`);
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /arm own: store check failed: (\d+) of 20 sampled memories were not found by their own text within the top 10 \(rank 1: \d+, ranks 2-10: \d+, not found: \1: m\d+/,
    );
    const missing = Number(/failed: (\d+) of 20/.exec(r.stderr)?.[1]);
    expect(missing).toBeGreaterThan(1);
    expect(r.stderr).toContain('leave params.storeConcurrency at 1');
    expect(readdirSync(dir)).not.toContain('out');
    const dry = await runCaptured(['ablate', '--config', file, '--dry-run'], dir);
    expect(dry.out).toMatch(/own \[retrieve mcp\] fingerprint \w+: 0\/1 scope run\(s\) cached/);
  });
});

describe('server config problems are named at their path, with the accepted shape (exit 2)', () => {
  const bad = async (server: string) => (await runCaptured(['ablate', '--config', config(`server: ${server}`)], dir)).stderr;

  it('an env value that is neither a string nor { fromEnv }, a credential written as a value, an unknown key', async () => {
    expect(await bad('{ command: node, env: { MEMORY_FILE_PATH: 3 } }')).toContain(
      'arms[0].params.server.env.MEMORY_FILE_PATH: expected a string or { fromEnv: NAME }',
    );
    expect(await bad('{ command: node, env: { API_KEY: sk-live-1234 } }')).toContain(
      'arms[0].params.server.env.API_KEY: looks like a credential; write { fromEnv: VARIABLE } instead of its value',
    );
    const leaked = await bad('{ command: node, env: { API_KEY: sk-live-1234 } }');
    expect(leaked).not.toContain('sk-live-1234');
    expect(await bad('{ command: node, env: { KEY: { fromEnv: 7 } } }')).toContain('arms[0].params.server.env.KEY: expected a string or { fromEnv: NAME }');
    expect(await bad('{ command: node, env: [OK_NAME, "not a name"] }')).toContain('arms[0].params.server.env[1]: is not an environment variable name');
    expect(await bad('{ command: node, cdw: . }')).toContain('arms[0].params.server.cdw: unknown key "cdw"; did you mean "cwd"?');
    expect(await bad('{ url: "http://127.0.0.1:1/mcp", header: {} }')).toContain('arms[0].params.server.header: unknown key "header"');
  });
});
