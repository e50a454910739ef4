/**
 * The JSON Schema of the ablation config format, `configs/config.schema.json`, generated from the zod schemas
 * the config loader validates with (harness/config/schema.ts and the schemas of the blocks it hands to their
 * owners: arm params per arm kind, system params per node kind, eval-set options per format, compare, gate,
 * judge). Editors read it through a `# yaml-language-server: $schema=...` first line (what `harness init`
 * writes) to complete and check a config as it is typed.
 *
 *   npm run schema        # rewrites configs/config.schema.json; a test fails while the committed file differs
 *
 * What zod cannot say in JSON Schema is handled here on purpose, never dropped silently:
 * - the schema describes the *input* (`io: 'input'`): a key with a default is optional and shows its default,
 *   a transform (fuse's method defaults, graph synonyms' embedder params) is described by what it reads;
 * - every refinement (`.refine`, `.superRefine`) of every schema is listed in `refinements()` below, either with
 *   the JSON Schema that holds the same rule or as a gap the loader alone checks (recorded in the schema's
 *   `$comment`); a refinement added anywhere without an entry here makes generation fail;
 * - anything else zod cannot represent throws (`unrepresentable: 'throw'`);
 * - params, options and blocks the root schema types as open records are given their owner's schema: arm
 *   `params` by `kind` (an if/then per arm kind), system `params` and input counts by node kind, eval-set
 *   `options` by `format`; an entry with a `grid` has its params checked key by key (the grid supplies the
 *   rest), its grid keys limited to the kind's params and typed like them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { OPENAI_MODELS } from '../arms/dense/hosted/openai.js';
import { VOYAGE_MODELS } from '../arms/dense/hosted/voyage.js';
import { armFactories } from '../arms/registry.js';
import { evalSetFormats } from '../evalset/load.js';
import { compareSchema, gateSchema } from '../harness/compare/config.js';
import { ANSWER_ONLY_KINDS, answerBlockSchema, answersFileParamsSchema, fullContextParamsSchema } from '../harness/config/answer-block.js';
import { configSchema } from '../harness/config/schema.js';
import { judgeConfigSchema } from '../harness/config/judge.js';
import { validationSchema } from '../harness/config/validation.js';
import { nodeKinds } from '../harness/systems/registry.js';
import { projectRoot } from '../harness/util/project.js';

/** A JSON Schema node, as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/** Where the generated schema is committed, relative to the package root (shipped with the package). */
export const CONFIG_SCHEMA_PATH = 'configs/config.schema.json';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';

/** One zod schema that becomes one `$defs` entry. */
interface Component {
  readonly name: string;
  readonly schema: z.ZodType;
}

function components(): Component[] {
  const out: Component[] = [
    { name: 'config', schema: configSchema },
    { name: 'compare', schema: compareSchema },
    { name: 'gate', schema: gateSchema },
    { name: 'judge', schema: judgeConfigSchema },
    { name: 'validation', schema: validationSchema },
    { name: 'answer', schema: answerBlockSchema },
    { name: systemParamsDef('full-context'), schema: fullContextParamsSchema },
    { name: systemParamsDef('answers-file'), schema: answersFileParamsSchema },
  ];
  for (const [kind, f] of Object.entries(armFactories)) out.push({ name: armParamsDef(kind), schema: f.params });
  for (const [kind, node] of Object.entries(nodeKinds)) {
    if (kind === 'retrieve') continue;
    if (node.params === undefined) throw new Error(`node kind "${kind}" declares no params schema (NodeKind.params); the config schema needs it`);
    out.push({ name: systemParamsDef(kind), schema: node.params });
  }
  for (const [format, f] of Object.entries(evalSetFormats)) out.push({ name: `evalset.${format}.options`, schema: f.options });
  return out;
}

const armParamsDef = (kind: string) => `arm.${kind}.params`;
const systemParamsDef = (kind: string) => `system.${kind}.params`;
const ref = (def: string): JsonSchema => ({ $ref: `#/$defs/${def}` });

