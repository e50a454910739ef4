import pLimit from 'p-limit';
import { z } from 'zod';
import { redactUrl } from '../../../evalset/datasets/download.js';
import type { Corpus, JsonValue, Query } from '../../../evalset/types.js';
import { HarnessError } from '../../../harness/errors.js';
import { urlCredentialProblem } from '../../../harness/util/redact.js';
import type { Arm, ArmContext, ArmFactory, IndexStats, ScoredDoc } from '../../types.js';
import { MAX_TIMER_MS, RemoteCallError, TokenBucket, refuseSensitive, retryAfterMs, storeAll, timeoutMsSchema, withRetries } from '../limits.js';
import { HitRanker, textMatchOf, MappingError, mapResults, mappingSchema, responseIdentity } from '../mapping.js';
import { scopeName } from '../scope.js';
import { STORE_CHECK_DEFAULT, runStoreCheck, storeCheckSchema } from '../store-check.js';
import { DOCUMENT_VARIABLES, QUERY_VARIABLES, type TemplateValues, documentValues, queryValues, render, templateProblems } from '../template.js';

/** Header names whose values are credentials: they may only come from the environment, never the config. */
const CREDENTIAL_HEADER = /authorization|cookie|key|token|secret|password|credential|signature/i;

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

/** A header value: literal text, or the value of an environment variable (with an optional prefix, `Bearer `). */
const headerValue = z.union([z.string(), z.object({ env: z.string().min(1), prefix: z.string().default('') }).strict()]);

const request = (variables: readonly string[], defaultBody: JsonValue | undefined) =>
  z
    .object({
      /** The endpoint; `{{...}}` placeholders are URL-encoded. No `user:password@` nor `?api_key=`: credentials go in headers. */
      url: z.string().url(),
      method: z.enum(['GET', 'POST', 'PUT']).default('POST'),
      headers: z.record(z.string(), headerValue).default({}),
      /** The JSON body (not sent with GET), with `{{...}}` placeholders. */
      body: jsonValue.optional().default(defaultBody as JsonValue),
    })
    .strict()
    .superRefine((r, ctx) => {
      // A credential in the URL would reach the fingerprint, the report and every message that names the URL.
      const credential = urlCredentialProblem(r.url, 'send credentials in headers, from environment variables: { env: VARIABLE }');
      if (credential !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: credential });
      for (const [name, v] of Object.entries(r.headers)) {
        if (typeof v === 'string' && CREDENTIAL_HEADER.test(name))
          ctx.addIssue({
            code: 'custom',
            path: ['headers', name],
            message: `looks like a credential; write { env: VARIABLE } (and prefix) instead of its value`,
          });
      }
      for (const m of [...templateProblems(r.url, variables, 'url'), ...templateProblems(r.body, variables, 'body')]) {
        const [at, ...rest] = m.split(': ');
        ctx.addIssue({ code: 'custom', path: (at as string).split('.'), message: rest.join(': ') });
      }
    });

const params = z
  .object({
    /** The search request, sent once per query. */
    search: request(QUERY_VARIABLES, { query: '{{query.text}}', topK: '{{topK}}', scope: '{{scope}}' }),
    /** Where the hits are in the answer, and their docId and score (JSONPath). */
    response: mappingSchema.default({ results: '$[*]', docId: '$.id' }),
    /** The store request, sent once per document of each scope; absent when the service holds the corpus already. */
    index: request(DOCUMENT_VARIABLES, { id: '{{document.id}}', text: '{{document.text}}', scope: '{{scope}}' }).optional(),
    /**
     * The service runs on this machine. Only then may an index request carry Sensitive documents; otherwise the
     * arm counts as sending text off the machine.
     */
    local: z.boolean().default(false),
    /** The service's version, for the fingerprint: change it and every cached run of the arm is recomputed. */
    version: z.string().optional(),
    scopePrefix: z.string().default('harness-'),
    /** Search requests in flight at once. */
    concurrency: z.number().int().min(1).max(256).default(4),
    /** Index requests in flight at once. Default 1: a service that rewrites one file per call loses parallel stores. */
    storeConcurrency: z.number().int().min(1).max(256).default(1),
    /** After the index requests: a sample of documents searched by their own text; too many missing stops the run. */
    storeCheck: storeCheckSchema.default(STORE_CHECK_DEFAULT),
    /** Requests started per second at most (a token bucket); absent: no limit. */
    ratePerSecond: z.number().positive().optional(),
    /** Milliseconds one attempt may take before it is abandoned (and retried). */
    timeoutMs: timeoutMsSchema().default(10_000),
    /** Further attempts after a retryable failure: a timeout, a dropped connection, HTTP 429 or 5xx. */
    retries: z.number().int().min(0).max(20).default(3),
    /** The longest wait before a retry, whatever Retry-After asks. */
    maxRetryWaitMs: z.number().int().min(0).max(MAX_TIMER_MS).default(30_000),
  })
  .strict();

