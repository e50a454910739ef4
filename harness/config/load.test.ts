import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../errors.js';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { loadConfig } from './load.js';
import { tempDir } from '../testing/temp.js';

const dir = tempDir('harness-config');

const valid = `
name: tiny
evalset:
  format: memory
  path: es
measures: [nDCG@10, R@100]
arms:
  - id: a
    kind: fake
  - id: b
    kind: fake
    params: { seed: 2 }
`;

beforeAll(() => {
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), '{"id":"m1","text":"the dog is called Biscuit"}\n');
  writeFileSync(join(dir, 'es', 'queries.jsonl'), '{"id":"q1","text":"dog name","stratum":"exact","qrels":{"m1":3}}\n');
});

function write(name: string, text: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** The problems a config yields, without the `file: N problems` head line. */
function problemsOf(text: string, env: NodeJS.ProcessEnv = {}): readonly string[] {
  try {
    loadConfig(write('c', text), { env, cwd: dir });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadConfig', () => {
  it('accepts a valid config and fills defaults, resolving paths against the config folder', () => {
    const cfg = loadConfig(write('valid', valid), { cwd: '/' });
    expect(cfg.measures).toEqual(['nDCG@10', 'R@100']);
    expect(cfg.topK).toBe(1000);
    expect(cfg.relevanceLevel).toBe(1);
    expect(cfg.evalset.path).toBe(join(dir, 'es'));
    expect(cfg.plan.systems.map((a) => [a.id, a.kind])).toEqual([
      ['a', 'fake'],
      ['b', 'fake'],
    ]);
    expect(cfg.plan.systems[1]!.params).toEqual({ seed: 2, signal: 0.8, delayMs: 0 });
    expect(cfg.compare.correction).toBe('holm');
    expect(cfg.configHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('declares qrels completeness: the format default, evalset.qrels over it, a bad value refused (issue 41)', () => {
    expect(loadConfig(write('complete', valid), { cwd: '/' }).evalset.qrels).toBe('complete');
    const pooled = valid.replace('  path: es\n', '  path: es\n  qrels: pooled\n');
    expect(pooled).not.toBe(valid);
    expect(loadConfig(write('pooled', pooled), { cwd: '/' }).evalset.qrels).toBe('pooled');
    expect(problemsOf(valid.replace('  path: es\n', '  path: es\n  qrels: partial\n'))).toEqual([expect.stringMatching(/^evalset\.qrels: /)]);
  });

  it('gives the same hash for the same experiment however it is spelled, and another for another', () => {
    const a = loadConfig(write('h1', valid), { cwd: dir }).configHash;
    // Same content, other key order and YAML style: the hash is over canonical JSON, not the text.
    const reordered = valid.replace('measures: [nDCG@10, R@100]\n', '').replace('name: tiny\n', 'measures:\n  - nDCG@10\n  - R@100\nname: tiny\n');
    const b = loadConfig(write('h2', `${reordered}\noutput: elsewhere\n`), { cwd: dir }).configHash;
    const c = loadConfig(write('h3', valid.replace('seed: 2', 'seed: 3')), { cwd: dir }).configHash;
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });

  it('accepts YAML merge keys (<<: *anchor), an entry overriding what it merges', () => {
    const text = valid
      .replace('  - id: a\n    kind: fake\n', '  - &base\n    id: a\n    kind: fake\n    params: { seed: 7, signal: 0.5 }\n')
      .replace('  - id: b\n    kind: fake\n    params: { seed: 2 }\n', '  - <<: *base\n    id: b\n    label: merged\n');
    const cfg = loadConfig(write('merge', text), { cwd: dir });
    expect(
      cfg.plan.systems.map((x) => [x.id, x.kind, (x.params as Record<string, unknown>)['seed'], (x.params as Record<string, unknown>)['signal'], x.label]),
    ).toEqual([
      ['a', 'fake', 7, 0.5, undefined],
      ['b', 'fake', 7, 0.5, 'merged'],
    ]);
  });

  it('expands a measure preset in place', () => {
    const cfg = loadConfig(write('preset', valid.replace('[nDCG@10, R@100]', '[nDCG@10, longmemeval, R@100]')), { cwd: dir });
    expect(cfg.measures).toEqual(['nDCG@10', 'Success@5', 'R-all@5', 'nDCG-LME@5', 'Success@10', 'R-all@10', 'nDCG-LME@10', 'R@100']);
  });

  // Each malformed config with the exact message it must produce.
  const cases: [string, string, string[]][] = [
    ['unknown arm kind', valid.replace('kind: fake\n  - id: b', 'kind: bm52\n  - id: b'), ['arms[0].kind: unknown arm kind "bm52"']],
    ['typo in a top-level key', `${valid}\nmeasure: [RR]\n`, ['measure: unknown key "measure"; did you mean "measures"?']],
    [
      'typo in an arm param',
      valid.replace('{ seed: 2 }', '{ sed: 2 }'),
      ['arms[1].params.sed: unknown key "sed"; did you mean "seed"? (known: seed, signal, delayMs) [fake params: seed, signal, delayMs]'],
    ],
    [
      'missing eval-set folder',
      valid.replace('path: es', 'path: nowhere'),
      [`evalset.path: "nowhere" does not exist (resolved against the config's folder to ${join(dir, 'nowhere')})`],
    ],
    [
      'wrong type',
      valid.replace('{ seed: 2 }', '{ seed: "two" }'),
      ['arms[1].params.seed: Invalid input: expected number, received string [fake params: seed, signal, delayMs]'],
    ],
    ['duplicate arm id', valid.replace('id: b', 'id: a'), ['arms[1].id: duplicate id "a" (also arms[0])']],
    ['unknown measure', valid.replace('[nDCG@10, R@100]', '[nDCG@10, nDGC@10]'), ['measures[1]: ']],
    ['unknown eval-set format', valid.replace('format: memory', 'format: memroy'), ['evalset.format: unknown format "memroy"; did you mean "memory"?']],
    ['missing required key', valid.replace('name: tiny\n', ''), ['name: Invalid input: expected string, received undefined']],
    [
      'expect names no arm',
      `${valid}\nexpect:\n  c: { nDCG@10: { value: 0.5, tolerance: 0.01 } }\n`,
      ['expect.c: "c" is not a system id; did you mean "a"? (systems: a, b)'],
    ],
    [
      'expect names a measure not computed',
      `${valid}\nexpect:\n  a: { RR: { value: 0.5 } }\n`,
      ['expect.a.RR: not among measures (nDCG@10, R@100); add it there'],
    ],
    [
      'gate candidate unknown',
      `${valid}\ngate: { candidate: bb, measure: nDCG@10 }\n`,
      ['gate.candidate: "bb" is not a system id; did you mean "b"? (systems: a, b)'],
    ],
    [
      'bad arm id',
      valid.replace('id: b', 'id: "b c"'),
      ["arms[1].id: arm id must start with a letter or digit and use only letters, digits, '.', '_', '-', '+' and '='"],
    ],
    [
      'gate on a coverage diagnostic (refused at load, before any arm runs)',
      `${valid.replace('[nDCG@10, R@100]', '[nDCG@10, Judged@10]')}\ngate: { candidate: b, measure: judged@10 }\n`,
      ['gate.measure: "judged@10" is a coverage diagnostic, not a quality measure; gate on e.g. nDCG@10'],
    ],
    [
      'gate candidate is its own baseline',
      `${valid}\ncompare: { baseline: b }\ngate: { candidate: b, measure: nDCG@10 }\n`,
      ['gate.candidate: "b" is also the gate\'s baseline (compare.baseline, else the first system)'],
    ],
    ['negative topK', `${valid}\ntopK: -5\n`, ['topK: Too small: expected number to be >0']],
    ['YAML syntax error', 'name: [unclosed\n', ['line ']],
  ];

  it.each(cases)('%s', (_title, text, expected) => {
    const problems = problemsOf(text);
    for (const e of expected)
      expect(
        problems.some((p) => p.startsWith(e)),
        `expected a problem starting with\n  ${e}\ngot\n  ${problems.join('\n  ')}`,
      ).toBe(true);
  });

  it("refuses a sibling kind's form of a param (command's index: true on http) with the hint that tells them apart", () => {
    const problems = problemsOf(
      valid.replace('kind: fake\n    params: { seed: 2 }', 'kind: http\n    params: { search: { url: "http://127.0.0.1:9/s" }, index: true }'),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^arms\[1\]\.params\.index: Invalid input: expected object, received boolean \[http params: .*\]; hint: on http, index is the store request/,
    );
  });

  it('reports every problem at once', () => {
    const text = valid
      .replace('kind: fake\n  - id: b', 'kind: nope\n  - id: b')
      .replace('[nDCG@10, R@100]', '[nDCG@10, bogus]')
      .replace('path: es', 'path: nowhere');
    expect(problemsOf(text)).toHaveLength(3);
  });

  it('reports eleven mistakes in eleven blocks in one error, a schema mistake not hiding the others', () => {
    const text = `
name: tiny
descripton: typo at the top level
evalset: { format: memroy, path: es }
measures: [nDCG@10, bogus]
topK: -5
arms:
  - { id: a, kind: fake, params: { sead: 1 } }
  - { id: a, kind: fake }
  - { id: "b c", kind: fake }
  - { id: d, kind: bm52 }
systems:
  - { id: f, kind: fuse, inputs: [a, zz], params: { method: rrf } }
compare: { permutatons: 10 }
gate: { candidate: a, measure: RR }
`;
    const problems = problemsOf(text);
    for (const start of [
      'descripton: unknown key "descripton"; did you mean "description"?',
      'evalset.format: unknown format "memroy"; did you mean "memory"?',
      'measures[1]: ',
      'topK: ',
      'arms[0].params.sead: unknown key "sead"; did you mean "seed"?',
      'arms[1].id: duplicate id "a" (also arms[0])',
      'arms[2].id: arm id must start with a letter or digit',
      'arms[3].kind: unknown arm kind "bm52"; did you mean "bm25"?',
      'systems[0].inputs[1]: "zz" is not a system id',
      'compare.permutatons: unknown key "permutatons"; did you mean "permutations"?',
      'gate.measure: "RR" is not among measures',
    ]) {
      expect(
        problems.some((p) => p.startsWith(start)),
        `${start}\n---\n${problems.join('\n')}`,
      ).toBe(true);
    }
  });

  describe('one typo, one problem', () => {
    const study = `${valid}\ncompare: { baseline: a }\ngate: { candidate: b, measure: nDCG@10 }\nexpect:\n  a: { nDCG@10: { value: 0.5 } }\n`;
    it.each([
      ['a misspelt required key', study.replace('measures:', 'measurs:'), 'measurs: unknown key "measurs"; did you mean "measures"?'],
      ['a misspelt arms list', study.replace('arms:', 'arm:'), 'arm: unknown key "arm"; did you mean "arms"?'],
      ['a misspelt evalset', study.replace('evalset:', 'evalsett:'), 'evalsett: unknown key "evalsett"; did you mean "evalset"?'],
      ['a misspelt key inside a block', study.replace('measure: nDCG@10 }', 'measur: nDCG@10 }'), 'gate.measur: unknown key "measur"; did you mean "measure"?'],
      [
        'a misspelt key of an arm entry',
        study.replace('kind: fake\n  - id: b', 'knd: fake\n  - id: b'),
        'arms[0].knd: unknown key "knd"; did you mean "kind"?',
      ],
    ])('%s', (_title, text, only) => {
      const problems = problemsOf(text);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(only);
    });

    it('a missing block is one problem, and the checks that read it are skipped', () => {
      expect(problemsOf(study.replace('measures: [nDCG@10, R@100]\n', ''))).toEqual(['measures: Invalid input: expected array, received undefined']);
    });

    it('a typo beside a key that is present stays two problems', () => {
      const problems = problemsOf(study.replace('measure: nDCG@10 }', 'measure: 5, measur: nDCG@10 }'));
      expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['gate.measur', 'gate.measure']);
    });
  });

  it('checks arm requirements when the config loads, never printing values', async () => {
    const { armFactories } = await import('../../arms/registry.js');
    const fake = armFactories.fake as { requires?: unknown };
    const saved = fake.requires;
    fake.requires = { env: ['HARNESS_TEST_KEY'], packages: ['no-such-package-xyz'] };
    try {
      const problems = problemsOf(valid, {});
      expect(problems).toContain('arms[0]: fake needs the environment variable HARNESS_TEST_KEY; set it (its value is never printed), or remove arm "a"');
      expect(problems).toContain('arms[0]: fake needs the package "no-such-package-xyz"; install it with `npm install no-such-package-xyz`, or remove arm "a"');
    } finally {
      fake.requires = saved;
    }
  });
});

describe('harness ablate with a bad config', () => {
  it('exits 2 and prints file: path: message lines on stderr', async () => {
    const file = write('bad', valid.replace('kind: fake\n  - id: b', 'kind: bm52\n  - id: b'));
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await runCli(['ablate', '--config', file], { out: () => {}, log: memoryLogger(), env: {}, cwd: dir });
      expect(code).toBe(2);
      const printed = err.mock.calls.map((c) => String(c[0])).join('');
      expect(printed).toContain('bad.yaml: 1 problem\n  arms[0].kind: unknown arm kind "bm52"');
    } finally {
      err.mockRestore();
    }
  });

  it('exits 2 when the config file does not exist', async () => {
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const code = await runCli(['ablate', '--config', 'missing.yaml'], { out: () => {}, log: memoryLogger(), env: {}, cwd: dir });
      expect(code).toBe(2);
      expect(err.mock.calls.map((c) => String(c[0])).join('')).toContain('missing.yaml: 1 problem\n  config file not found');
    } finally {
      err.mockRestore();
    }
  });
});