// ---------------------------------------------------------------------------------------------------------
// Refinements: every `.refine` / `.superRefine` (and transform) of every component, found by walking the zod
// schemas, must have an entry here.

interface Refinement {
  /** How many custom checks (refine, superRefine) and transforms the walk finds at this place. */
  readonly checks: number;
  readonly transforms?: number;
  /** The rule the loader applies, in words. */
  readonly rule: string;
  /** Adds the JSON Schema that holds the rule to the component's schema; absent: a gap, named in `$comment`. */
  readonly express?: (component: JsonSchema) => void;
}

/** `component:path` -> how its refinements are handled. */
function refinements(): Record<string, Refinement> {
  const synonyms: Refinement = {
    checks: 1,
    transforms: 1,
    rule: "synonyms.params are checked by the embedder's own arm params schema (the transform fills their defaults)",
    express: (s) => {
      const syn = at(s, 'synonyms');
      const embedders = enumOf(at(syn, 'embedder'));
      addAll(
        syn,
        embedders.map((e) => when({ properties: { embedder: { const: e } } }, { properties: { params: ref(armParamsDef(e)) } })),
      );
    },
  };
  const templates = 'its {{...}} placeholders are variables the request knows (query.text, topK, scope, document.id, ...)';
  const margins = { anyOf: [{ required: ['margin'] }, { required: ['margins'] }] };
  return {
    'gate:': {
      checks: 1,
      rule: 'rule equivalent needs margin or margins; margins are read only by rule equivalent',
      express: (s) => addAll(s, [when({ properties: { rule: { const: 'equivalent' } }, required: ['rule'] }, margins, { not: margins })]),
    },
    'config:tune': {
      checks: 1,
      rule: 'give exactly one of split (a dev split) or folds (cross-validation)',
      express: (s) => {
        at(s, 'tune')['oneOf'] = [{ required: ['split'] }, { required: ['folds'] }];
      },
    },
    'arm.sqlite-fts5.params:': {
      checks: 1,
      rule: 'titleWeight / textWeight need fields: separate',
      express: (s) => {
        addAll(s, [
          when({ properties: { fields: { const: 'separate' } }, required: ['fields'] }, undefined, {
            properties: { titleWeight: { const: 1 }, textWeight: { const: 1 } },
          }),
        ]);
      },
    },
    'arm.postgres.params:': {
      checks: 1,
      rule: 'mode: query needs query.sql and urlEnv; mode: load takes no query.sql; ranking vector or hybrid needs vector.embed; ivfflat has no strict_order iterativeScan',
    },
    'arm.postgres.params:vector': { checks: 1, rule: 'hnsw needs efConstruction >= 2 * m' },
    'arm.hash-embed.params:dims': {
      checks: 1,
      rule: 'dims is a power of two',
      express: (s) => {
        const dims = at(s, 'dims');
        const lo = dims['minimum'] as number;
        const hi = dims['maximum'] as number;
        const powers: number[] = [];
        for (let d = 1; d <= hi; d *= 2) if (d >= lo) powers.push(d);
        dims['enum'] = powers;
      },
    },
    'arm.http.params:search': {
      checks: 1,
      rule: `no user:password nor credential-like query parameter (api_key, token, sig...) in its url, credential-like header values written as { env }, ${templates}`,
    },
    'arm.http.params:index': { checks: 1, rule: `the rules of search` },
    'arm.mcp.params:server.url': { checks: 1, rule: 'no user:password nor credential-like query parameter (api_key, token, sig...) in it' },
    'arm.mcp.params:server': {
      checks: 0,
      transforms: 1,
      rule: 'an object with url is checked as a streamable HTTP server, any other as a stdio server (so a problem is named at its own path)',
    },
    'arm.mcp.params:server.env': {
      checks: 1,
      transforms: 1,
      rule: 'a list of names, or { NAME: value or { fromEnv: VAR } }; a credential-like NAME takes { fromEnv } only',
    },
    'arm.mcp.params:response.pattern': { checks: 1, rule: 'a JavaScript regular expression with a named group (?<id>...) or (?<text>...)' },
    'arm.mcp.params:response.empty': { checks: 1, rule: 'a JavaScript regular expression' },
    'arm.mcp.params:search': { checks: 1, rule: templates },
    'arm.mcp.params:store': { checks: 1, rule: templates },
    'arm.graph-bfs.params:synonyms': synonyms,
    'arm.entity-lane.params:synonyms': synonyms,
    'system.graph-ppr.params:synonyms': synonyms,
    'judge:': { checks: 1, rule: 'no user:password nor credential-like query parameter (api_key, token, sig...) in baseURL' },
    'answer:reader': {
      checks: 1,
      rule: 'kind chat needs model; kind extractive takes no model, baseURL nor promptFile; no user:password nor credential-like query parameter in baseURL',
    },
    'answer:judge': { checks: 1, rule: 'no user:password nor credential-like query parameter (api_key, token, sig...) in baseURL' },
    'arm.voyage-embed.params:': {
      checks: 1,
      rule: 'a model whose default dimensions are not known needs dimensions; no user:password nor credential-like query parameter in baseUrl',
      express: (s) => addAll(s, [unknownModelNeedsDimensions(Object.keys(VOYAGE_MODELS))]),
    },
    'arm.openai-embed.params:': {
      checks: 1,
      rule: "a model whose dimensions are not known needs dimensions; a known model's dimensions are bounded by it; no user:password nor credential-like query parameter in baseUrl",
      express: (s) => {
        const fallback = at(s, 'model')['default'];
        addAll(s, [
          unknownModelNeedsDimensions(Object.keys(OPENAI_MODELS)),
          ...Object.entries(OPENAI_MODELS).map(([model, m]) =>
            when(model === fallback ? { properties: { model: { const: model } } } : { properties: { model: { const: model } }, required: ['model'] }, {
              properties: { dimensions: m.shortenable ? { maximum: m.dims } : { const: m.dims } },
            }),
          ),
        ]);
      },
    },
    'system.fuse.params:': {
      checks: 1,
      transforms: 1,
      rule: 'rrfK with rrf only, normalization not with rrf, alpha with cc only, not alpha and weights together (the transform fills rrfK or normalization)',
      express: (s) => {
        addAll(s, [
          when({ properties: { method: { const: 'rrf' } } }, { properties: { normalization: false } }, { properties: { rrfK: false } }),
          when({ properties: { method: { const: 'cc' } } }, undefined, { properties: { alpha: false } }),
          when({ required: ['alpha'] }, { properties: { weights: false } }),
        ]);
      },
    },
    'system.chunk.params:': { checks: 1, rule: 'overlap is below minBoundary x size, so chunking advances' },
    'system.llm-rerank.params:': { checks: 1, rule: 'keep does not exceed fetch' },
    'system.llm-rerank.params:llm': { checks: 1, rule: 'no user:password nor credential-like query parameter (api_key, token, sig...) in baseURL' },
    'system.session.params:': {
      checks: 2,
      transforms: 1,
      rule: 'messageHeader only with search: separate; recency only with a blend (the transform moves recency into blend)',
      express: (s) => {
        addAll(s, [
          when(
            { properties: { messageHeader: { const: true } }, required: ['messageHeader'] },
            { properties: { search: { const: 'separate' } }, required: ['search'] },
          ),
          when({ properties: { blend: { const: false } }, required: ['blend'] }, { properties: { recency: false } }),
        ]);
      },
    },
    'system.recency-rerank.params:': {
      checks: 1,
      rule: 'at least one of base, recency, overlap has a positive weight',
      express: (s) => {
        // Each weight is >= 0, so the sum is 0 only when every weight is 0, given or by default.
        const zero = ['base', 'recency', 'overlap'].map((k) =>
          at(s, k)['default'] === 0 ? { properties: { [k]: { const: 0 } } } : { properties: { [k]: { const: 0 } }, required: [k] },
        );
        addAll(s, [{ not: { allOf: zero } }]);
      },
    },
  };
}

