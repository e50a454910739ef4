import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { KeywordMemory } from '../../examples/keyword-memory.js';
import { createMemoryServer } from '../../examples/mcp-memory-server.js';

/** The example MCP memory server served statelessly over streamable HTTP on 127.0.0.1, for tests. */
export interface McpHttpServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  close(): Promise<void>;
}

export interface McpHttpOptions {
  /** The handshake version of each new session (read per request, so a test can upgrade the server). */
  readonly version?: () => string;
  /** Refuse a request with 401 unless this says yes (a bearer credential, say). */
  readonly authorize?: (req: IncomingMessage) => boolean;
}

/** Any MCP server (a new one per request, stateless) served over streamable HTTP on 127.0.0.1, for tests. */
export async function serveMcpOverHttp(make: () => McpServer, opts: Pick<McpHttpOptions, 'authorize'> = {}): Promise<McpHttpServer> {
  const http: Server = createServer((req, res) => {
    if (opts.authorize !== undefined && !opts.authorize(req)) {
      res.writeHead(401).end();
      return;
    }
    void (async () => {
      const server = make();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
    },
  };
}

/** The example MCP memory server over streamable HTTP. */
export function serveMemoryOverHttp(memory: KeywordMemory, opts: McpHttpOptions = {}): Promise<McpHttpServer> {
  return serveMcpOverHttp(() => createMemoryServer(memory, opts.version?.()), opts);
}
