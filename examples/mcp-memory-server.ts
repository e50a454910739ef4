/**
 * An example MCP memory server, standing in for the one a user already runs beside their agent: two tools,
 * `store` (one memory into a scope) and `search` (a scope's best memories for a query), over the keyword
 * memory of examples/keyword-memory.ts, speaking MCP over stdio with the official SDK.
 *
 *   node dist/examples/mcp-memory-server.js      (built by npm run build; from source: node --import tsx examples/mcp-memory-server.ts)
 *
 * configs/own-system.yaml evaluates it against bm25 and a fused candidate. Its answers carry the hits both as
 * structured content and as JSON text, as servers in the wild do one or the other.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { KeywordMemory } from './keyword-memory.js';

export const SERVER_NAME = 'example-memory';
export const SERVER_VERSION = '1.0.0';

/** The server over `memory`, not yet connected to a transport; `version` stands in for an upgraded release. */
export function createMemoryServer(memory = new KeywordMemory(), version = SERVER_VERSION): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version });
  server.registerTool(
    'store',
    {
      description: 'Store one memory in a scope (replacing one with the same id)',
      inputSchema: { id: z.string(), text: z.string(), scope: z.string().default('default') },
    },
    async ({ id, text, scope }) => {
      memory.store(scope, id, text);
      return { content: [{ type: 'text', text: JSON.stringify({ stored: id, scope, size: memory.size(scope) }) }] };
    },
  );
  server.registerTool(
    'search',
    {
      description: "Search a scope's memories by keywords (BM25)",
      inputSchema: { query: z.string(), topK: z.number().int().positive().default(10), scope: z.string().default('default') },
      outputSchema: { results: z.array(z.object({ id: z.string(), score: z.number() })) },
    },
    async ({ query, topK, scope }) => {
      const results = memory.search(scope, query, topK);
      return { content: [{ type: 'text', text: JSON.stringify({ results }) }], structuredContent: { results } };
    },
  );
  return server;
}

// Run as a program (not imported by a test): serve on stdio until the client closes it.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await createMemoryServer().connect(new StdioServerTransport());
}
