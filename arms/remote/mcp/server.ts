import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { urlCredentialProblem } from '../../../harness/util/redact.js';
import { redactUrl } from '../../../evalset/datasets/download.js';
import type { JsonValue } from '../../../evalset/types.js';
import { HarnessError } from '../../../harness/errors.js';
import { didYouMean } from '../../../harness/util/suggest.js';
import type { ArmContext } from '../../types.js';
import { BoundedStderr } from '../stderr.js';

/**
 * How the mcp arm reaches its server: a program it starts on stdio (with the environment and working folder a
 * user would give it), or a streamable HTTP URL. Values read from the harness's environment (`fromEnv`, header
 * `env`) are secrets: they reach the server and nothing else (not the fingerprint, the manifest or a message).
 */

/** Environment variable names whose values are credentials: only `{ fromEnv }` may give them. */
const CREDENTIAL_NAME = /key|token|secret|password|passwd|credential|auth/i;
const ENV_NAME = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'is not an environment variable name (letters, digits, _)');

const fromEnv = z.object({ fromEnv: ENV_NAME }).strict();
const envValue = z.union([z.string(), fromEnv], { error: 'expected a string or { fromEnv: NAME } (a variable of the harness environment)' });

/**
 * `value` parsed by the branch of `union` that `choose` names, its problems forwarded at their own paths: a
 * zod union that fails reports only "Invalid input" at its own path, which names neither key nor shape.
 */
function byShape<T extends z.ZodType>(choose: (v: unknown) => z.ZodObject | z.ZodType, union: T) {
  return z.preprocess((v, ctx) => {
    const branch = choose(v);
    const r = branch.safeParse(v);
    if (r.success) return v;
    const known = branch instanceof z.ZodObject ? Object.keys(branch.shape) : [];
    for (const issue of r.error.issues) {
      if (issue.code !== 'unrecognized_keys') ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
      else
        for (const key of issue.keys)
          ctx.addIssue({
            code: 'custom',
            path: [...issue.path, key],
            message: `unknown key "${key}"${didYouMean(key, known)}${issue.path.length === 0 ? ` (known: ${known.join(', ')})` : ''}`,
          });
    }
    return v;
  }, union);
}

const envList = z.array(ENV_NAME);
const envMap = z.record(ENV_NAME, envValue).superRefine((env, ctx) => {
  for (const [name, v] of Object.entries(env))
    if (typeof v === 'string' && CREDENTIAL_NAME.test(name))
      ctx.addIssue({ code: 'custom', path: [name], message: 'looks like a credential; write { fromEnv: VARIABLE } instead of its value' });
});

const stdioServer = z
  .object({
    /** The server program, started once per ablation (found on PATH, or a path). */
    command: z.string().min(1),
    /** Its arguments: in the fingerprint and the manifest, so never a credential (use `env` with `fromEnv`). */
    args: z.array(z.string()).default([]),
    /** Its working folder, relative to the config file's folder. */
    cwd: z.string().optional(),
    /**
     * Its environment besides PATH and HOME: `{ NAME: value }` (in the fingerprint) or `{ NAME: { fromEnv: VAR } }`
     * (the harness's VAR, never recorded), or the older list of names passed through from the harness.
     */
    env: byShape((v) => (Array.isArray(v) ? envList : envMap), z.union([envList, envMap])).default({}),
  })
  .strict();

const httpServer = z
  .object({
    /** A streamable HTTP endpoint. No `user:password@`: credentials go in headers. */
    url: z
      .string()
      .url()
      .superRefine((u, ctx) => {
        const credential = urlCredentialProblem(u, 'send credentials in headers, from environment variables');
        if (credential !== undefined) ctx.addIssue({ code: 'custom', message: credential });
      }),
    /** Headers from environment variables (with a prefix such as `Bearer `); their values are never recorded. */
    headers: z.record(z.string(), z.object({ env: z.string().min(1), prefix: z.string().default('') }).strict()).default({}),
  })
  .strict();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const serverSchema = byShape((v) => (isObject(v) && 'url' in v ? httpServer : stdioServer), z.union([stdioServer, httpServer]));
export type Server = z.output<typeof serverSchema>;
export type StdioServer = z.output<typeof stdioServer>;

export const isStdio = (s: Server): s is StdioServer => 'command' in s;
export const where = (s: Server) => (isStdio(s) ? `${s.command} (stdio)` : redactUrl(s.url));

