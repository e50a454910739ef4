import { isAbsolute, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pLimit from 'p-limit';
import { z } from 'zod';
import { redactUrl } from '../../../evalset/datasets/download.js';
import type { Corpus, JsonValue, Query } from '../../../evalset/types.js';
import { HarnessError } from '../../../harness/errors.js';
import { didYouMean } from '../../../harness/util/suggest.js';
import type { Arm, ArmContext, ArmFactory, IndexStats, ScoredDoc } from '../../types.js';
import { refuseSensitive, storeAll } from '../limits.js';
import { MappingError, mapResults, mappingSchema } from '../mapping.js';
import { scopeName } from '../scope.js';
import { DOCUMENT_VARIABLES, QUERY_VARIABLES, documentValues, queryValues, render, templateProblems } from '../template.js';

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

const stdioServer = z
  .object({
    /** The server program, started once per ablation (found on PATH, or a path). */
    command: z.string().min(1),
    /** Its arguments: in the fingerprint and the manifest, so never a credential (use `env`). */
    args: z.array(z.string()).default([]),
    /** Its working folder, relative to the config file's folder. */
    cwd: z.string().optional(),
    /** Environment variables passed to it from the harness's environment (names only), besides PATH and HOME. */
    env: z.array(z.string()).default([]),
  })
  .strict();

const httpServer = z
  .object({
    /** A streamable HTTP endpoint. No `user:password@`: credentials go in headers. */
    url: z
      .string()
      .url()
      .refine(
        (u) => new URL(u).username === '' && new URL(u).password === '',
        'holds a user:password; send credentials in headers, from environment variables',
      ),
    /** Headers from environment variables (with a prefix such as `Bearer `); their values are never recorded. */
    headers: z.record(z.string(), z.object({ env: z.string().min(1), prefix: z.string().default('') }).strict()).default({}),
  })
  .strict();

const toolCall = (variables: readonly string[], tool: string, args: JsonValue) =>
  z
    .object({
      tool: z.string().min(1).default(tool),
      /** The tool's argument object, with `{{...}}` placeholders. */
      arguments: z.record(z.string(), jsonValue).default(args as Record<string, JsonValue>),
    })
    .strict()
    .superRefine((c, ctx) => {
      for (const m of templateProblems(c.arguments, variables, 'arguments')) {
        const [at, ...rest] = m.split(': ');
        ctx.addIssue({ code: 'custom', path: (at as string).split('.'), message: rest.join(': ') });
      }
    });

const params = z
  .object({
    /** How to reach the server: a program speaking MCP on stdio, or a streamable HTTP URL. */
    server: z.union([stdioServer, httpServer]),
    /** The search tool and its arguments, called once per query. */
    search: toolCall(QUERY_VARIABLES, 'search', { query: '{{query.text}}', topK: '{{topK}}', scope: '{{scope}}' }).default({
      tool: 'search',
      arguments: { query: '{{query.text}}', topK: '{{topK}}', scope: '{{scope}}' },
    }),
    /** Where the hits are in the tool's result (its structured content, else its first text content as JSON). */
    response: mappingSchema.default({ results: '$.results[*]', docId: '$.id', score: '$.score' }),
    /** The store tool, called once per document of each scope; absent when the server holds the corpus already. */
    store: toolCall(DOCUMENT_VARIABLES, 'store', { id: '{{document.id}}', text: '{{document.text}}', scope: '{{scope}}' }).optional(),
    /**
     * The server runs on this machine. Default: true for a stdio server (a process the harness starts here),
     * false for a URL. Only a local server is sent Sensitive documents; a server that is not local counts as
     * sending text off the machine.
     */
    local: z.boolean().optional(),
    /** The server's version as you name it, for the fingerprint (beside the name and version of its handshake). */
    version: z.string().optional(),
    scopePrefix: z.string().default('harness-'),
    /** Tool calls in flight at once. */
    concurrency: z.number().int().min(1).max(64).default(4),
    /** Milliseconds one tool call may take. */
    timeoutMs: z.number().int().positive().default(30_000),
  })
  .strict();

export type McpParams = z.output<typeof params>;

const isStdio = (s: McpParams['server']): s is z.output<typeof stdioServer> => 'command' in s;
const isLocal = (p: McpParams) => p.local ?? isStdio(p.server);
const where = (p: McpParams) => (isStdio(p.server) ? `${p.server.command} (stdio)` : redactUrl(p.server.url));

/** A connected client. The SDK loads only when an MCP arm runs. */
async function connect(id: string, p: McpParams, ctx: ArmContext): Promise<Client> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const client = new Client({ name: 'harness', version: '1' });
  const s = p.server;
  try {
    if (isStdio(s)) {
      const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const env: Record<string, string> = getDefaultEnvironment();
      for (const name of s.env) {
        const v = ctx.env[name];
        if (v === undefined)
          throw new HarnessError(`arm ${id}: server.env names ${name}, which is not set`, { exitCode: 2, hint: 'set it (its value is never printed)' });
        env[name] = v;
      }
      const transport = new StdioClientTransport({ command: s.command, args: s.args, env, stderr: 'pipe', ...(s.cwd === undefined ? {} : { cwd: s.cwd }) });
      const stderr = transport.stderr;
      if (stderr) createInterface({ input: stderr as unknown as NodeJS.ReadableStream }).on('line', (line) => ctx.log.info(`${id} (server stderr): ${line}`));
      await client.connect(transport);
    } else {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.headers)) {
        const value = ctx.env[v.env];
        if (value === undefined)
          throw new HarnessError(`arm ${id}: server.headers.${k} reads ${v.env}, which is not set`, {
            exitCode: 2,
            hint: 'set it (its value is never printed)',
          });
        headers[k] = `${v.prefix}${value}`;
      }
      await client.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers } }));
    }
  } catch (err) {
    if (err instanceof HarnessError) throw err;
    // SDK messages may quote a URL; only the redacted one is printed.
    throw new HarnessError(`arm ${id}: cannot connect to the MCP server ${where(p)}: ${redactMessage((err as Error).message, p)}`, {
      exitCode: 2,
      hint: isStdio(s) ? 'check server.command, args and cwd; run the command by hand to see it start' : 'check that the server is running at server.url',
    });
  }
  return client;
}

