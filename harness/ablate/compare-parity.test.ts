import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import type { ReportData } from '../decision/types.js';
import { tempDir } from '../testing/temp.js';

// Twelve memories, eight queries in two strata, two fake arms: enough for non-trivial p values.
const corpus = Array.from({ length: 12 }, (_, i) => ({
  id: `m${String(i + 1).padStart(2, '0')}`,
  text: `${['dog park walk', 'cat food brand', 'dentist Friday', 'vet clinic street', 'sister Lisbon move', 'brother Austin firefighter'][i % 6]} note ${i}`,
}));
const queries = Array.from({ length: 8 }, (_, i) => ({
  id: `q${i + 1}`,
  text: ['dog walk', 'cat brand', 'dentist', 'vet street', 'Lisbon sister', 'Austin brother', 'food', 'park note'][i],
  stratum: i % 2 === 0 ? 'exact' : 'paraphrase',
  qrels: { [corpus[i % 6]!.id]: 2, [corpus[(i % 6) + 6]!.id]: 1 },
}));

describe('harness compare on the files an ablation wrote', () => {
  it('reproduces every mean, p and corrected p of the ablation exactly', async () => {
    const dir = tempDir('harness-parity');
    mkdirSync(join(dir, 'es'));
    writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
    // Written out of id order: compare reads the queries in id order, so the random draws must not depend on order.
    const shuffled = [5, 2, 7, 0, 3, 6, 1, 4].map((i) => queries[i]!);
    writeFileSync(join(dir, 'es', 'queries.jsonl'), `${shuffled.map((q) => JSON.stringify(q)).join('\n')}\n`);
    writeFileSync(
      join(dir, 'study.yaml'),
      `name: parity
evalset: { format: memory, path: es }
measures: [nDCG@10, RR]
topK: 10
output: out
cache: cache
arms:
  - { id: a, kind: fake, params: { signal: 1 } }
  - { id: b, kind: fake, params: { seed: 3, signal: 0.4 } }
  - { id: c, kind: fake, params: { seed: 5, signal: 0.7 } }
compare: { baseline: a, permutations: 2000, resamples: 2000, seed: 7 }
`,
    );
    const io = (log = memoryLogger()) => ({ out: () => {}, log, env: {}, cwd: dir });
    expect(await runCli(['ablate', '--config', join(dir, 'study.yaml')], io())).toBe(0);
    const folder = join(dir, 'out', readdirSync(join(dir, 'out'))[0]!);
    const ablation = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as ReportData;

    const args = [
      'compare',
      ...['a', 'b', 'c'].map((r) => join(folder, 'runs', `${r}.trec`)),
      '--qrels',
      join(folder, 'qrels.trec'),
      '--strata',
      join(folder, 'strata.tsv'),
    ];
    args.push('--measures', 'nDCG@10,RR', '--baseline', 'a', '--permutations', '2000', '--resamples', '2000', '--seed', '7', '--out', join(dir, 'cmp'));
    expect(await runCli(args, io())).toBe(0);
    const compared = JSON.parse(readFileSync(join(dir, 'cmp', 'report.json'), 'utf8')) as ReportData;

    const key = (c: ReportData['comparisons'][number]) => `${c.stratum} ${c.measure} ${c.baseline} ${c.system}`;
    const pick = (d: ReportData) =>
      Object.fromEntries(
        d.comparisons.map((c) => [
          key(c),
          { base: c.baselineMean, sys: c.systemMean, p: c.p, pAdjusted: c.pAdjusted, ci: c.ci, ciLevel: c.ciLevel, role: c.role },
        ]),
      );
    expect(Object.keys(pick(ablation)).length).toBeGreaterThan(0);
    expect(pick(compared)).toEqual(pick(ablation));
  });
});