/** The server's entries in the fingerprint: literal env values, and only the names where values are secrets. */
export function serverIdentity(s: Server): JsonValue {
  if (!isStdio(s)) return { url: redactUrl(s.url), headers: Object.keys(s.headers).sort() };
  const env: Record<string, string> = {};
  for (const [name, v] of envEntries(s)) env[name] = typeof v === 'string' ? v : `fromEnv:${v.fromEnv}`;
  const sorted = Object.fromEntries(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { command: s.command, args: s.args, env: sorted };
}

function envEntries(s: StdioServer): [string, string | { fromEnv: string }][] {
  return Array.isArray(s.env) ? s.env.map((n) => [n, { fromEnv: n }]) : Object.entries(s.env);
}

/** The stdio server's environment: the SDK's safe default (PATH, HOME, ...) and its `env`. */
function stdioEnv(id: string, s: StdioServer, defaults: Record<string, string>, harnessEnv: NodeJS.ProcessEnv): Record<string, string> {
  const env = { ...defaults };
  for (const [name, v] of envEntries(s)) {
    if (typeof v === 'string') {
      env[name] = v;
      continue;
    }
    const value = harnessEnv[v.fromEnv];
    if (value === undefined)
      throw new HarnessError(`arm ${id}: params.server.env.${name} reads the environment variable ${v.fromEnv}, which is not set`, {
        exitCode: 2,
        hint: 'set it (its value is never printed)',
      });
    env[name] = value;
  }
  return env;
}

function httpHeaders(id: string, s: z.output<typeof httpServer>, harnessEnv: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(s.headers)) {
    const value = harnessEnv[v.env];
    if (value === undefined)
      throw new HarnessError(`arm ${id}: server.headers.${k} reads ${v.env}, which is not set`, { exitCode: 2, hint: 'set it (its value is never printed)' });
    headers[k] = `${v.prefix}${value}`;
  }
  return headers;
}

/** A connected client and, for a stdio server, its stderr (for the message of a failure). */
export interface McpConnection {
  readonly client: Client;
  readonly stderr: BoundedStderr | undefined;
}

/**
 * A connected client, its handshake bounded by `timeoutMs` (the SDK's own default is 60 s whatever the arm
 * says). A server that fails to start or answer is closed (a stdio process is ended) before the error is
 * thrown. The SDK loads only when an MCP arm runs.
 */
export async function connect(id: string, s: Server, ctx: ArmContext, timeoutMs: number): Promise<McpConnection> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const client = new Client({ name: 'harness', version: '1' });
  let stderr: BoundedStderr | undefined;
  try {
    if (isStdio(s)) {
      const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const env = stdioEnv(id, s, getDefaultEnvironment(), ctx.env);
      const transport = new StdioClientTransport({ command: s.command, args: s.args, env, stderr: 'pipe', ...(s.cwd === undefined ? {} : { cwd: s.cwd }) });
      const stream = transport.stderr;
      if (stream) stderr = new BoundedStderr(stream as unknown as NodeJS.ReadableStream, `${id} (server stderr)`, ctx.log);
      await client.connect(transport, { timeout: timeoutMs });
    } else {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const headers = httpHeaders(id, s, ctx.env);
      await client.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers } }), { timeout: timeoutMs });
    }
  } catch (err) {
    await client.close().catch(() => undefined);
    if (err instanceof HarnessError) throw err;
    await stderr?.settled();
    throw connectFailure(id, s, timeoutMs, err as Error, stderr);
  }
  return { client, stderr };
}

/**
 * Why the handshake failed, as an error: no answer in time is a runtime failure (exit 1) naming the timeout;
 * a server that cannot be started or reached is a config problem (exit 2).
 */
function connectFailure(id: string, s: Server, timeoutMs: number, err: Error, stderr: BoundedStderr | undefined): HarnessError {
  const failure = callFailureKind(err);
  const tail = stderr?.describe() ?? '';
  if (failure === 'timeout')
    return new HarnessError(`arm ${id}: the MCP server ${where(s)} did not answer the handshake (initialize) within ${timeoutMs} ms${tail}`, {
      hint: 'check that the command starts an MCP server speaking on stdout (or that the URL serves MCP); a slow server can be given more with params.timeoutMs',
    });
  // SDK messages may quote a URL; only the redacted one is printed.
  const message = isStdio(s) ? err.message : err.message.split(s.url).join(redactUrl(s.url));
  const reset = failure === 'reset' ? ' (the connection was reset)' : '';
  return new HarnessError(`arm ${id}: cannot connect to the MCP server ${where(s)}: ${message.slice(0, 300)}${reset}${tail}`, {
    exitCode: 2,
    hint: isStdio(s) ? 'check server.command, args, cwd and env; run the command by hand to see it start' : 'check that the server is running at server.url',
  });
}

/** The SDK's JSON-RPC code for a request that got no answer within its timeout. */
const REQUEST_TIMEOUT = -32001;

/**
 * What ended a call with no answer: its timeout, a reset connection (the peer dropped it mid-call), the
 * connection closed (the server exited), or something else; read from the SDK's error and its cause.
 */
export function callFailureKind(err: unknown): 'timeout' | 'reset' | 'closed' | 'other' {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | undefined;
  if (e?.code === REQUEST_TIMEOUT) return 'timeout';
  const codes = [e?.cause?.code, e?.code].filter((c) => typeof c === 'string');
  if (codes.some((c) => c === 'ECONNRESET' || c === 'EPIPE' || c === 'UND_ERR_SOCKET')) return 'reset';
  if (/connection closed|-32000/i.test(String(e?.message ?? ''))) return 'closed';
  return 'other';
}
