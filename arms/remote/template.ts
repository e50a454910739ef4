import type { Document, JsonValue, Query } from '../../evalset/types.js';

/**
 * Request templates of the remote arms: any JSON value whose strings may hold `{{name}}` placeholders. A string
 * that is exactly one placeholder takes the value's own type (`"{{topK}}"` becomes the number 10); a
 * placeholder inside longer text is spliced in as text. A whole-string placeholder whose value is absent (a
 * document without a title) drops its object key, so a server sees no empty field it did not ask for.
 */

/** What a template may name: the query being searched, the document being stored, topK and the scope name. */
export const QUERY_VARIABLES = ['query.id', 'query.text', 'query.stratum', 'topK', 'scope'] as const;
export const DOCUMENT_VARIABLES = ['document.id', 'document.text', 'document.title', 'document.timestamp', 'scope'] as const;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g;

export type TemplateValues = Readonly<Record<string, JsonValue | undefined>>;

export function queryValues(query: Query, topK: number, scope: string): TemplateValues {
  return { 'query.id': query.id, 'query.text': query.text, 'query.stratum': query.stratum, topK, scope };
}

export function documentValues(doc: Document, scope: string): TemplateValues {
  return { 'document.id': doc.id, 'document.text': doc.text, 'document.title': doc.title, 'document.timestamp': doc.timestamp, scope };
}

/** Every placeholder of `template` that is not in `known`, as `path: message` problems (empty: fine). */
export function templateProblems(template: unknown, known: readonly string[], path: string): string[] {
  const out: string[] = [];
  const visit = (v: unknown, at: string) => {
    if (typeof v === 'string') {
      for (const m of v.matchAll(PLACEHOLDER)) {
        if (!known.includes(m[1] as string)) out.push(`${at}: unknown placeholder {{${m[1]}}} (known: ${known.map((k) => `{{${k}}}`).join(', ')})`);
      }
    } else if (Array.isArray(v)) v.forEach((x, i) => visit(x, `${at}[${i}]`));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) visit(x, `${at}.${k}`);
  };
  visit(template, path);
  return out;
}

const ABSENT = Symbol('absent');

/** `template` with its placeholders filled from `values` (see the module comment for the rules). */
export function render(template: JsonValue, values: TemplateValues): JsonValue {
  const out = fill(template, values);
  return out === ABSENT ? null : out;
}

function fill(v: JsonValue, values: TemplateValues): JsonValue | typeof ABSENT {
  if (typeof v === 'string') {
    const whole = /^\{\{\s*([A-Za-z0-9_.]+)\s*\}\}$/.exec(v);
    if (whole) {
      const x = values[whole[1] as string];
      return x === undefined ? ABSENT : x;
    }
    return v.replace(PLACEHOLDER, (_, name: string) => {
      const x = values[name];
      return x === undefined || x === null ? '' : typeof x === 'object' ? JSON.stringify(x) : String(x);
    });
  }
  if (Array.isArray(v)) return v.map((x) => fill(x, values)).map((x) => (x === ABSENT ? null : x));
  if (v !== null && typeof v === 'object') {
    const o: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(v)) {
      const f = fill(x, values);
      if (f !== ABSENT) o[k] = f;
    }
    return o;
  }
  return v;
}