/** A refinements() key as a config path: `arm.http.params:search` -> `arms[kind http].params.search`. */
function where(key: string): string {
  const [component = '', path = ''] = key.split(':');
  const m = /^(arm|system)\.(.+)\.params$/.exec(component);
  const base = m === null ? (component === 'config' ? '' : component) : `${m[1]}s[kind ${m[2]}].params`;
  return [base, path].filter((x) => x !== '').join('.');
}

function unknownModelNeedsDimensions(known: readonly string[]): JsonSchema {
  return when({ properties: { model: { not: { enum: [...known] } } }, required: ['model'] }, { required: ['dimensions'] });
}

/** Rules the loader checks that no JSON Schema can: they need the eval set, other entries, or this machine. */
const LOADER_ONLY = [
  'measure names (measures, tune.measure, gate.measure, expect keys) are parsed by the measure parser, aliases included',
  'ids are unique; inputs, compare.baseline, gate ids, expect keys and sensitive.route name systems listed earlier',
  'a grid range is not empty and a plan stays under 5000 systems; tune needs a grid or input subsets',
  'paths exist; unit and relevanceLevel fit the eval set; tune.split is not the split being scored',
  'arm requirements (environment variables, installed packages) hold on this machine',
  'subsets-of inputs fit the node kind',
  'answer measures need an answer block or answers-file systems; Acc needs answer.judge for what a reader answers; answer-only systems allow only answer measures; no arms only with answer-only systems',
];