export type HttpParams = z.output<typeof params>;
type RequestParams = HttpParams['search'];

/** Every environment variable the headers read. */
function headerEnv(p: HttpParams): string[] {
  const names = [p.search, ...(p.index ? [p.index] : [])].flatMap((r) => Object.values(r.headers).flatMap((v) => (typeof v === 'string' ? [] : [v.env])));
  return [...new Set(names)];
}

/** A request's identity: method, redacted URL, header names and literal values (never an env value), body template. */
function requestIdentity(r: RequestParams): JsonValue {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) headers[k.toLowerCase()] = typeof v === 'string' ? v : `env:${v.env}`;
  return { method: r.method, url: redactUrl(r.url), headers, body: r.method === 'GET' ? null : r.body };
}

/**
 * `http`: a search service behind a request template. Each query fills the template (`{{query.text}}`,
 * `{{topK}}`, `{{scope}}`), its answer is mapped to (docId, score) by JSONPath, with a concurrency limit, an
 * optional rate limit, a timeout per attempt and retries on retryable failures (honouring Retry-After).
 * Credentials come from environment variables into headers and appear nowhere else: not in the fingerprint,
 * the cache, the manifest, the log or an error message.
 */
export const httpArm: ArmFactory<typeof params> = {
  kind: 'http',
  summary: 'a search service over HTTP: request template, JSONPath response mapping, limits, retries',
  params,
  // v2: index requests one at a time by default, and the store check decides whether a run is written at all.
  fingerprint: (p) => ({
    kind: 'http',
    v: 2,
    search: requestIdentity(p.search),
    response: responseIdentity(p.response),
    index: p.index ? requestIdentity(p.index) : null,
    storeConcurrency: p.index ? p.storeConcurrency : null,
    storeCheck: p.index ? p.storeCheck : null,
    version: p.version ?? null,
    scopePrefix: p.scopePrefix,
  }),
  theoreticalMinScore: (p) => (p.response.score === undefined ? 0 : undefined),
  sendsTextOffMachine: (p) => !p.local && p.index !== undefined,
  async probe(id, p, ctx) {
    const unset = headerEnv(p).filter((name) => !ctx.env[name]);
    if (unset.length > 0)
      throw new HarnessError(`arm ${id}: headers read the environment variable(s) ${unset.join(', ')}, which are not set`, {
        exitCode: 2,
        hint: 'set them (their values are never printed), or remove the headers that name them',
      });
    return null;
  },
  create(id, p, ctx): Arm {
    const call = serviceCaller(id, p, ctx);
    let scope = '';
    const ranker = new HitRanker(textMatchOf(p.response));
    const search = async (query: Query, topK: number): Promise<readonly ScoredDoc[]> => {
      const answer = await call(p.search, queryValues(query, topK, scope), `search query ${query.id}`);
      try {
        return ranker.rank(mapResults(answer, p.response));
      } catch (err) {
        if (!(err instanceof MappingError)) throw err;
        throw new HarnessError(`arm ${id}: the answer to query ${query.id} does not fit response: ${err.message}`, {
          hint: 'check the response paths (results, docId, text, score) against what the service returns',
        });
      }
    };
    return {
      id,
      concurrency: p.concurrency,
      async index(corpus: Corpus): Promise<IndexStats> {
        scope = scopeName(p.scopePrefix, corpus);
        ranker.index(corpus);
        const store = p.index;
        if (!store) return { documents: corpus.length };
        refuseSensitive(id, redactUrl(store.url), corpus, p.local);
        const progress = ctx.log.progress(`${id}: index`, corpus.length);
        // The answer to an index request is not read (it may be plain text): the store check asks search.
        await storeAll(corpus, pLimit(p.storeConcurrency), progress, (d) => call(store, documentValues(d, scope), `store document ${d.id}`, false));
        const check = await runStoreCheck(id, corpus, p.storeCheck, p.concurrency, search, ctx.log);
        ranker.reset();
        return { documents: corpus.length, ...check };
      },
      search,
      searchStats: () => ranker.stats() ?? {},
    };
  },
};

