import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentStore } from '../cache/index.js';
import { loadConfig, type ResolvedConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { runPlan } from '../execution/run-plan.js';
import { memoryLogger } from '../log.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';
import { loadStudy } from './load.js';
import { manifestOf, type PhaseTimings, systemSummaries } from './manifest.js';
import { reportInputOf } from './report-input.js';
import { ablationSummary } from './summary.js';
import { scoreAblation } from './score.js';

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');

/** A study over the bundled example: two BM25 points in a grid tuned by 3-fold cross-validation, and FTS5. */
function config(dir: string, extra = ''): ResolvedConfig {
  const file = join(dir, 'study.yaml');
  writeFileSync(
    file,
    `name: stages
evalset: { format: memory, path: ${EXAMPLE} }
measures: [nDCG@10, RR, Judged@10]
topK: 20
arms:
  - { id: bm25, kind: bm25, params: { preset: lucene }, grid: { k1: [0.9, 1.2] } }
  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }
tune: { measure: nDCG@10, folds: 3 }
compare: { baseline: fts5, permutations: 500, resamples: 200 }
output: out
cache: cache
${extra}`,
  );
  return loadConfig(file, { env: {}, cwd: dir });
}

async function stages(cfg: ResolvedConfig) {
  const log = memoryLogger();
  const study = await loadStudy(cfg, log);
  const store = new ContentStore(cfg.cache, { log });
  const executed = await runPlan(cfg, study.scopes, { store, log, env: {}, jobs: 1 });
  return { study, store, executed, scored: scoreAblation(cfg, study, executed) };
}

describe('the stages of an ablation', () => {
  it('loadStudy checks every later failure before any work, all at once', async () => {
    const dir = tempDir('harness-stages');
    writeFileSync(join(dir, 'out'), 'a file where the report folder goes');
    const cfg = config(dir, 'unit: session\n');
    const err = await loadStudy(cfg, memoryLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      `output: ${join(dir, 'out')} is a file, not a folder; point output (or --output) at a folder`,
      expect.stringMatching(/^unit: eval set .* has no unit "session"/),
    ]);
  });

  it('runPlan gives every system an outcome in plan order; a second run reads every scope run from the cache', async () => {
    const dir = tempDir('harness-stages');
    const cfg = config(dir);
    const { study, store, executed } = await stages(cfg);
    expect([...executed.outcomes.keys()]).toEqual(cfg.plan.systems.map((s) => s.id));
    expect([...executed.outcomes.values()].every((o) => o.cache.misses === study.scopes.length)).toBe(true);
    const again = await runPlan(cfg, study.scopes, { store, log: memoryLogger(), env: {}, jobs: 2 });
    expect([...again.outcomes.values()].map((o) => o.cache)).toEqual([...executed.outcomes.values()].map(() => ({ hits: study.scopes.length, misses: 0 })));
    for (const [id, o] of again.outcomes) expect(o.run, id).toEqual(executed.outcomes.get(id)?.run);
  }, 60_000);

  it('scoreAblation scores every run and tuned system on every query, means from the per-query values', async () => {
    const dir = tempDir('harness-stages');
    const cfg = config(dir);
    const { study, scored } = await stages(cfg);
    const n = study.es.queries.length;
    expect(Object.keys(scored.perQuery)).toEqual(cfg.runIds);
    for (const id of cfg.runIds) {
      for (const m of cfg.measures) {
        const values = scored.perQuery[id]?.[m] as number[];
        expect(values).toHaveLength(n);
        expect(scored.means.get(id)?.get(m)).toBeCloseTo(values.reduce((a, b) => a + b, 0) / n, 12);
      }
    }
    expect(scored.tuned.map((t) => t.id)).toEqual(['bm25.tuned']);
    expect([...scored.runs.keys()]).toEqual(cfg.runIds);
    // No gate: the example pair is the baseline against the best mean on the first tested measure.
    expect(scored.examples?.baseline).toBe('fts5');
    expect(scored.examples?.measure).toBe('nDCG@10');
  }, 60_000);

  it('reportInputOf, manifestOf and ablationSummary read the stage values, nothing else', async () => {
    const dir = tempDir('harness-stages');
    const cfg = config(dir);
    const { study, store, executed, scored } = await stages(cfg);
    const input = reportInputOf(cfg, study, executed, scored, 'harness ablate --config study.yaml');
    expect(input.runs.map((r) => r.id)).toEqual(cfg.runIds);
    expect(input.runs.at(-1)?.kind).toBe('tuned');
    expect(input.evalset.queries).toBe(study.es.queries.length);
    expect(input.perQuery).toBe(scored.perQuery);
    const systems = systemSummaries(executed, study.sensitiveDocuments);
    const timings = {
      jobs: 1,
      loadMs: 1,
      executeMs: 2,
      indexMs: 3,
      searchMs: 4,
      fuseMs: 0,
      evaluateMs: 5,
      statisticsMs: 6,
      reportMs: 7,
      totalMs: 8,
    } satisfies PhaseTimings;
    const parts = { dir: join(cfg.output, 'stages-x'), command: input.command, study, systems, tuned: scored.tuned, store, startedAt: 'then' };
    const manifest = JSON.parse(manifestOf(cfg, parts, timings, 'now')) as Record<string, unknown>;
    expect(Object.keys(manifest)).toEqual([
      'manifestVersion',
      'name',
      'configFile',
      'configHash',
      'command',
      'git',
      'packages',
      'evalset',
      'systems',
      'tuned',
      'cache',
      'timings',
      'startedAt',
      'finishedAt',
    ]);
    expect([manifest['configFile'], manifest['timings'], manifest['finishedAt']]).toEqual(['../../study.yaml', timings, 'now']);
    const summary = ablationSummary(
      cfg,
      { reportDir: parts.dir, evalSet: study.es, runs: scored.runs, means: scored.means, systems, tuned: scored.tuned, input },
      dir,
    );
    // Grid members are in the report, not in the summary: the tuned system stands for its grid.
    expect(summary.split('\n').slice(0, 3)).toEqual([
      `stages: ${study.es.queries.length} queries, 3 system(s), 2 of them in grids (every one is in the report)`,
      `  ${'run'.padEnd('bm25.tuned'.length)}  ${['nDCG@10', 'RR', 'Judged@10'].map((m) => m.padStart(10)).join(' ')}`,
      expect.stringMatching(/^ {2}fts5 {8}/),
    ]);
    expect(summary).toContain('  bm25.tuned: ');
    expect(summary.trimEnd().split('\n').at(-1)).toBe('report: out/stages-x/report.md');
  }, 60_000);
});

