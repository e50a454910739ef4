import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Installed, installPackage, step } from './package.js';

/**
 * `harness power` from the installed package, planned on a pilot report the same binary wrote: no judge, no
 * network, only the pilot's numbers.
 */

let study: Installed;
let pilot = '';

beforeAll(async () => {
  study = await installPackage();
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  await step(study, 'ablate example (the pilot)', ['ablate', '--config', 'configs/example.yaml']);
  const reports = readdirSync(join(study.dir, 'reports')).filter((d) => d.startsWith('example-'));
  pilot = join('reports', reports[0] as string, 'report.json');
}, 600_000);

afterAll(() => study?.remove());

describe('harness power from the installed package', { shuffle: false }, () => {
  it('prints queries and human labels per stratum for the gate comparison of the pilot', async () => {
    const ran = await step(study, 'power', ['power', '--pilot', pilot, '--delta', '0.03', '--width', '0.03', '--rho', '0.8']);
    // The example's gate: fts5 vs bm25 on nDCG@10, 3 strata and the overall row, so 4 Holm-corrected tests.
    expect(ran.stdout).toContain('nDCG@10 (fts5 vs bm25)');
    expect(ran.stdout).toContain('alpha/m = 0.05/4 = 0.01250 (holm; gate family of 4 tests in the pilot report)');
    for (const stratum of ['exact', 'paraphrase', 'multi-hop', 'all'])
      expect(ran.stdout).toMatch(new RegExp(`^\\s+${stratum}\\s+\\d+\\s+0\\.\\d{4}\\s+\\d+\\s+\\d+`, 'm'));
  });

  it('--json agrees with the table, and the family can come from the config', async () => {
    const ran = await step(study, 'power --json', [
      'power',
      '--pilot',
      pilot,
      '--delta',
      '0.03',
      '--config',
      'configs/example.yaml',
      '--family',
      'exploratory',
      '--json',
    ]);
    const plan = JSON.parse(ran.stdout) as { familySize: number; threshold: number; rows: { stratum: string; pilotN: number; queries: number }[] };
    expect(plan.familySize).toBe(80);
    expect(plan.threshold).toBeCloseTo(0.05 / 80, 15);
    expect(plan.rows.map((r) => r.stratum)).toEqual(['exact', 'paraphrase', 'multi-hop', 'all']);
    expect(plan.rows.every((r) => r.queries >= 2 && r.pilotN > 0)).toBe(true);
  });

  it('exits 2 naming the flag on a bad value', async () => {
    const ran = await step(study, 'power bad delta', ['power', '--pilot', pilot, '--delta', '-0.1'], { code: 2 });
    expect(ran.stderr).toMatch(/--delta -0\.1: give the difference to detect/);
  });
});
