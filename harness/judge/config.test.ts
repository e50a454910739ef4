import { join } from 'node:path';
import { keyEnvOf } from '../config/llm-endpoint.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { tempFolder } from '../testing/files.js';
import { PROJECT_ROOT } from '../testing/shared.js';

const example = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
const base = ['name: t', `evalset: { format: memory, path: ${JSON.stringify(example)} }`, 'measures: [nDCG@10]', 'arms:', '  - { id: a, kind: fake }'];

async function load(lines: string[]) {
  const dir = await tempFolder('judge-config', { 'c.yaml': [...base, ...lines].join('\n') });
  return loadConfig('c.yaml', { cwd: dir, env: {} });
}

describe('qrels, judgments and judge: in an ablation config', () => {
  it('default to gold, resolve the judgments folder, fill judge defaults, and keep the hash of configs without them', async () => {
    const plain = await load([]);
    expect(plain.qrels).toBe('gold');
    expect(plain.judge).toBeUndefined();
    const judged = await load(['qrels: gold+judged', 'judgments: j', 'judge: { model: m, local: true }']);
    expect(judged.qrels).toBe('gold+judged');
    expect(judged.judgments).toBe(join(judged.dir, 'j'));
    expect(judged.judge).toMatchObject({ model: 'm', local: true, depth: 10, samples: 1, prompt: 'umbrela-v1', provider: 'openai', batch: false });
    // No key variable named: the provider's.
    expect(keyEnvOf(judged.judge as NonNullable<typeof judged.judge>)).toBe('OPENAI_API_KEY');
    // The judge block is not hashed; the qrels choice is.
    const otherJudge = await load(['qrels: gold+judged', 'judgments: j', 'judge: { model: other, depth: 20 }']);
    expect(otherJudge.configHash).toBe(judged.configHash);
    expect(judged.configHash).not.toBe(plain.configHash);
  });

  it('report every problem at once: judged qrels without judgments, a misspelt judge key, a bad value', async () => {
    const err = await load(['qrels: judged', 'judge: { modle: m, depth: 0 }']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    expect(problems).toContain('qrels: "judged" reads judgments; add judgments:');
    expect(problems).toMatch(/judge\.modle: .*did you mean "model"/);
    expect(problems).toMatch(/judge\.depth: /);
    const bad = await load(['qrels: pooled']).catch((e: unknown) => e);
    expect((bad as ConfigError).problems.join('\n')).toMatch(/^qrels: /m);
  });
});