function redactMessage(message: string, p: McpParams): string {
  return isStdio(p.server) ? message : message.split(p.server.url).join(redactUrl(p.server.url));
}

/** The tools the server lists; a configured tool it lacks is an error (exit 2) listing them all. */
async function checkTools(id: string, p: McpParams, client: Client): Promise<void> {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  const server = client.getServerVersion();
  for (const [what, call] of [
    ['search', p.search],
    ['store', p.store],
  ] as const) {
    if (call === undefined || names.includes(call.tool)) continue;
    throw new HarnessError(
      `arm ${id}: the MCP server ${server?.name ?? where(p)}${server?.version ? ` ${server.version}` : ''} has no tool "${call.tool}" (params.${what}.tool)${didYouMean(call.tool, names)}\n  its tools:\n${tools.map((t) => `    ${t.name}${t.description ? `: ${t.description}` : ''}`).join('\n') || '    (none)'}`,
      { exitCode: 2, hint: `set params.${what}.tool to one of them` },
    );
  }
}

/** The JSON a tool result carries: its structured content, else its first text content parsed as JSON. */
function resultJson(id: string, tool: string, result: Record<string, unknown>): unknown {
  const content = (result['content'] as { type: string; text?: string }[] | undefined) ?? [];
  const text = content.find((c) => c.type === 'text')?.text;
  if (result['isError'] === true) throw new HarnessError(`arm ${id}: tool ${tool} failed: ${(text ?? '(no message)').slice(0, 300)}`);
  if (result['structuredContent'] !== undefined) return result['structuredContent'];
  if (text === undefined) throw new HarnessError(`arm ${id}: tool ${tool} returned neither structured content nor text`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not quoted: it may hold document text.
    throw new HarnessError(`arm ${id}: tool ${tool} returned text that is not JSON (${text.length} characters)`, {
      hint: 'the response mapping reads JSON; point response at a server that answers with JSON or structured content',
    });
  }
}