// ---------------------------------------------------------------------------------------------------------
// Walking zod schemas for refinements and transforms.

interface Found {
  checks: number;
  transforms: number;
}

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definitions (`_zod.def`) are read structurally
type Def = { readonly type: string; readonly [key: string]: any };
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;

/** Every place in `schema` with custom checks or transforms, by dotted path (`[]` an array element, `{}` a record value). */
export function findRefinements(schema: z.ZodType): Map<string, Found> {
  const found = new Map<string, Found>();
  const lazies = new Set<unknown>();
  const visit = (s: unknown, path: string): void => {
    const def = defOf(s);
    const entry = () => {
      let e = found.get(path);
      if (e === undefined) found.set(path, (e = { checks: 0, transforms: 0 }));
      return e;
    };
    const custom = ((def['checks'] ?? []) as unknown[]).filter((c) => defOf(c)['check'] === 'custom').length;
    if (custom > 0) entry().checks += custom;
    const join = (key: string) => (path === '' ? key : `${path}.${key}`);
    switch (def.type) {
      case 'object':
        for (const [k, v] of Object.entries(def['shape'] as Record<string, unknown>)) visit(v, join(k));
        if (def['catchall'] !== undefined) visit(def['catchall'], join('*'));
        break;
      case 'array':
        visit(def['element'], `${path}[]`);
        break;
      case 'union':
        for (const o of def['options'] as unknown[]) visit(o, path);
        break;
      case 'intersection':
        visit(def['left'], path);
        visit(def['right'], path);
        break;
      case 'record':
        visit(def['keyType'], `${path}{key}`);
        visit(def['valueType'], `${path}{}`);
        break;
      case 'tuple':
        (def['items'] as unknown[]).forEach((item, i) => visit(item, `${path}[${i}]`));
        if (def['rest'] !== undefined && def['rest'] !== null) visit(def['rest'], `${path}[]`);
        break;
      case 'pipe':
        visit(def['in'], path);
        visit(def['out'], path);
        break;
      case 'transform':
        entry().transforms++;
        break;
      case 'lazy':
        if (lazies.has(s)) break;
        lazies.add(s);
        visit(def['getter'](), path);
        break;
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
      case 'nonoptional':
        visit(def['innerType'], path);
        break;
      default:
        break;
    }
  };
  visit(schema, '');
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// JSON helpers.

function isObject(x: unknown): x is JsonSchema {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The schema of property `key` of an object schema; throws when the generated shape is not what a patch expects. */
function at(s: JsonSchema, key: string): JsonSchema {
  const p = (s['properties'] as Record<string, unknown> | undefined)?.[key];
  if (!isObject(p)) throw new Error(`config schema: expected a property "${key}" in ${JSON.stringify(s).slice(0, 120)}`);
  return p;
}

function enumOf(s: JsonSchema): string[] {
  const e = s['enum'];
  if (!Array.isArray(e)) throw new Error(`config schema: expected an enum in ${JSON.stringify(s).slice(0, 120)}`);
  return e as string[];
}

function addAll(s: JsonSchema, items: readonly JsonSchema[]): void {
  s['allOf'] = [...((s['allOf'] as JsonSchema[] | undefined) ?? []), ...items];
}

/** Rewrites every `$ref` in `node` with `map`. */
function mapRefs(node: unknown, map: (r: string) => string): unknown {
  if (Array.isArray(node)) return node.map((x) => mapRefs(x, map));
  if (!isObject(node)) return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? map(v) : mapRefs(v, map)]));
}

