import { isAbsolute, resolve } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pLimit from 'p-limit';
import { z } from 'zod';
import type { Corpus, JsonValue, Query } from '../../../evalset/types.js';
import { HarnessError } from '../../../harness/errors.js';
import { didYouMean } from '../../../harness/util/suggest.js';
import type { Arm, ArmFactory, IndexStats, ScoredDoc } from '../../types.js';
import { refuseSensitive, storeAll, timeoutMsSchema } from '../limits.js';
import {
  HitRanker,
  textMatchOf,
  MappingError,
  type RemoteHit,
  mapResults,
  mappingSchema,
  mapTextResults,
  patternSchema,
  regexSchema,
  responseIdentity,
} from '../mapping.js';
import { scopeName } from '../scope.js';
import { STORE_CHECK_DEFAULT, runStoreCheck, storeCheckSchema } from '../store-check.js';
import { DOCUMENT_VARIABLES, QUERY_VARIABLES, documentValues, queryValues, render, templateProblems } from '../template.js';
import { callFailureKind, connect, isStdio, type McpConnection, serverIdentity, serverSchema, where } from './server.js';

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

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
    server: serverSchema,
    /** The search tool and its arguments, called once per query. */
    search: toolCall(QUERY_VARIABLES, 'search', { query: '{{query.text}}', topK: '{{topK}}', scope: '{{scope}}' }).default({
      tool: 'search',
      arguments: { query: '{{query.text}}', topK: '{{topK}}', scope: '{{scope}}' },
    }),
    /**
     * Where the hits are in the search tool's result: JSONPaths into its structured content, else into its text
     * content parsed as JSON; or, with `pattern`, the matches of a regular expression in its text content.
     * With `text` (or a `(?<text>...)` group), hits are mapped by their text too (docs/arms/remote-responses.md).
     */
    response: mappingSchema
      .extend({ pattern: patternSchema.optional(), empty: regexSchema.optional() })
      .default({ results: '$.results[*]', docId: '$.id', score: '$.score' }),
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
    /** Search calls in flight at once. */
    concurrency: z.number().int().min(1).max(64).default(4),
    /**
     * Store calls in flight at once. Default 1: a server that rewrites one file per call (the official memory
     * server) silently loses parallel stores; raise it only for a server that takes concurrent writes.
     */
    storeConcurrency: z.number().int().min(1).max(64).default(1),
    /** After the stores: a sample of memories searched by their own text; too many missing stops the run. */
    storeCheck: storeCheckSchema.default(STORE_CHECK_DEFAULT),
    /** Milliseconds one tool call may take. */
    timeoutMs: timeoutMsSchema().default(30_000),
  })
  .strict();

export type McpParams = z.output<typeof params>;

const isLocal = (p: McpParams) => p.local ?? isStdio(p.server);
/** How the search reply is read: a regular expression over its text, or JSON (structured content first). */
const mappingMode = (p: McpParams): 'text' | 'json' => (p.response.pattern === undefined ? 'json' : 'text');

/** The tools the server lists; a configured tool it lacks is an error (exit 2) listing them all. */
async function checkTools(id: string, p: McpParams, client: Client): Promise<void> {
  const { tools } = await client.listTools(undefined, { timeout: p.timeoutMs });
  const names = tools.map((t) => t.name);
  const server = client.getServerVersion();
  for (const [what, call] of [
    ['search', p.search],
    ['store', p.store],
  ] as const) {
    if (call === undefined || names.includes(call.tool)) continue;
    throw new HarnessError(
      `arm ${id}: the MCP server ${server?.name ?? where(p.server)}${server?.version ? ` ${server.version}` : ''} has no tool "${call.tool}" (params.${what}.tool)${didYouMean(call.tool, names)}\n  its tools:\n${tools.map((t) => `    ${t.name}${t.description ? `: ${t.description}` : ''}`).join('\n') || '    (none)'}`,
      { exitCode: 2, hint: `set params.${what}.tool to one of them` },
    );
  }
}

type ToolResult = Record<string, unknown>;

/** The text of a tool result's text content items, one after another; undefined when it has none. */
function resultText(result: ToolResult): string | undefined {
  const content = (result['content'] as { type: string; text?: string }[] | undefined) ?? [];
  const texts = content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string);
  return texts.length === 0 ? undefined : texts.join('\n');
}

/** Throws when the server says the call failed (`isError`), quoting the start of its message. */
function checkResult(id: string, tool: string, result: ToolResult): void {
  if (result['isError'] === true) throw new HarnessError(`arm ${id}: tool ${tool} failed: ${(resultText(result) ?? '(no message)').slice(0, 300)}`);
}

