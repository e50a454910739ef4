import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted HTTP server on 127.0.0.1 for tests of everything that talks to a service: hosted embedding and
 * chat APIs through their real SDKs, HTTP arms, model downloads. Tests own the replies, so retries, 429s with
 * Retry-After, malformed bodies and timeouts are reproducible without a network.
 */

export interface LoopbackRequest {
  readonly method: string;
  /** Path without the query string, e.g. `/v1/embeddings`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The body parsed as JSON when it is JSON, else undefined. */
  readonly json: unknown;
}

export interface LoopbackReply {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** A string or Buffer is sent as is; anything else as JSON. */
  readonly body?: unknown;
  /** Wait this long before answering (timeouts). */
  readonly delayMs?: number;
}

export type LoopbackHandler = (req: LoopbackRequest) => LoopbackReply | Promise<LoopbackReply>;

export interface Loopback {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: LoopbackRequest[];
  /** Queue one-shot replies for `path`; they are used, in order, before the handler is asked. */
  enqueue(path: string, ...replies: LoopbackReply[]): void;
  close(): Promise<void>;
}

export async function startLoopback(handler: LoopbackHandler): Promise<Loopback> {
  const requests: LoopbackRequest[] = [];
  const queued = new Map<string, LoopbackReply[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = body === '' ? undefined : JSON.parse(body);
        } catch {
          json = undefined;
        }
        const request: LoopbackRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body,
          json,
        };
        requests.push(request);
        let reply: LoopbackReply;
        try {
          reply = queued.get(url.pathname)?.shift() ?? (await handler(request));
        } catch (err) {
          reply = { status: 500, body: { error: String(err) } };
        }
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        if (res.destroyed) return;
        const raw = reply.body;
        const isRaw = typeof raw === 'string' || Buffer.isBuffer(raw);
        const payload = raw === undefined ? '' : isRaw ? raw : JSON.stringify(raw);
        res.writeHead(reply.status ?? 200, {
          ...(isRaw || raw === undefined ? {} : { 'content-type': 'application/json' }),
          ...reply.headers,
        });
        res.end(payload);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue(path, ...replies) {
      queued.set(path, [...(queued.get(path) ?? []), ...replies]);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