/**
 * `schema` as JSON Schema (its input side), as the `$defs` entry `name`: its own `$defs` (recursive parts,
 * e.g. a JSON value) are hoisted into `defs` as `<name>.<def>`, and its references rewritten to match.
 */
function convert(name: string, schema: z.ZodType, defs: Record<string, JsonSchema>): JsonSchema {
  const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw', cycles: 'ref', reused: 'inline' }) as JsonSchema;
  const { $schema: _draft, $defs: own, ...body } = raw;
  const rename = (r: string): string => {
    if (r === '#') return `#/$defs/${name}`;
    const m = /^#\/\$defs\/([^/]+)(.*)$/.exec(r);
    if (m === null) throw new Error(`config schema: ${name}: a reference zod made that this script does not rewrite: ${r}`);
    return `#/$defs/${name}.${m[1]}${m[2]}`;
  };
  for (const [k, v] of Object.entries((own ?? {}) as Record<string, JsonSchema>)) defs[`${name}.${k}`] = mapRefs(v, rename) as JsonSchema;
  return mapRefs(body, rename) as JsonSchema;
}

/** A reference to property `key` of the `$defs` entry `def` (a JSON Pointer, escaped as RFC 6901 says). */
function propertyRef(def: string, key: string): JsonSchema {
  return { $ref: `#/$defs/${def}/properties/${key.replaceAll('~', '~0').replaceAll('/', '~1')}` };
}

/**
 * The params of an entry that has a grid: each key the entry sets is checked, but none is required and rules
 * across keys are not applied, because the grid supplies the other keys point by point.
 */
function gridParams(full: JsonSchema, def: string): JsonSchema {
  if (full['type'] !== 'object' || !isObject(full['properties'])) throw new Error(`config schema: ${def} is not an object schema`);
  return {
    type: 'object',
    properties: Object.fromEntries(Object.keys(full['properties']).map((k) => [k, propertyRef(def, k)])),
    ...(full['additionalProperties'] === undefined ? {} : { additionalProperties: full['additionalProperties'] }),
  };
}

/**
 * An arm or system entry of one kind: its params checked by the kind's schema without a grid; with one, key by
 * key, the grid's keys limited to the kind's params, list values typed like the param, no key in both.
 */