/**
 * How a plain-text reply that means "nothing found" starts, when `response.empty` does not say: "No results
 * found for: ...", "No memories found.", "No matching context found", "0 results". Servers that answer hits in
 * JSON often answer an empty search in words (mcp-memory-keeper does).
 */
export const EMPTY_REPLY =
  '^\\s*(nothing (was )?found|(no|0|zero)\\s+(\\S+\\s+){0,2}?(results?|matches|memories|memory|items?|hits|entries|documents|context)\\b)';

/**
 * The JSON a search result carries: its structured content, else its text content parsed as JSON; a plain-text
 * reply matching `response.empty` (default EMPTY_REPLY) is an answer with no hits.
 */
function resultJson(id: string, p: McpParams, result: ToolResult): unknown {
  const tool = p.search.tool;
  if (result['structuredContent'] !== undefined) return result['structuredContent'];
  const text = resultText(result);
  if (text === undefined) throw new HarnessError(`arm ${id}: tool ${tool} returned neither structured content nor text`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    if (new RegExp(p.response.empty ?? EMPTY_REPLY, 'i').test(text)) return NO_HITS;
    // Not quoted: it may hold document text.
    throw new HarnessError(
      `arm ${id}: tool ${tool} returned plain text, not JSON (${text.length} characters), and not a reply params.response.empty recognises as "nothing found"`,
      {
        hint: 'read plain text with params.response.pattern, a regular expression with an (?<id>...) or (?<text>...) group per hit; if the server answers "nothing found" in its own words, set params.response.empty to a regular expression matching them (docs/arms/remote-responses.md)',
      },
    );
  }
}

/** What a "nothing found" reply maps to: no hits, whatever the response paths. */
const NO_HITS = Symbol('no hits');

/** The hits a search result maps to, in the arm's mapping mode; a misfit names the query and the mapping. */
export function searchHits(id: string, p: McpParams, query: Query, result: ToolResult): RemoteHit[] {
  const pattern = p.response.pattern;
  try {
    if (pattern === undefined) {
      const json = resultJson(id, p, result);
      return json === NO_HITS ? [] : mapResults(json, p.response);
    }
    const body = resultText(result);
    if (body === undefined) throw new MappingError('the result has no text content for response.pattern');
    return mapTextResults(body, pattern);
  } catch (err) {
    if (!(err instanceof MappingError)) throw err;
    throw new HarnessError(`arm ${id}: the ${p.search.tool} result for query ${query.id} does not fit response: ${err.message}`, {
      hint:
        pattern === undefined
          ? 'check the response paths (results, docId, text, score) against what the tool returns'
          : 'check response.pattern against what the tool returns',
    });
  }
}

/**
 * A tool call that failed without an answer as a runtime error naming the arm, the server (its URL redacted),
 * the call, what happened (no answer within `timeoutMs`, a reset connection, the connection closed) and how
 * far the run got; the scope's run is then not cached, so a rerun starts it again. The SDK's message is kept,
 * and for a stdio server the end of its stderr, where a crash says why.
 */
function callFailure(id: string, p: McpParams, conn: McpConnection, tool: string, done: { stores: number; searches: number }, err: unknown): HarnessError {
  if (err instanceof HarnessError) return err;
  const kind = callFailureKind(err);
  const raw = (err instanceof Error ? err.message : String(err)).slice(0, 200);
  const message = isStdio(p.server) ? raw : raw.split(p.server.url).join(where(p.server));
  const what = {
    timeout: `did not answer a ${tool} call within ${p.timeoutMs} ms (params.timeoutMs)`,
    reset: `reset the connection during a ${tool} call (${message})`,
    closed: `closed the connection during a ${tool} call (${message})`,
    other: `failed during a ${tool} call (${message})`,
  }[kind];
  const progress = `${done.stores} store and ${done.searches} search call(s) had answered`;
  return new HarnessError(`arm ${id}: the MCP server ${where(p.server)} ${what}; ${progress}${conn.stderr?.describe() ?? ''}`, {
    hint: {
      timeout: "a slow server can be given more with params.timeoutMs (nothing of this arm's run was cached)",
      reset: "the server or something between dropped the connection mid-call: check the server's log and run again (nothing of this arm's run was cached)",
      closed: "the server process exited or dropped the session: read its stderr above, fix it and run again (nothing of this arm's run was cached)",
      other: "check the server (nothing of this arm's run was cached)",
    }[kind],
  });
}

