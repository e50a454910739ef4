import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReportData } from '../report/types.js';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';

// Fourteen memories, so an arm returns more than the top-10 the fusion diagnostics look at for every query.
const topics = ['dog park', 'cat food', 'garden tomato', 'river boat', 'piano lesson', 'train ticket', 'coffee shop'];
const corpus = Array.from({ length: 14 }, (_, i) => ({ id: `m${i}`, text: `${topics[i % 7]} note ${i}` }));
const queries = topics.slice(0, 4).map((t, k) => ({ id: `q${k}`, text: t, stratum: 'exact', qrels: { [`m${k}`]: 2, [`m${k + 7}`]: 1 } }));

function study(systems: string): string {
  const dir = tempDir('harness-quiet');
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
  writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
  writeFileSync(
    join(dir, 'study.yaml'),
    `name: quiet
evalset: { format: memory, path: es }
measures: [nDCG@10]
topK: 20
output: out
cache: cache
arms:
  - { id: a, kind: fake, params: { signal: 1 } }
  - { id: b, kind: fake, params: { seed: 1, signal: 0.3 } }
systems:
${systems}
compare: { baseline: a, permutations: 200, resamples: 200 }
`,
  );
  return dir;
}

function report(dir: string): ReportData {
  const [name] = readdirSync(join(dir, 'out'));
  return JSON.parse(readFileSync(join(dir, 'out', name as string, 'report.json'), 'utf8')) as ReportData;
}

describe('a first run says what the config causes, and only that', () => {
  it('labels the ends of an alpha sweep degenerate endpoints: an info note, no stderr warning unless --verbose', async () => {
    const dir = study('  - { id: cc, kind: fuse, inputs: [a, b], params: { method: cc, normalization: tm2c2 }, grid: { alpha: [0, 0.5, 1] } }');
    const r = await runCaptured(['ablate', '--config', 'study.yaml', '--jobs', '2'], dir);
    expect(r.code, r.log.join('\n')).toBe(0);
    expect(r.log.filter((l) => l.startsWith('warning:'))).toEqual([]);
    // The memory logger keeps detail lines (prefixed), which a plain stderr drops and --verbose prints.
    expect(r.log.filter((l) => l.startsWith('detail:'))).toEqual([
      expect.stringMatching(/^detail: cc\.alpha=0: input a can never place/),
      expect.stringMatching(/^detail: cc\.alpha=1: input b can never place/),
    ]);
    const warnings = report(dir).warnings;
    expect(warnings.filter((w) => w.severity === 'serious')).toEqual([]);
    expect(warnings.filter((w) => w.code === 'degenerate-grid-endpoint')).toEqual([
      {
        code: 'degenerate-grid-endpoint',
        severity: 'info',
        subject: 'cc',
        gate: false,
        message: expect.stringMatching(/^grid cc: alpha=0 gives a weight 0; alpha=1 gives b weight 0; those points are degenerate endpoints/),
      },
    ]);
    expect(readFileSync(join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string, 'report.md'), 'utf8')).toContain('off (weight 0: grid endpoint)');
  }, 120_000);

  it('still flags, as serious and on stderr, a weight that bars an input whose rival fills the top-10 in every query', async () => {
    // b's best document alone scores 0.3/61, below a's 10th at 1/70; a returns all 14 memories for every query.
    const dir = study('  - { id: w, kind: fuse, inputs: [a, b], params: { method: rrf, weights: { a: 1, b: 0.3 } } }');
    const r = await runCaptured(['ablate', '--config', 'study.yaml', '--jobs', '1'], dir);
    expect(r.code, r.log.join('\n')).toBe(0);
    expect(r.log.filter((l) => l.startsWith('warning:'))).toEqual([
      expect.stringMatching(/^warning: w: input b can never place a document only it ranks first/),
    ]);
    const data = report(dir);
    expect(data.runs.find((x) => x.id === 'w')?.diagnostics?.inputs.map((d) => [d.input, d.reachable])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(data.warnings.filter((w) => w.severity === 'serious').map((w) => [w.code, w.subject])).toEqual([['input-unreachable', 'w <- b']]);
  }, 120_000);
});