describe('permutations that can find a difference (docs/adr/0039)', () => {
  // This study's exploratory family: bm25 k1=0.9, k1=1.2 and bm25.tuned against fts5 x 4 rows x 2 tested
  // measures = 24 tests; at alpha 0.001 its first Holm threshold is 0.001/24, so B must reach 24,000.
  it('raises a count the config left at its default, saying so on stderr, and the report draws that many', async () => {
    const log = memoryLogger();
    const study = await loadStudy(withCompare(tempDir(), '{ baseline: fts5, alpha: 0.001 }'), log);
    expect(study.compare.permutations).toBe(24_000);
    expect(log.lines.join('\n')).toContain('compare.permutations raised from 10000 to 24000 so family randomization (24 tests');
  });

  it('refuses a count the config set, naming compare.permutations and the count needed', async () => {
    const cfg = withCompare(tempDir(), '{ baseline: fts5, alpha: 0.001, permutations: 20000 }');
    const err = await loadStudy(cfg, memoryLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    expect((err as Error).message).toContain('compare.permutations: 20000 draws cannot make any test of family randomization (24 tests');
    expect((err as Error).message).toContain('set it to at least 24000');
  });
});

describe('gate rule equivalent at load', () => {
  it('refuses a margins key that names no stratum and a stratum left without a margin, together', async () => {
    const cfg = config(
      tempDir(),
      'gate: { candidate: bm25.tuned, measure: nDCG@10, rule: equivalent, margins: { overall: 0.02, exact: 0.02, paraphrse: 0.03 } }',
    );
    const err = await loadStudy(cfg, memoryLogger()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'gate.margins.paraphrse: no stratum paraphrse in the eval set (strata: exact, paraphrase, multi-hop; overall names the overall row)',
      'gate.margins.paraphrase: rule equivalent needs a margin for every stratum; add it or set gate.margin',
      'gate.margins.multi-hop: rule equivalent needs a margin for every stratum; add it or set gate.margin',
    ]);
  });
});

/** The study above with its compare block replaced. */
function withCompare(dir: string, compare: string): ResolvedConfig {
  const file = config(dir).file;
  writeFileSync(file, readFileSync(file, 'utf8').replace(/^compare: .*$/m, `compare: ${compare}`));
  return loadConfig(file, { env: {}, cwd: dir });
}
