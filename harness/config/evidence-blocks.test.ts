import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { tempDir } from '../testing/temp.js';
import { loadConfig } from './load.js';

/** `humanLabels:`, `validation:` and `gate.judged` at config load (docs/adr/0038). */
const dir = tempDir('harness-config-evidence');

const head = `
name: tiny
evalset:
  format: memory
  path: es
measures: [nDCG@10]
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
  writeFileSync(join(dir, 'human.qrels'), 'q1 0 m1 3\n');
});

function problems(text: string): readonly string[] {
  const file = join(dir, 'c.yaml');
  writeFileSync(file, head + text);
  try {
    loadConfig(file, { cwd: dir });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('human labels in the config', () => {
  it('humanLabels resolves beside the config; validation thresholds get their defaults', () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, `${head}qrels: judged\njudgments: j\nhumanLabels: human.qrels\n`);
    const cfg = loadConfig(file, { cwd: dir });
    expect(cfg.humanLabels).toEqual({ path: join(dir, 'human.qrels'), asWritten: 'human.qrels' });
    expect(cfg.validation).toEqual({ minTau: 0.9, minQueries: 25, resamples: 2000 });
  });

  it('gate.judged: ppi without human labels, or on gold qrels, is refused at load', () => {
    expect(problems('qrels: judged\njudgments: j\ngate: { candidate: b, measure: nDCG@10, judged: ppi }\n')).toContain(
      'gate.judged: "ppi" corrects the judged deltas with human labels; add humanLabels: <kappa session or TREC qrels> (harness kappa --by query)',
    );
    expect(problems('gate: { candidate: b, measure: nDCG@10, judged: ppi }\n')).toContain(
      'gate.judged: "ppi" corrects a judge\'s bias, and qrels is gold (no judge); remove gate.judged or set qrels: judged / gold+judged',
    );
  });

  it('human labels on gold qrels, a missing labels file and a bad threshold are named', () => {
    expect(problems('humanLabels: human.qrels\n')).toContain(
      'humanLabels: human labels validate a judge, and qrels is gold; set qrels: judged or gold+judged, or remove humanLabels',
    );
    const p = problems('qrels: judged\njudgments: j\nhumanLabels: nope.qrels\nvalidation: { minTau: 2, minQeries: 3 }\n');
    expect(p.some((x) => x.startsWith(`humanLabels: ${join(dir, 'nope.qrels')} is not a file`))).toBe(true);
    expect(p.some((x) => x.startsWith('validation.minTau'))).toBe(true);
    expect(p.some((x) => x.includes('minQeries'))).toBe(true);
  });

  it('the labels and thresholds are hashed (they change the report); a config without them keeps its hash', () => {
    const a = join(dir, 'a.yaml');
    const b = join(dir, 'b.yaml');
    writeFileSync(a, `${head}qrels: judged\njudgments: j\n`);
    writeFileSync(b, `${head}qrels: judged\njudgments: j\nhumanLabels: human.qrels\n`);
    expect(loadConfig(a, { cwd: dir }).configHash).not.toBe(loadConfig(b, { cwd: dir }).configHash);
  });
});