function paramsByKind(kind: string, paramsDef: string, full: JsonSchema): JsonSchema {
  const keys = Object.keys(full['properties'] as Record<string, JsonSchema>);
  const inGrid: JsonSchema = {
    properties: {
      params: ref(`${paramsDef}.inGrid`),
      grid: {
        propertyNames: keys.length === 0 ? false : { enum: keys },
        // `items` types a list of values and leaves a { from, to, step } range alone.
        properties: Object.fromEntries(keys.map((k) => [k, { items: propertyRef(paramsDef, k) }])),
      },
    },
    ...(keys.length === 0
      ? {}
      : {
          not: {
            $comment: 'a param is set in params or swept by grid, not both',
            anyOf: keys.map((k) => ({ required: ['params'], properties: { params: { required: [k] }, grid: { required: [k] } } })),
          },
        }),
  };
  return when(isKind(kind), when({ required: ['grid'] }, inGrid, { properties: { params: ref(paramsDef) } }));
}

/** An entry of this `kind`. */
function isKind(kind: string): JsonSchema {
  return { properties: { kind: { const: kind } }, required: ['kind'] };
}

/**
 * `{ if, then, else }`, the one place the `then` keyword is written (linters take an object with a `then` for
 * a promise).
 */
function when(test: JsonSchema, then?: JsonSchema, otherwise?: JsonSchema): JsonSchema {
  return Object.fromEntries([['if', test], ...(then === undefined ? [] : [['then', then]]), ...(otherwise === undefined ? [] : [['else', otherwise]])]);
}

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  name: 'The experiment name; the report folder is <output>/<name>-<configHash8>/.',
  description: 'One line on what the study decides; shown in the report.',
  evalset: 'The eval set: { format, path, split?, strata?, options? }; paths relative to this file.',
  measures: 'Measures in any accepted spelling (nDCG@10, R@100, RR, AP, Judged@10, MAP, ...) or a preset name; see `harness measures`.',
  relevanceLevel: 'Grade at or above which a qrels entry counts as relevant (trec_eval -l).',
  unit: 'Score at a coarser unit the eval set defines (e.g. session for LoCoMo turns).',
  topK: 'How many documents each arm returns per query.',
  arms: 'Retrieval arms: { id, kind, params, label?, substitute?, sensitive?, grid? }; `harness arms` lists the kinds and their params.',
  systems:
    'Systems computed from other systems (fuse, recency-rerank, llm-rerank, chunk, session, graph-ppr), listed after their inputs; and answer-only systems (full-context, answers-file).',
  tune: 'How grids pick their point without the test queries: { measure, folds } or { measure, split }.',
  compare: 'How runs are compared: baseline, test, permutations, seed, alpha, correction, family, ...',
  gate: 'The decision rule: { candidate, measure, rule?, baseline?, minDelta? } -> ADOPT / REJECT / INCONCLUSIVE.',
  output: 'Folder that receives <name>-<configHash8>/; relative to this file.',
  cache: 'Content-addressed cache folder; relative to this file.',
  expect: 'Pinned values checked by --verify: { <system id>: { <measure>: { value, tolerance? } } }.',
  qrels: 'The qrels to score with: gold (default), judged, or gold+judged (needs judgments).',
  judgments: 'The judgments folder `harness judge` writes and judged qrels read; relative to this file.',
  judge: 'How `harness judge` judges the pool: model, baseURL, local, depth, samples, ...',
  humanLabels:
    'Human labels of the judged pool: a kappa session (harness kappa --by query) or TREC qrels; relative to this file. Corrects the judged deltas (PPI) and validates the judge.',
  validation: 'When the judge counts as validated on the human-labelled queries: { minTau, minQueries, resamples }.',
  answer: 'The answer level: { reader, judge?, systems?, price? } for the answer measures Acc, F1-LoCoMo, F1-set, EM (docs/answer-evaluation.md).',
};

// ---------------------------------------------------------------------------------------------------------