/** A request template filled for one call; `shown` is its URL as messages may print it (redacted, no query). */
interface FilledRequest {
  readonly url: string;
  readonly shown: string;
  readonly method: RequestParams['method'];
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

/**
 * Sends a filled request template and returns its JSON answer, within the arm's rate limit, timing out and
 * retrying each attempt as its params say; `what` names the call in messages.
 */
function serviceCaller(
  id: string,
  p: HttpParams,
  ctx: ArmContext,
): (r: RequestParams, values: TemplateValues, what: string, json?: boolean) => Promise<unknown> {
  const bucket = p.ratePerSecond === undefined ? undefined : new TokenBucket(p.ratePerSecond);
  return async (r, values, what, json = true) => {
    const req = filled(r, values, ctx.env);
    return withRetries(
      `arm ${id}: ${what}`,
      async () => {
        await bucket?.take();
        return attempt(req, p.timeoutMs, json);
      },
      { retries: p.retries, baseDelayMs: 250, maxWaitMs: p.maxRetryWaitMs, log: ctx.log },
    );
  };
}

/** Fills the URL (placeholders URL-encoded), the headers (environment values in) and the body of a request. */
function filled(r: RequestParams, values: TemplateValues, env: NodeJS.ProcessEnv): FilledRequest {
  const url = r.url.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (_, name: string) => encodeURIComponent(String(values[name] ?? '')));
  const shown = redactUrl(url.split('?')[0] as string);
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, v] of Object.entries(r.headers)) headers[k] = typeof v === 'string' ? v : `${v.prefix}${env[v.env] ?? ''}`;
  let body: string | undefined;
  if (r.method !== 'GET') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(render(r.body, values));
  }
  return { url, shown, method: r.method, headers, body };
}

/**
 * One attempt: the answer parsed as JSON (or, without `json`, its text), or a RemoteCallError that says whether
 * another attempt may help.
 */
async function attempt(req: FilledRequest, timeoutMs: number, json: boolean): Promise<unknown> {
  const { shown, body } = req;
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, { method: req.method, headers: req.headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(timeoutMs) });
    text = await res.text();
  } catch (err) {
    throw unreachable(err as Error, shown, timeoutMs);
  }
  if (res.status === 429 || res.status >= 500)
    throw new RemoteCallError(`${shown} answered HTTP ${res.status}`, true, retryAfterMs(res.headers.get('retry-after')));
  if (!res.ok)
    throw new RemoteCallError(`${shown} answered HTTP ${res.status}`, false, undefined, {
      hint: res.status === 401 || res.status === 403 ? 'check the credential the headers read from the environment' : 'check the request template',
    });
  if (!json) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // The body is not quoted: it may hold document text.
    throw new RemoteCallError(`the answer of ${shown} is not JSON (${text.length} bytes)`, false, undefined, {
      hint: 'the service must answer with JSON; check the url and method',
    });
  }
}

/** Error codes of a connection the peer dropped mid-request (undici names a socket closed under it UND_ERR_SOCKET). */
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * A failed fetch as a retryable error that says what happened: no answer within the timeout, the connection
 * reset mid-request, or the service unreachable. Node's fetch errors may quote the URL; only the redacted one
 * is printed.
 */
function unreachable(e: Error, shown: string, timeoutMs: number): RemoteCallError {
  if (e.name === 'TimeoutError' || e.name === 'AbortError')
    return new RemoteCallError(`no answer from ${shown} within ${timeoutMs} ms`, true, undefined, {
      hint: 'raise the arm param timeoutMs, or lower concurrency',
    });
  const code = (e.cause as NodeJS.ErrnoException | undefined)?.code ?? e.name;
  if (RESET.has(code))
    return new RemoteCallError(`${shown} reset the connection mid-request (${code})`, true, undefined, {
      hint: 'the service (or a proxy before it) dropped the connection: check its log; retries are set by the arm param retries',
    });
  return new RemoteCallError(`${shown} cannot be reached (${code})`, true, undefined, { hint: 'check that the service is running and the url is right' });
}
