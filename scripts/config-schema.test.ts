import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { loadConfig } from '../harness/config/load.js';
import { ConfigError } from '../harness/errors.js';
import { tempDir } from '../harness/testing/temp.js';
import { projectRoot } from '../harness/util/project.js';
import { CONFIG_SCHEMA_PATH, type JsonSchema, configJsonSchema, findRefinements, formatJson, renderConfigSchema } from './config-schema.js';

const root = projectRoot();
const committed = readFileSync(join(root, CONFIG_SCHEMA_PATH), 'utf8');

/** The committed schema compiled as editors read it; formats (uri) are the loader's business, not checked here. */
function compileSchema(schema: JsonSchema = JSON.parse(committed) as JsonSchema) {
  const ajv = new Ajv2020({ strict: true, strictRequired: false, strictTypes: false, allErrors: true, validateFormats: false });
  return ajv.compile(schema);
}

describe('configs/config.schema.json', () => {
  it('is what scripts/config-schema.ts generates from the zod schemas (run npm run schema)', () => {
    expect(committed === renderConfigSchema(), `${CONFIG_SCHEMA_PATH} differs from a fresh generation: run npm run schema and commit it`).toBe(true);
  });

  it('is a valid draft 2020-12 schema that compiles in strict mode', () => {
    expect(JSON.parse(committed)['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(() => compileSchema()).not.toThrow();
  });

  const validate = compileSchema();
  const configs = readdirSync(join(root, 'configs')).filter((f) => f.endsWith('.yaml'));
  it('covers the configs folder', () => expect(configs.length).toBeGreaterThan(5));
  for (const file of configs) {
    it(`accepts configs/${file}`, () => {
      const ok = validate(parse(readFileSync(join(root, 'configs', file), 'utf8')));
      expect(ok, JSON.stringify(validate.errors?.slice(0, 5), null, 1)).toBe(true);
    });
  }
});

describe('the schema agrees with the loader', () => {
  const dir = tempDir('config-schema');
  const base = () => ({
    name: 'agree',
    evalset: { format: 'memory', path: join(root, 'evalset/examples/alex-memory') },
    measures: ['nDCG@10', 'RR'],
    topK: 50,
    arms: [
      { id: 'bm25', kind: 'bm25', params: { preset: 'lucene', k1: 0.9, b: 0.4 } },
      { id: 'fts5', kind: 'sqlite-fts5', params: { tokenizer: 'porter' } },
    ] as Record<string, unknown>[],
    compare: { baseline: 'bm25' } as Record<string, unknown>,
    gate: { candidate: 'fts5', measure: 'nDCG@10' } as Record<string, unknown>,
    output: join(dir, 'reports'),
    cache: join(dir, 'cache'),
  });
  type Config = ReturnType<typeof base> & Record<string, unknown>;
  const fuse = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    id: 'f',
    kind: 'fuse',
    inputs: ['bm25', 'fts5'],
    params,
    ...extra,
  });
  const sweep = { id: 'sweep', kind: 'bm25', params: { preset: 'lucene' }, grid: { k1: [0.6, 1.2], b: { from: 0.3, to: 0.5, step: 0.1 } } };

  /** Each case changes the base config; `valid`: what both say, or `gap`: the loader refuses what the schema cannot see. */
  const cases: [string, (c: Config) => void, boolean | 'gap'][] = [
    ['the base config', () => {}, true],
    ['an unknown top-level key', (c) => void (c['arm'] = []), false],
    ['topK as a string', (c) => void ((c as Record<string, unknown>)['topK'] = '100'), false],
    ['a missing evalset', (c) => void delete (c as Partial<Config>).evalset, false],
    ['an unknown arm kind', (c) => void (c.arms[0]!['kind'] = 'bm26'), false],
    ['an unknown key in an arm', (c) => void (c.arms[0]!['parms'] = {}), false],
    ['an unknown bm25 param', (c) => void (c.arms[0]!['params'] = { k3: 1 }), false],
    ['a bm25 param of the wrong type', (c) => void (c.arms[0]!['params'] = { k1: 'high' }), false],
    ['fts5 column weights without fields: separate', (c) => void (c.arms[1]!['params'] = { titleWeight: 2 }), false],
    ['fts5 column weights with fields: separate', (c) => void (c.arms[1]!['params'] = { fields: 'separate', titleWeight: 2 }), true],
    ['hash-embed dims not a power of two', (c) => void c.arms.push({ id: 'h', kind: 'hash-embed', params: { dims: 100 } }), false],
    ['hash-embed dims a power of two', (c) => void c.arms.push({ id: 'h', kind: 'hash-embed', params: { dims: 128 } }), true],
    ['a grid over bm25 params', (c) => void c.arms.push(sweep), true],
    ['a grid key also in params', (c) => void c.arms.push({ ...sweep, params: { k1: 0.9 } }), false],
    ['a grid key the kind does not have', (c) => void c.arms.push({ ...sweep, grid: { k3: [1, 2] } }), false],
    ['a grid value of the wrong type', (c) => void c.arms.push({ ...sweep, grid: { k1: ['high'] } }), false],
    ['an rrf fusion', (c) => void (c['systems'] = [fuse({ method: 'rrf', rrfK: 30 })]), true],
    ['rrf with a normalization', (c) => void (c['systems'] = [fuse({ method: 'rrf', normalization: 'min-max' })]), false],
    ['rrfK on a cc fusion', (c) => void (c['systems'] = [fuse({ method: 'cc', rrfK: 30 })]), false],
    ['alpha on a cc fusion', (c) => void (c['systems'] = [fuse({ method: 'cc', alpha: 0.3 })]), true],
    ['alpha on combsum', (c) => void (c['systems'] = [fuse({ method: 'combsum', alpha: 0.3 })]), false],
    ['alpha and weights', (c) => void (c['systems'] = [fuse({ method: 'cc', alpha: 0.3, weights: { bm25: 1 } })]), false],
    ['the fusion method swept by a grid', (c) => void (c['systems'] = [fuse({}, { grid: { method: ['rrf', 'combsum'] } })]), true],
    ['a fusion without inputs', (c) => void (c['systems'] = [{ id: 'f', kind: 'fuse', params: { method: 'rrf' } }]), false],
    ['a fusion input listed twice', (c) => void (c['systems'] = [fuse({ method: 'rrf' }, { inputs: ['bm25', 'bm25'] })]), false],
    ['a rerank of two inputs', (c) => void (c['systems'] = [{ id: 'r', kind: 'recency-rerank', inputs: ['bm25', 'fts5'] }]), false],
    [
      'a rerank with every weight 0',
      (c) => void (c['systems'] = [{ id: 'r', kind: 'recency-rerank', inputs: ['bm25'], params: { base: 0, recency: 0, overlap: 0 } }]),
      false,
    ],
    ['a rerank with one weight 0', (c) => void (c['systems'] = [{ id: 'r', kind: 'recency-rerank', inputs: ['bm25'], params: { base: 0 } }]), true],
    ['a chunked bm25', (c) => void (c['systems'] = [{ id: 'c', kind: 'chunk', params: { arm: { kind: 'bm25', params: { k1: 1.2 } } } }]), true],
    [
      'a chunked arm with an unknown param',
      (c) => void (c['systems'] = [{ id: 'c', kind: 'chunk', params: { arm: { kind: 'bm25', params: { k3: 1 } } } }]),
      false,
    ],
    ['an unknown system kind', (c) => void (c['systems'] = [{ id: 'x', kind: 'fusion', inputs: ['bm25'] }]), false],
    [
      'tune by folds',
      (c) => {
        c.arms.push(sweep);
        c['tune'] = { measure: 'nDCG@10', folds: 5 };
      },
      true,
    ],
    [
      'tune by folds and split',
      (c) => {
        c.arms.push(sweep);
        c['tune'] = { measure: 'nDCG@10', folds: 5, split: 'dev' };
      },
      false,
    ],
    ['an unknown comparison test', (c) => void (c.compare['test'] = 'z'), false],
    ['a gate without a measure', (c) => void delete c.gate['measure'], false],
    ['a split on a memory eval set', (c) => void (c.evalset = { ...c.evalset, split: 'test' } as Config['evalset']), false],
    ['options a memory eval set does not take', (c) => void (c.evalset = { ...c.evalset, options: { corpusFile: 'x' } } as Config['evalset']), false],
    ['judged qrels without judgments', (c) => void (c['qrels'] = 'gold+judged'), false],
    [
      'judged qrels with judgments',
      (c) => {
        c['qrels'] = 'gold+judged';
        c['judgments'] = join(dir, 'judgments');
      },
      true,
    ],
    ['a judge block with an unknown key', (c) => void (c['judge'] = { model: 'm', temperatur: 0 }), false],
    ['an expect entry without a value', (c) => void (c['expect'] = { bm25: { 'nDCG@10': { tolerance: 0.01 } } }), false],
    // Gaps: rules the loader alone checks (see the schema's $comment).
    ['an unknown measure', (c) => void (c.measures = ['nDCG@10', 'RR', 'Recal@10']), 'gap'],
    [
      'a rerank that keeps more than it fetches',
      (c) => void (c['systems'] = [{ id: 'l', kind: 'llm-rerank', inputs: ['bm25'], params: { fetch: 10, keep: 20 } }]),
      'gap',
    ],
  ];
  const validate = compileSchema();
  cases.forEach(([what, change, expected], i) => {
    it(`${expected === 'gap' ? 'gap' : expected ? 'both accept' : 'both refuse'}: ${what}`, () => {
      const cfg = base() as Config;
      change(cfg);
      const file = join(dir, `case-${i}.yaml`);
      writeFileSync(file, stringify(cfg));
      let loads = true;
      try {
        loadConfig(file, { env: {}, cwd: dir });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        loads = false;
      }
      const valid = validate(cfg);
      if (expected === 'gap') {
        expect({ loads, valid }).toEqual({ loads: false, valid: true });
      } else {
        expect(loads, `loader on ${what}`).toBe(expected);
        expect(valid, `schema on ${what}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(expected);
      }
    });
  });
});

describe('scripts/config-schema.ts', () => {
  it('refuses a refinement it has not been told how to express', () => {
    const s = z.object({ a: z.number().refine((x) => x > 1), b: z.string().transform((x) => x) });
    expect([...findRefinements(s)]).toEqual([
      ['a', { checks: 1, transforms: 0 }],
      ['b', { checks: 0, transforms: 1 }],
    ]);
  });
  it('describes every top-level key and names its gaps in $comment', () => {
    const schema = configJsonSchema();
    for (const [key, value] of Object.entries(schema['properties'] as Record<string, JsonSchema>)) expect(value['description'], key).toBeTypeOf('string');
    expect(schema['$comment']).toMatch(/keep does not exceed fetch/);
  });
  it('formats JSON on one line where it fits', () => {
    expect(formatJson({ a: [1, 2], b: { c: 'd' } })).toBe('{ "a": [1, 2], "b": { "c": "d" } }');
    expect(formatJson({ a: 'x'.repeat(20), b: 'y'.repeat(20) }, 30)).toBe(`{\n  "a": "${'x'.repeat(20)}",\n  "b": "${'y'.repeat(20)}"\n}`);
    expect(JSON.parse(formatJson(JSON.parse(committed), 40))).toEqual(JSON.parse(committed));
  });
});