/**
 * `mcp`: a Model Context Protocol server (stdio or streamable HTTP, through the official SDK) as an arm. Its
 * search tool is called per query with a templated argument object, its result mapped to (docId, score) by
 * JSONPath or, for plain-text answers, a regular expression; a store tool, when named, loads each scope's
 * documents first, one call at a time unless `storeConcurrency` says otherwise, and the store check then
 * searches a sample of them by their own text (docs/arms/remote-responses.md). The probe (before any cache
 * lookup) connects, checks the tools and returns the server's name and version from the handshake, so they
 * join the fingerprint: an upgraded server never serves an old run (docs/adr/0021-remote-arms.md).
 */
export const mcpArm: ArmFactory<typeof params> = {
  kind: 'mcp',
  summary: 'a Model Context Protocol server (stdio or streamable HTTP): search tool per query, optional store tool',
  params,
  requires: { packages: ['@modelcontextprotocol/sdk'] },
  resolvePaths: (p, dir) =>
    isStdio(p.server) && p.server.cwd !== undefined && !isAbsolute(p.server.cwd) ? { ...p, server: { ...p.server, cwd: resolve(dir, p.server.cwd) } } : p,
  // v2: stores one at a time by default, and the store check decides whether a run is written at all.
  fingerprint: (p) => ({
    kind: 'mcp',
    v: 2,
    server: serverIdentity(p.server),
    search: p.search,
    response: responseIdentity(p.response),
    mapping: mappingMode(p),
    store: p.store ?? null,
    storeConcurrency: p.store ? p.storeConcurrency : null,
    storeCheck: p.store ? p.storeCheck : null,
    version: p.version ?? null,
    scopePrefix: p.scopePrefix,
  }),
  theoreticalMinScore: (p) => (p.response.score === undefined ? 0 : undefined),
  sendsTextOffMachine: (p) => !isLocal(p) && p.store !== undefined,
  async probe(id, p, ctx) {
    const conn = await connect(id, p.server, ctx, p.timeoutMs);
    try {
      await checkTools(id, p, conn.client).catch((err: unknown) => {
        throw callFailure(id, p, conn, 'tools/list', { stores: 0, searches: 0 }, err);
      });
      const v = conn.client.getServerVersion();
      return { name: v?.name ?? null, version: v?.version ?? null };
    } finally {
      await conn.client.close();
    }
  },
  create(id, p, ctx): Arm {
    let conn: McpConnection | undefined;
    let scope = '';
    const done = { stores: 0, searches: 0 };
    const call = async (tool: string, args: JsonValue): Promise<ToolResult> => {
      const c = conn as McpConnection;
      let result: ToolResult;
      try {
        result = (await c.client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, { timeout: p.timeoutMs })) as ToolResult;
      } catch (err) {
        if (isStdio(p.server) && callFailureKind(err) === 'closed') await c.stderr?.settled();
        throw callFailure(id, p, c, tool, done, err);
      }
      checkResult(id, tool, result);
      if (tool === p.search.tool) done.searches++;
      else done.stores++;
      return result;
    };
    const ranker = new HitRanker(textMatchOf(p.response));
    const search = async (query: Query, topK: number): Promise<readonly ScoredDoc[]> =>
      ranker.rank(searchHits(id, p, query, await call(p.search.tool, render(p.search.arguments, queryValues(query, topK, scope)))));
    return {
      id,
      concurrency: p.concurrency,
      async index(corpus: Corpus): Promise<IndexStats> {
        conn ??= await connect(id, p.server, ctx, p.timeoutMs);
        scope = scopeName(p.scopePrefix, corpus);
        ranker.index(corpus);
        const store = p.store;
        if (!store) return { documents: corpus.length };
        refuseSensitive(id, `the MCP server ${where(p.server)}`, corpus, isLocal(p));
        const progress = ctx.log.progress(`${id}: ${store.tool}`, corpus.length);
        // A store reply's content is not read: whatever it says, the store check asks the search tool.
        await storeAll(corpus, pLimit(p.storeConcurrency), progress, (d) => call(store.tool, render(store.arguments, documentValues(d, scope))));
        const check = await runStoreCheck(id, corpus, p.storeCheck, p.concurrency, search, ctx.log);
        ranker.reset();
        return { documents: corpus.length, ...check };
      },
      search,
      searchStats: () => ranker.stats() ?? {},
      async close() {
        await conn?.client.close();
      },
    };
  },
};
