import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { tempDir } from '../testing/temp.js';

/** A memory eval set of `n` queries, in `strata` strata dealt in turn, each with one relevant document. */
function evalSet(dir: string, n: number, strata: number): void {
  mkdirSync(join(dir, 'es'));
  const docs = Array.from({ length: n }, (_, i) => JSON.stringify({ id: `m${i}`, text: `memory number ${i}` }));
  const queries = Array.from({ length: n }, (_, i) => JSON.stringify({ id: `q${i}`, text: `number ${i}`, stratum: `s${i % strata}`, qrels: { [`m${i}`]: 1 } }));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${docs.join('\n')}\n`);
  writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.join('\n')}\n`);
}

/** Runs `harness ablate` on a config in `dir`: exit code, stdout and stderr. */
async function ablate(dir: string, config: string): Promise<{ code: number; err: string }> {
  writeFileSync(join(dir, 'c.yaml'), config);
  let err = '';
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((t) => {
    err += String(t);
    return true;
  });
  try {
    const code = await runCli(['ablate', '--config', 'c.yaml'], { out: () => undefined, log: memoryLogger(), env: {}, cwd: dir });
    return { code, err };
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

const head = `name: t
evalset: { format: memory, path: es }
measures: [nDCG@10]
output: out
cache: cache
arms:
  - { id: a, kind: fake }
  - { id: b, kind: fake, params: { seed: 2 } }
`;

describe('plan validation at load', () => {
  it('a fusion listing itself is a config error (exit 2) naming it, before any system runs', async () => {
    const dir = tempDir('harness-plan-load');
    evalSet(dir, 4, 1);
    const r = await ablate(
      dir,
      `${head}systems:\n  - { id: f, kind: fuse, inputs: [a, f], params: { method: rrf } }\ngate: { candidate: f, measure: nDCG@10 }\n`,
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain('systems[0].inputs: "f" lists itself as an input');
    // Refused at load: nothing ran, so no report folder and no cache exist.
    expect(existsSync(join(dir, 'out'))).toBe(false);
    expect(existsSync(join(dir, 'cache'))).toBe(false);
  });

  it('two fusions reading each other are a config error naming the cycle', async () => {
    const dir = tempDir('harness-plan-load');
    evalSet(dir, 4, 1);
    const r = await ablate(
      dir,
      `${head}systems:\n  - { id: f, kind: fuse, inputs: [a, g], params: { method: rrf } }\n  - { id: g, kind: fuse, inputs: [f, b], params: { method: rrf } }\n`,
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain('systems[0].inputs: the inputs form a cycle, "f" -> "g" -> "f" (each reads the next)');
    expect(r.err).not.toContain('listed after');
  });
});

describe('tuning needs two folds with training queries', () => {
  const tuned = `${head.replace('  - { id: b, kind: fake, params: { seed: 2 } }\n', '  - { id: g, kind: fake, grid: { seed: [1, 2] } }\n')}tune: { measure: nDCG@10, folds: 5 }\n`;

  it('one query is a config error at load (exit 2), not "1-fold cross-validation" picked on nothing', async () => {
    const dir = tempDir('harness-plan-load');
    evalSet(dir, 1, 1);
    const r = await ablate(dir, tuned);
    expect(r.code).toBe(2);
    expect(r.err).toContain('tune.folds: cross-validation needs queries in at least two folds');
    expect(r.err).toContain('the 1 query fills one fold');
  });

  it('strata of one query each fill one fold too, and are refused the same way', async () => {
    const dir = tempDir('harness-plan-load');
    evalSet(dir, 3, 3);
    const r = await ablate(dir, tuned);
    expect(r.code).toBe(2);
    expect(r.err).toContain('the 3 queries fill one fold (queries are dealt to folds within their stratum, and the largest of 3 strata has 1)');
  });

  it('two queries of one stratum make two folds, and the ablation runs', async () => {
    const dir = tempDir('harness-plan-load');
    evalSet(dir, 2, 1);
    const r = await ablate(dir, tuned);
    expect(r.err).not.toContain('tune.folds');
    expect(r.code).toBe(0);
  });
});
