/**
 * Redacted URLs (CONTEXT.md): how a URL may be printed or recorded. One helper for every place that shows a URL
 * (errors, log lines, manifests, reports) and for the config checks that refuse a credential written into one.
 */

/**
 * Words of a query parameter's name that make its value a credential: keys, tokens, secrets, signatures,
 * passwords. A name is split into words at `-`, `_`, `.` and camelCase humps (`accessToken` -> access, token;
 * `X-Amz-Signature` -> x, amz, signature), so `keyword` or `monkey` are not read as a key.
 */
const SECRET_WORDS = new Set([
  'key',
  'apikey',
  'token',
  'secret',
  'signature',
  'sig',
  'password',
  'passwd',
  'pwd',
  'pass',
  'auth',
  'authorization',
  'credential',
  'credentials',
  'session',
  'jwt',
  'bearer',
]);

/** The words of a parameter name, lower-cased. */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[-_.\s]+/)
    .map((w) => w.toLowerCase())
    .filter((w) => w !== '');
}

/** Whether a query parameter named `name` carries a credential (its value must never be printed). */
export function isSecretParam(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // A malformed escape: judge the name as written.
  }
  return nameWords(decoded).some((w) => SECRET_WORDS.has(w)) || /^x-amz-/i.test(decoded);
}

/**
 * `url` as it may be printed: a `user:password@` becomes `***@`, and the value of every query parameter named
 * like a credential (`token`, `access_token`, `api_key`, `sig`, `X-Amz-Signature`, ...) becomes `***`. Text
 * that is not a URL is returned with any URL in it redacted ({@link redactUrlsIn}).
 */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactUrlsIn(url).replace(/\/\/[^/@\s]*@/g, '//***@');
  }
  const hadUser = u.username !== '' || u.password !== '';
  u.username = '';
  u.password = '';
  let out = u.origin === 'null' ? `${u.protocol}//${u.host}` : u.origin;
  if (hadUser) out = out.replace('//', '//***@');
  const params = [...u.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${isSecretParam(k) ? '***' : encodeURIComponent(v)}`);
  return `${out}${u.pathname}${params.length > 0 ? `?${params.join('&')}` : ''}${u.hash}`;
}

/** A URL inside free text: scheme, `//`, then anything up to whitespace, a quote or an angle bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** One URL of free text with its credentials replaced in place; every other character is kept as it was. */
function redactOneInText(url: string): string {
  const out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i, '$1***@');
  return out.replace(/([?&;])([^=&#;\s]+)=([^&#;\s]*)/g, (m, sep: string, name: string) => (isSecretParam(name) ? `${sep}${name}=***` : m));
}

/**
 * `text` with every URL in it redacted: user info and credential-like query values become `***`, in place,
 * so a message that quotes a URL keeps its shape (a trailing `:` or `)` stays). Text without a URL comes back
 * unchanged. For log lines, error messages and anything written to a file.
 */
export function redactUrlsIn(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, redactOneInText);
}

/**
 * A JSON-like value with {@link redactUrlsIn} applied to every string in it, keys kept: for params and other
 * values a report or manifest records as they were configured (an MCP server's `url?token=...`, say).
 */
export function redactUrlsInValue<T>(value: T): T {
  if (typeof value === 'string') return redactUrlsIn(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactUrlsInValue(v)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redactUrlsInValue(v)])) as T;
  }
  return value;
}

/**
 * `text` with each of `secrets` (an API key, a password read from the environment) and any bearer token
 * replaced by `[redacted]`, and every URL redacted. Secrets shorter than 4 characters are not searched for:
 * they would blank out ordinary words.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s !== undefined && s.length >= 4) out = out.split(s).join('[redacted]');
  return redactUrlsIn(out.replace(/Bearer\s+[^\s"',]+/gi, 'Bearer [redacted]'));
}

/** Every credential in `url` (user, password, credential parameter values; raw and decoded), for {@link redactSecrets}. */
export function urlSecrets(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const decode = (x: string) => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x;
    }
  };
  const out = [u.username, u.password, decode(u.username), decode(u.password)];
  for (const [k, v] of u.searchParams) if (isSecretParam(k)) out.push(v, encodeURIComponent(v));
  return [...new Set(out.filter((x) => x.length >= 4))];
}

/**
 * What is wrong with a URL written into a config, or undefined: a `user:password@`, or a query parameter named
 * like a credential (`?api_key=...`). Such a URL would carry its secret into fingerprints, reports and logs;
 * config loaders refuse it (exit 2) before anything runs. `fix` says where the credential belongs instead.
 */
export function urlCredentialProblem(url: string, fix: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (u.username !== '' || u.password !== '') return `holds a user:password (shown as ${redactUrl(url)}); ${fix}`;
  // A `{{placeholder}}` value is filled per call from the query or document, never a credential.
  const names = [...new Set([...u.searchParams].filter(([k, v]) => isSecretParam(k) && !/^\{\{[^}]*\}\}$/.test(v)).map(([k]) => k))];
  if (names.length > 0) return `holds a credential in its query (${names.join(', ')}; shown as ${redactUrl(url)}); ${fix}`;
  return undefined;
}