/**
 * `mcp`: a Model Context Protocol server (stdio or streamable HTTP, through the official SDK) as an arm. Its
 * search tool is called per query with a templated argument object, its result mapped to (docId, score) by
 * JSONPath; a store tool, when named, loads each scope's documents first. The probe (before any cache lookup)
 * connects, checks the tools and returns the server's name and version from the handshake, so they join the
 * fingerprint: an upgraded server never serves an old run (docs/adr/0021-remote-arms.md).
 */
export const mcpArm: ArmFactory<typeof params> = {
  kind: 'mcp',
  summary: 'a Model Context Protocol server (stdio or streamable HTTP): search tool per query, optional store tool',
  params,
  requires: { packages: ['@modelcontextprotocol/sdk'] },
  resolvePaths: (p, dir) =>
    isStdio(p.server) && p.server.cwd !== undefined && !isAbsolute(p.server.cwd) ? { ...p, server: { ...p.server, cwd: resolve(dir, p.server.cwd) } } : p,
  fingerprint: (p) => ({
    kind: 'mcp',
    v: 1,
    server: (isStdio(p.server)
      ? { command: p.server.command, args: p.server.args }
      : { url: redactUrl(p.server.url), headers: Object.keys(p.server.headers).sort() }) as JsonValue,
    search: p.search,
    response: p.response,
    store: p.store ?? null,
    version: p.version ?? null,
    scopePrefix: p.scopePrefix,
  }),
  theoreticalMinScore: (p) => (p.response.score === undefined ? 0 : undefined),
  sendsTextOffMachine: (p) => !isLocal(p) && p.store !== undefined,
  async probe(id, p, ctx) {
    const client = await connect(id, p, ctx);
    try {
      await checkTools(id, p, client);
      const v = client.getServerVersion();
      return { name: v?.name ?? null, version: v?.version ?? null };
    } finally {
      await client.close();
    }
  },
  create(id, p, ctx): Arm {
    let client: Client | undefined;
    let scope = '';
    const call = async (tool: string, args: JsonValue): Promise<unknown> => {
      const c = client as Client;
      const result = (await c.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { timeout: p.timeoutMs })) as Record<
        string,
        unknown
      >;
      return resultJson(id, tool, result);
    };
    return {
      id,
      concurrency: p.concurrency,
      async index(corpus: Corpus): Promise<IndexStats> {
        client ??= await connect(id, p, ctx);
        scope = scopeName(p.scopePrefix, corpus);
        const store = p.store;
        if (!store) return { documents: corpus.length };
        refuseSensitive(id, `the MCP server ${where(p)}`, corpus, isLocal(p));
        const limit = pLimit(p.concurrency);
        const progress = ctx.log.progress(`${id}: ${store.tool}`, corpus.length);
        await storeAll(corpus, limit, progress, (d) => call(store.tool, render(store.arguments, documentValues(d, scope))));
        return { documents: corpus.length };
      },
      async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
        const answer = await call(p.search.tool, render(p.search.arguments, queryValues(query, topK, scope)));
        try {
          return mapResults(answer, p.response);
        } catch (err) {
          if (!(err instanceof MappingError)) throw err;
          throw new HarnessError(`arm ${id}: the ${p.search.tool} result for query ${query.id} does not fit response: ${err.message}`, {
            hint: 'check the response paths (results, docId, score) against what the tool returns',
          });
        }
      },
      async close() {
        await client?.close();
      },
    };
  },
};