/** The JSON Schema (draft 2020-12) of an ablation config, as `configs/config.schema.json` holds it. */
export function configJsonSchema(): JsonSchema {
  const comps = components();
  const table = refinements();

  // Every refinement found must be handled, and every entry of the table must still exist.
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const c of comps) {
    for (const [path, f] of findRefinements(c.schema)) {
      const key = `${c.name}:${path}`;
      seen.add(key);
      const r = table[key];
      if (r === undefined) problems.push(`${key}: ${f.checks} refinement(s), ${f.transforms} transform(s) with no entry in refinements()`);
      else if (r.checks !== f.checks || (r.transforms ?? 0) !== f.transforms)
        problems.push(`${key}: found ${f.checks} refinement(s) and ${f.transforms} transform(s), refinements() says ${r.checks} and ${r.transforms ?? 0}`);
    }
  }
  for (const key of Object.keys(table)) if (!seen.has(key)) problems.push(`${key}: in refinements() but no longer in the zod schemas; remove it`);
  if (problems.length > 0) throw new Error(`scripts/config-schema.ts: refinements out of step with the zod schemas:\n  ${problems.join('\n  ')}`);

  const defs: Record<string, JsonSchema> = {};
  for (const c of comps) defs[c.name] = convert(c.name, c.schema, defs);
  const gaps: string[] = [];
  for (const [key, r] of Object.entries(table)) {
    const name = key.slice(0, key.indexOf(':'));
    if (r.express) r.express(defs[name] as JsonSchema);
    else gaps.push(`${where(key)}: ${r.rule}`);
  }

  const root = defs['config'] as JsonSchema;
  delete defs['config'];
  const props = root['properties'] as Record<string, JsonSchema>;

  // Eval set: a known format, its options, a split only where the format has splits.
  const evalset = at(root, 'evalset');
  at(evalset, 'format')['enum'] = Object.keys(evalSetFormats);
  addAll(
    evalset,
    Object.entries(evalSetFormats).map(([format, f]) =>
      when(
        { properties: { format: { const: format } }, required: ['format'] },
        {
          properties: { options: ref(`evalset.${format}.options`), ...(f.splits ? {} : { split: false }) },
        },
      ),
    ),
  );

  // Arms: a known kind, params by kind.
  const arm = (at(root, 'arms')['items'] ?? {}) as JsonSchema;
  at(arm, 'kind')['enum'] = Object.keys(armFactories);
  addAll(
    arm,
    Object.keys(armFactories).map((kind) => paramsByKind(kind, armParamsDef(kind), defs[armParamsDef(kind)] as JsonSchema)),
  );

  // Systems: a known node kind, params by kind, as many listed inputs as the kind takes, none twice.
  const system = (at(root, 'systems')['items'] ?? {}) as JsonSchema;
  const systemKinds = Object.keys(nodeKinds).filter((k) => k !== 'retrieve');
  at(system, 'kind')['enum'] = [...systemKinds, ...ANSWER_ONLY_KINDS];
  for (const form of (at(system, 'inputs')['anyOf'] ?? []) as JsonSchema[]) {
    if (form['type'] === 'array') form['uniqueItems'] = true;
    else at(form, 'subsets-of')['uniqueItems'] = true;
  }
  addAll(
    system,
    systemKinds.flatMap((kind) => {
      const { min, max } = nodeKinds[kind as keyof typeof nodeKinds].arity;
      return [
        paramsByKind(kind, systemParamsDef(kind), defs[systemParamsDef(kind)] as JsonSchema),
        when(isKind(kind), {
          ...(min > 0 ? { required: ['inputs'] } : {}),
          properties: { inputs: { anyOf: [{ type: 'array', minItems: min, maxItems: max }, { type: 'object' }] } },
        }),
      ];
    }),
  );
  // Answer-only systems (full-context, answers-file): params by kind, no inputs, no grid.
  addAll(
    system,
    ANSWER_ONLY_KINDS.map((kind) =>
      when(isKind(kind), { properties: { params: ref(systemParamsDef(kind)), inputs: { type: 'array', maxItems: 0 }, grid: false } }),
    ),
  );
  for (const kind of [...Object.keys(armFactories).map(armParamsDef), ...systemKinds.map(systemParamsDef)])
    defs[`${kind}.inGrid`] = gridParams(defs[kind] as JsonSchema, kind);

  // Chunk and session wrap an arm of their own: its params by its kind too.
  for (const kind of ['chunk', 'session']) {
    const wrapped = at(defs[systemParamsDef(kind)] as JsonSchema, 'arm');
    at(wrapped, 'kind')['enum'] = Object.keys(armFactories);
    addAll(
      wrapped,
      Object.keys(armFactories).map((k) => when({ properties: { kind: { const: k } } }, { properties: { params: ref(armParamsDef(k)) } })),
    );
  }

  // Blocks the root types as open records: their owners' schemas.
  for (const block of ['compare', 'gate', 'judge', 'validation', 'answer']) props[block] = ref(block);

  // Judged qrels read a judgments folder.
  addAll(root, [when({ properties: { qrels: { enum: ['judged', 'gold+judged'] } }, required: ['qrels'] }, { required: ['judgments'] })]);

  for (const [key, text] of Object.entries(DESCRIPTIONS)) {
    if (props[key] === undefined) throw new Error(`config schema: DESCRIPTIONS names "${key}", which the config schema does not have`);
    props[key] = { description: text, ...props[key] };
  }
  const undescribed = Object.keys(props).filter((k) => DESCRIPTIONS[k] === undefined);
  if (undescribed.length > 0) throw new Error(`config schema: add a description for ${undescribed.join(', ')} to DESCRIPTIONS`);

  return {
    $schema: DRAFT,
    title: 'harness ablation config',
    description:
      'An ablation config of harness (README, "An ablation config"). Generated by scripts/config-schema.ts from the zod schemas the loader validates with; do not edit.',
    $comment: `Checked by the loader, not by this schema: ${[...gaps, ...LOADER_ONLY].map((g, i) => `(${i + 1}) ${g}`).join('; ')}.`,
    ...root,
    $defs: Object.fromEntries(Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
}

/**
 * JSON with two-space indentation where a value does not fit on its line, and on one line where it does (up to
 * `width` characters), so the file reads like a hand-written schema and diffs stay small.
 */
export function formatJson(value: unknown, width = 120): string {
  const oneLine = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(oneLine).join(', ')}]`;
    if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      return entries.length === 0 ? '{}' : `{ ${entries.map(([k, x]) => `${JSON.stringify(k)}: ${oneLine(x)}`).join(', ')} }`;
    }
    const text = JSON.stringify(v);
    if (text === undefined) throw new Error('formatJson: not JSON');
    return text;
  };
  const format = (v: unknown, indent: string, lead: number): string => {
    const flat = oneLine(v);
    // The value starts `lead` characters into its line and may be followed by a comma.
    if (v === null || typeof v !== 'object' || lead + flat.length + 1 <= width) return flat;
    const inner = `${indent}  `;
    if (Array.isArray(v)) return `[\n${v.map((x) => `${inner}${format(x, inner, inner.length)}`).join(',\n')}\n${indent}]`;
    const lines = Object.entries(v as Record<string, unknown>).map(([k, x]) => {
      const key = `${JSON.stringify(k)}: `;
      return `${inner}${key}${format(x, inner, inner.length + key.length)}`;
    });
    return `{\n${lines.join(',\n')}\n${indent}}`;
  };
  return format(value, '', 0);
}

/** The file's text: the schema, formatted by `formatJson`, one newline at the end. */
export function renderConfigSchema(): string {
  return `${formatJson(configJsonSchema())}\n`;
}

function main(): void {
  const file = join(projectRoot(), CONFIG_SCHEMA_PATH);
  const text = renderConfigSchema();
  let old: string | undefined;
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    old = undefined;
  }
  if (old === text) {
    process.stdout.write(`${CONFIG_SCHEMA_PATH}: up to date\n`);
    return;
  }
  writeFileSync(file, text);
  process.stdout.write(`${CONFIG_SCHEMA_PATH}: written (${text.length} bytes)\n`);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) main();
