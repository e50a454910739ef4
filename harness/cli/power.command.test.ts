import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { runCaptured } from '../testing/cli.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { fixtureInput } from '../report/testdata/fixture.js';
import { writeReport } from '../report/write.js';
import { labelsNeeded, queriesNeeded } from '../stats/power.js';
import { parseSds, planPower } from './power.command.js';

const dir = mkdtempSync(join(tmpdir(), 'harness-power-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const base = { delta: 0.03, family: 'gate' as const, json: true };
beforeAll(async () => {
  await writeReport(join(dir, 'pilot'), fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
});

describe('harness power on a pilot report', () => {
  it('plans every stratum of the gate comparison from the pilot n and sd, at the gate family alpha/m', async () => {
    // The fixture's gate: dense vs bm25 on nDCG@10, rule gain-overall-no-loss, so 3 gate tests (exact,
    // paraphrase, all). Differences: exact 0 x12; paraphrase 0.2, 0.4 alternating (sd sqrt(0.12/11));
    // all: 12 zeros, 6 x 0.2, 6 x 0.4, mean 0.15, sum of squares 0.66 (sd sqrt(0.66/23)).
    const out = JSON.parse(await planPower({ ...base, pilot: join(dir, 'pilot', 'report.json'), width: 0.05, rho: 0.8 }, dir));
    expect(out).toMatchObject({ measure: 'nDCG@10', pair: { baseline: 'bm25', system: 'dense' }, familySize: 3, correction: 'holm', power: 0.8 });
    expect(out.threshold).toBeCloseTo(0.05 / 3, 15);
    const sds = { exact: 0, paraphrase: Math.sqrt(0.12 / 11), all: Math.sqrt(0.66 / 23) };
    expect(out.rows.map((r: { stratum: string }) => r.stratum)).toEqual(['exact', 'paraphrase', 'all']);
    for (const r of out.rows as { stratum: keyof typeof sds; sd: number; pilotN: number; queries: number; labels: number }[]) {
      expect(r.sd).toBeCloseTo(sds[r.stratum], 12);
      const queries = queriesNeeded(sds[r.stratum], 0.03, { alpha: 0.05 / 3, power: 0.8 });
      expect(r.queries).toBe(queries);
      expect(r.pilotN).toBe(r.stratum === 'all' ? 24 : 12);
      const judged = Math.max(queries, r.pilotN);
      expect(r.labels).toBe(labelsNeeded({ sdJudge: sds[r.stratum], rho: 0.8, halfWidth: 0.05, alpha: 0.05 / 3, judged }).labels);
    }
    // Paraphrase by hand: sd 0.10445, delta 0.03 at 0.05/3: n ~ ((2.394 + 0.842) * 0.10445 / 0.03)^2 ~ 127, a
    // little more under t quantiles.
    expect(out.rows[1].queries).toBeGreaterThanOrEqual(127);
    expect(out.rows[1].queries).toBeLessThan(135);
  });

  it('prints a table with the rule and the level above it', async () => {
    const text = await planPower({ ...base, json: false, pilot: join(dir, 'pilot') }, dir);
    expect(text).toContain('alpha/m = 0.05/3 = 0.01667 (holm; gate family of 3 tests in the pilot report)');
    expect(text).toMatch(/paraphrase\s+12\s+0\.1044\s+\d+/);
  });
});

describe('harness power --pilot on a report without a gate', () => {
  it('says so naming the report and what to add (exit 2), never an unexpected failure; --family exploratory plans', async () => {
    await writeReport(join(dir, 'nogate'), fixtureInput());
    const r = await runCaptured(['power', '--pilot', join(dir, 'nogate'), '--delta', '0.03'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`harness: ${join(dir, 'nogate', 'report.json')}: the pilot report has no gate, so there is no gate family to plan for`);
    expect(r.stderr).toContain(
      'hint: add a gate: block (candidate, baseline, measure) to the pilot config and run it again, or plan with --family exploratory',
    );
    expect(r.stderr).not.toContain('unexpected failure');
    const explore = await runCaptured(['power', '--pilot', join(dir, 'nogate'), '--delta', '0.03', '--family', 'exploratory', '--json'], dir);
    expect(explore.code, explore.stderr).toBe(0);
    expect(JSON.parse(explore.out).rows.length).toBeGreaterThan(0);
  });

  it('a config without a gate under --family gate is a config error naming the file (exit 2)', async () => {
    const config = join(PROJECT_ROOT, 'configs', 'example.yaml');
    const { writeFileSync, readFileSync } = await import('node:fs');
    const noGate = join(dir, 'nogate.yaml');
    // The example without its gate block, its relative paths made absolute.
    writeFileSync(
      noGate,
      readFileSync(config, 'utf8')
        .replace(/^gate:[\s\S]*?(?=^\S)/m, '')
        .replaceAll('../', `${PROJECT_ROOT}/`),
    );
    const r = await runCaptured(['power', '--sd', '0.2', '--delta', '0.03', '--config', noGate], PROJECT_ROOT);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${noGate}: 1 problem`);
    expect(r.stderr).toContain('--family gate: the config declares no gate (add a gate: block)');
  });
});

describe('harness power reads the judge-human correlation from a pilot scored with human labels', () => {
  it('takes rho from the labelled queries when --rho is not given, and refuses --width on a pilot without labels', async () => {
    const input = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } });
    const ids = ['q13', 'q14', 'q15', 'q16', 'q17', 'q18'];
    // Every run and measure as the judge scored q13-q18, but nDCG@10 of bm25 and dense as the humans did.
    const at = (v: readonly number[]) => v.slice(12, 18);
    const human = Object.fromEntries(
      Object.entries(input.perQuery).map(([run, ms]) => [run, Object.fromEntries(Object.entries(ms).map(([m, v]) => [m, at(v)]))]),
    );
    human.bm25 = { ...human.bm25, 'nDCG@10': [0.2, 0.2, 0.3, 0.1, 0.25, 0.2] };
    human.dense = { ...human.dense, 'nDCG@10': [0.35, 0.65, 0.4, 0.5, 0.4, 0.55] };
    const humanLabels = {
      file: 'labels.qrels',
      kind: 'qrels' as const,
      qrelsVersion: 'v',
      queries: ids,
      incomplete: 0,
      perQuery: human,
      pairs: [],
      thresholds: { minTau: 0.9, minQueries: 25, resamples: 200 },
    };
    await writeReport(join(dir, 'labelled'), { ...input, humanLabels });
    const out = JSON.parse(await planPower({ ...base, pilot: join(dir, 'labelled'), width: 0.05 }, dir));
    // numpy.corrcoef of the human deltas (0.15, 0.45, 0.1, 0.4, 0.15, 0.35) and the judge's (0.2, 0.4 alternating).
    expect(out.ppi.rho).toBeCloseTo(0.970142500145332, 12);
    await expect(planPower({ ...base, pilot: join(dir, 'pilot'), width: 0.05 }, dir)).rejects.toThrow(/has no human labels .* give --rho/);
  });
});

describe('harness power from given numbers', () => {
  it('reads --sd per stratum, the overall row last, one test without a config', async () => {
    expect(parseSds(['0.2', 'exact=0.15'])).toEqual([
      { id: 'all', sd: 0.2 },
      { id: 'exact', sd: 0.15 },
    ]);
    const out = JSON.parse(await planPower({ ...base, sd: ['0.2', 'exact=0.15'] }, dir));
    expect(out.rows.map((r: { stratum: string; queries: number }) => [r.stratum, r.queries])).toEqual([
      ['exact', queriesNeeded(0.15, 0.03, { alpha: 0.05, power: 0.8 })],
      ['all', 351],
    ]);
  });

  it('counts the family over the config eval set when there is no pilot', async () => {
    // configs/example.yaml: gate fts5 vs bm25 over 3 strata and the overall row; 3 pairs x 4 rows x 7 tested
    // measures (F1-LoCoMo and EM among them) less the gate's 4 = 80 exploratory tests.
    const config = join(PROJECT_ROOT, 'configs', 'example.yaml');
    const gate = JSON.parse(await planPower({ ...base, sd: ['0.2'], config }, dir));
    expect([gate.familySize, gate.correction, gate.threshold]).toEqual([4, 'holm', 0.0125]);
    const explore = JSON.parse(await planPower({ ...base, sd: ['0.2'], config, family: 'exploratory' }, dir));
    expect(explore.familySize).toBe(80);
  });

  it('refuses bad flags with exit 2, naming the flag', async () => {
    const bad = async (a: Record<string, unknown>, flag: RegExp) => {
      const err = await planPower({ ...base, sd: ['0.2'], ...a } as Parameters<typeof planPower>[0], dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).exitCode).toBe(2);
      expect((err as Error).message).toMatch(flag);
    };
    await bad({ delta: 0 }, /^--delta 0/);
    await bad({ power: 1.2 }, /^--power 1.2/);
    await bad({ sd: ['exact=x'] }, /^--sd exact=x/);
    await bad({ width: 0.03 }, /^--width needs --rho/);
    await bad({ width: 0.03, rho: 2 }, /^--rho 2/);
    await bad({ pilot: 'x' }, /--pilot .* or --sd/);
  });
});
