import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { evalSetFingerprint } from '../../evalset/fingerprint.js';
import { formatTrecQrels, formatTrecRun } from '../../evalset/trec.js';
import type { EvalSet, JsonValue, Query, Run } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import { scoreRuns } from '../compare/score.js';
import type { ResolvedConfig } from '../config/load.js';
import { ConfigError, HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { parseMeasure } from '../metrics/index.js';
import { relevanceLevelProblem } from '../metrics/evaluate.js';
import type { GateResult, ReportInput, ReportRun } from '../report/types.js';
import { buildReportData, writeReportData } from '../report/index.js';
import { probePlan } from '../systems/probe.js';
import type { ScopeData } from '../systems/types.js';
import { gitState, packageVersions } from '../util/project.js';
import { type QrelsChoice, withChosenQrels } from '../judge/qrels.js';
import { costs, queryExamples, recallCurves } from './evidence.js';
import { executePlan, type SystemOutcome } from './execute.js';
import { autoJobs } from './pool.js';
import { runKey } from './scope-run.js';
import { loadConfiguredEvalSet, scopesOf, scoringUnit } from './scopes.js';
import { countSensitive, sensitiveProblems, sensitiveSummary } from './sensitive.js';
import { tuneByFolds, tuneBySplit, type TunedSystem } from './tune.js';

export { formatVerify, verify, type VerifyLine, type VerifyStatus } from './verify.js';

export interface SystemSummary {
  readonly id: string;
  readonly node: string;
  readonly kind: string;
  readonly inputs: readonly string[];
  readonly fingerprint: JsonValue;
  readonly fingerprintHash: string;
  readonly indexStats: Readonly<Record<string, number>>;
  readonly indexMs: number;
  readonly searchMs: number;
  readonly cache: { readonly hits: number; readonly misses: number };
  /** Sensitive Documents kept from a system that sends text off this machine, and how. */
  readonly sensitive?: ReportRun['sensitive'];
}

export interface AblateResult {
  readonly reportDir: string;
  readonly evalSet: EvalSet;
  readonly runs: ReadonlyMap<string, Run>;
  /** runId -> measure -> mean over all eval-set queries (missing queries count 0); tuned systems included. */
  readonly means: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly systems: readonly SystemSummary[];
  readonly tuned: readonly TunedSystem[];
  readonly input: ReportInput;
  /** The gate's verdict, as report.json records it. */
  readonly gate?: GateResult;
}

export function reportDirOf(cfg: ResolvedConfig): string {
  return join(cfg.output, `${cfg.name}-${cfg.configHash.slice(0, 8)}`);
}

/** What the runner needs from its caller: where to log, the environment arms may read, the regenerating command. */
export interface AblateContext {
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly command: string;
  /** System ids to recompute instead of serving from the run cache (`--refresh`); everything downstream follows. */
  readonly refresh?: readonly string[];
  /** Worker threads for systems and scopes (`--jobs`); 1 runs serially; default `auto` ({@link autoJobs}). */
  readonly jobs?: number | 'auto';
}

/**
 * Wall time of each phase of one ablation, in milliseconds, as the manifest records it. `index`, `search` and
 * `fuse` are the times the computed (system, scope) runs reported, summed over every thread: with jobs > 1
 * they overlap and their sum can exceed `execute`, the wall time of running the plan.
 */
export interface PhaseTimings {
  readonly jobs: number;
  readonly loadMs: number;
  readonly executeMs: number;
  readonly indexMs: number;
  readonly searchMs: number;
  readonly fuseMs: number;
  readonly evaluateMs: number;
  readonly statisticsMs: number;
  /** Writing the runs, qrels and renderings (the folder's final write comes after the manifest is made). */
  readonly reportMs: number;
  readonly totalMs: number;
}

/** The eval set, its dev split when a grid is tuned on one, and the scopes that cover both query sets. */
interface Loaded {
  readonly es: EvalSet;
  readonly qrels: QrelsChoice;
  readonly dev?: EvalSet;
  readonly scopes: readonly ScopeData[];
  /** Documents flagged sensitive in the eval set (and its dev split). */
  readonly sensitiveDocuments: number;
}

/** Why the report folder cannot be written, found before any work; undefined when it can. */
async function outputProblem(cfg: ResolvedConfig): Promise<string | undefined> {
  // The nearest existing ancestor must be a writable folder: the report goes to a new folder below it.
  let dir = cfg.output;
  for (;;) {
    const st = await stat(dir).catch(() => undefined);
    if (st) {
      if (!st.isDirectory()) return `output: ${dir} is a file, not a folder; point output (or --output) at a folder`;
      try {
        await access(dir, constants.W_OK);
        return undefined;
      } catch {
        return `output: ${dir} is not writable; point output (or --output) at a folder you can write to`;
      }
    }
    const up = dirname(dir);
    if (up === dir) return `output: no part of ${cfg.output} exists`;
    dir = up;
  }
}

/**
 * Loads the eval set (and its dev split when a grid is tuned on one) and checks, before any work and all
 * together, what can fail later: the output folder, the scoring unit, the relevance level.
 */
async function load(cfg: ResolvedConfig, log: Logger): Promise<Loaded> {
  const problems: string[] = [];
  const out = await outputProblem(cfg);
  if (out) problems.push(out);
  let es: EvalSet;
  let chosen: QrelsChoice;
  try {
    ({ es, qrels: chosen } = await withChosenQrels(await loadConfiguredEvalSet(cfg, log), cfg));
  } catch (err) {
    if (out && err instanceof HarnessError)
      throw new HarnessError(`${err.message}\n  also: ${cfg.file}: ${out}`, { exitCode: err.exitCode, cause: err, ...(err.hint ? { hint: err.hint } : {}) });
    throw err;
  }
  if (es.queries.length === 0) problems.push(`evalset: eval set ${es.name} has no queries to evaluate`);
  try {
    const { qrels } = scoringUnit(cfg, es);
    const level = relevanceLevelProblem(qrels, cfg.relevanceLevel, cfg.measures);
    if (level) problems.push(`relevanceLevel: ${level}`);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const split = cfg.tune?.split;
  let dev: EvalSet | undefined;
  if (split !== undefined) {
    dev = await loadConfiguredEvalSet(cfg, log, split);
    if (dev.queries.length === 0) problems.push(`tune.split: split "${split}" has no queries to tune on`);
    const testIds = new Map(es.queries.map((q) => [q.id, q] as const));
    const clash = dev.queries.find((q) => testIds.has(q.id) && testIds.get(q.id)?.text !== q.text);
    if (clash) problems.push(`tune.split: query ${clash.id} has different text in split ${split}; dev and test query ids must not collide`);
  }
  const sensitiveDocuments = countSensitive([es, dev]);
  problems.push(...sensitiveProblems(cfg.plan, sensitiveDocuments));
  if (problems.length > 0) throw new ConfigError(cfg.file, problems);
  if (!dev) return { es, qrels: chosen, scopes: scopesOf(es), sensitiveDocuments };
  // Dev and test queries share the corpus: index each scope once and answer both sets.
  const testIds = new Set(es.queries.map((q) => q.id));
  const extra = dev.queries.filter((q) => !testIds.has(q.id));
  return { es, qrels: chosen, dev, scopes: scopesOf(es, [...es.queries, ...extra]), sensitiveDocuments };
}

/** `{ sensitive }` for a system that sends text off this machine and had Sensitive Documents kept from it, else `{}`. */
function sensitiveField(s: SystemOutcome['system'], sensitiveDocuments: number): { sensitive?: ReportRun['sensitive'] } {
  const sensitive = sensitiveSummary(s.sensitive, s.bound.sendsTextOffMachine, sensitiveDocuments);
  return sensitive === undefined ? {} : { sensitive };
}

function reportRun(o: SystemOutcome, sensitiveDocuments: number): ReportRun {
  const s = o.system;
  return {
    id: s.id,
    kind: s.kind,
    fingerprint: s.fingerprintHash,
    node: s.node,
    ...(s.inputs.length > 0 ? { inputs: s.inputs } : {}),
    params: s.params,
    ...(s.group === undefined ? {} : { group: s.group }),
    ...(s.point === undefined ? {} : { point: s.point }),
    ...(s.label === undefined ? {} : { label: s.label }),
    ...(s.substitute === undefined ? {} : { substitute: s.substitute }),
    ...(o.diagnostics === undefined ? {} : { diagnostics: o.diagnostics }),
    ...sensitiveField(s, sensitiveDocuments),
  };
}

function tunedRun(t: TunedSystem): ReportRun {
  return {
    id: t.id,
    kind: 'tuned',
    fingerprint: `tuned:${t.group}:${t.method}`,
    node: 'tune',
    group: t.group,
    label: `${t.group}, point picked on ${t.method === 'split' ? `the ${t.choices[0]?.fold} split` : `${t.choices.length}-fold cross-validation`} by ${t.measure}`,
    tuning: { measure: t.measure, method: t.method, choices: t.choices, oracle: t.oracle },
  };
}

/**
 * The pair whose most different queries the report shows: the gate's, else the baseline against the system
 * with the best overall mean on the first tested measure.
 */
function examplePair(
  cfg: ResolvedConfig,
  perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>,
): { baseline: string; system: string; measure: string } | undefined {
  const baseline = cfg.gate?.baseline ?? cfg.compare.baseline ?? (cfg.runIds[0] as string);
  if (cfg.gate) return { baseline, system: cfg.gate.candidate, measure: cfg.gate.measure };
  const measure = cfg.measures.find((m) => !m.startsWith('Judged'));
  if (measure === undefined) return undefined;
  const mean = (id: string) => {
    const v = perQuery[id]?.[measure] ?? [];
    return v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);
  };
  const best = cfg.runIds.filter((id) => id !== baseline).sort((a, b) => mean(b) - mean(a))[0];
  return best === undefined ? undefined : { baseline, system: best, measure };
}

/**
 * `harness ablate`: plan (expanded in the config), execute every system over every scope (from the run cache
 * where it can), score on the shared path, tune grids without leakage, write the report folder and manifest.
 */
export async function ablate(cfg: ResolvedConfig, ctx: AblateContext): Promise<AblateResult> {
  const { log, command } = ctx;
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const { es, dev, scopes, qrels: chosen, sensitiveDocuments } = await load(cfg, log);
  const loadMs = performance.now() - t0;
  const store = new ContentStore(cfg.cache, { log });
  await store.sweepOrphans();
  const dir = reportDirOf(cfg);
  const jobs = ctx.jobs === undefined || ctx.jobs === 'auto' ? autoJobs(cfg.plan, scopes.length) : ctx.jobs;
  const t1 = performance.now();
  // Remote systems are asked who they are before any cache lookup, so a changed server never serves an old run.
  const systemsPlan = await probePlan(cfg.plan, { cache: store, log, env: ctx.env, workDir: join(cfg.cache, 'work') });
  const outcomes = await executePlan(systemsPlan, scopes, {
    topK: cfg.topK,
    store,
    log,
    env: ctx.env,
    workDir: cfg.cache,
    jobs,
    ...(ctx.refresh === undefined ? {} : { refresh: new Set(ctx.refresh) }),
  });
  const executeMs = performance.now() - t1;

  const t2 = performance.now();
  const measures = cfg.measures.map((m) => parseMeasure(m));
  const queryIds = es.queries.map((q) => q.id);
  const { qrels, units } = scoringUnit(cfg, es);
  // With a dev split the systems also answered the dev queries; the report's runs hold the test queries only.
  const only = (run: Run, ids: readonly string[]): Run => new Map(ids.map((q) => [q, run.get(q) ?? new Map<string, number>()] as const));
  const runs = new Map<string, Run>();
  for (const [id, o] of outcomes) runs.set(id, dev ? only(o.run, queryIds) : o.run);
  const scored = scoreRuns(qrels, runs, measures, queryIds, { relevanceLevel: cfg.relevanceLevel, ...(units ? { units } : {}) });
  const perQuery = scored.perQuery;

  const tuned: TunedSystem[] = [];
  if (cfg.tune) {
    const t = cfg.tune;
    let devScores: Record<string, Record<string, number[]>> | undefined;
    if (dev) {
      const devUnit = scoringUnit(cfg, dev);
      const grouped = new Set([...cfg.plan.groups.values()].flat());
      const devIds = dev.queries.map((q) => q.id);
      const devRuns = new Map([...outcomes].filter(([id]) => grouped.has(id)).map(([id, o]) => [id, only(o.run, devIds)] as const));
      devScores = scoreRuns(
        devUnit.qrels,
        devRuns,
        measures.filter((_, i) => cfg.measures[i] === t.measure),
        dev.queries.map((q) => q.id),
        {
          relevanceLevel: cfg.relevanceLevel,
          ...(devUnit.units ? { units: devUnit.units } : {}),
        },
      ).perQuery;
    }
    for (const [group, members] of cfg.plan.groups) {
      tuned.push(
        devScores && dev
          ? tuneBySplit(group, members, perQuery, devScores, {
              measure: t.measure,
              split: t.split as string,
              testQueries: queryIds.length,
              devQueries: dev.queries.length,
            })
          : tuneByFolds(group, members, perQuery, es.queries, { measure: t.measure, folds: t.folds as number, seed: t.seed }),
      );
    }
    for (const x of tuned) {
      perQuery[x.id] = x.perQuery;
      // A tuned system's run: each test query answered by the point picked for it.
      runs.set(x.id, new Map(es.queries.map((q, i) => [q.id, runs.get(x.picks[i] as string)?.get(q.id) ?? new Map<string, number>()] as const)));
    }
  }
  const means = new Map<string, Map<string, number>>();
  for (const [id, byMeasure] of Object.entries(perQuery)) {
    means.set(id, new Map(Object.entries(byMeasure).map(([m, v]) => [m, v.reduce((a, b) => a + b, 0) / v.length] as const)));
  }
  const curves = recallCurves(qrels, runs, es.queries, cfg.topK, { relevanceLevel: cfg.relevanceLevel, ...(units ? { units } : {}) });
  const pair = examplePair(cfg, perQuery);
  const examples = pair ? { ...pair, queries: queryExamples(pair, perQuery, es.queries, runs, es.documents) } : undefined;

  const strata: Record<string, number> = {};
  for (const q of es.queries) strata[q.stratum] = (strata[q.stratum] ?? 0) + 1;
  const evalsetFp = evalSetFingerprint(es);
  const input: ReportInput = {
    name: cfg.name,
    configHash: cfg.configHash,
    evalset: {
      name: es.name,
      format: cfg.evalset.format,
      path: cfg.evalset.pathAsWritten,
      fingerprint: evalsetFp,
      queries: es.queries.length,
      documents: es.documents.length,
      strata,
      notes: [...(es.notes ?? []), ...scored.notes],
      qrelsSource: chosen.source,
      ...(chosen.judge === undefined ? {} : { judge: chosen.judge }),
      // A pooled qrels judges documents not relevant too; qrels that list only relevant documents make Judged@k
      // equal P@k, so judgment holes can only be read from the former.
      qrelsJudgesNonRelevant: [...qrels.values()].some((docs) => [...docs.values()].some((g) => g < cfg.relevanceLevel)),
    },
    runs: [...[...outcomes.values()].map((o) => reportRun(o, sensitiveDocuments)), ...tuned.map(tunedRun)],
    measures: cfg.measures,
    queries: es.queries.map((q: Query) => ({ id: q.id, stratum: q.stratum, text: q.text })),
    perQuery,
    curves,
    costs: costs(outcomes),
    ...(examples === undefined ? {} : { examples }),
    compare: cfg.compare,
    ...(cfg.gate === undefined ? {} : { gate: cfg.gate }),
    command,
  };
  const evaluateMs = performance.now() - t2;
  const t3 = performance.now();
  const data = buildReportData(input);
  const statisticsMs = performance.now() - t3;
  const t4 = performance.now();
  // The whole folder is written at once (finished runs are safe in the cache meanwhile): a reader sees the
  // old folder or the new one, never a mix. With the runs go the qrels and strata the report scored with, so
  // any tool (and `harness compare`) can recompute it from files.
  const folderFiles = new Map<string, string>();
  for (const [id, run] of runs) folderFiles.set(`runs/${id}.trec`, formatTrecRun(run, id));
  folderFiles.set('qrels.trec', formatTrecQrels(es.qrels));
  folderFiles.set('strata.tsv', es.queries.map((q) => `${q.id}\t${q.stratum}\n`).join(''));
  const systems: SystemSummary[] = [...outcomes.values()].map((o) => ({
    id: o.system.id,
    node: o.system.node,
    kind: o.system.kind,
    inputs: o.system.inputs,
    fingerprint: o.system.fingerprint,
    fingerprintHash: o.system.fingerprintHash,
    indexStats: o.indexStats,
    indexMs: o.indexMs,
    searchMs: o.searchMs,
    cache: o.cache,
    ...sensitiveField(o.system, sensitiveDocuments),
  }));
  const git = gitState(cfg.dir);
  const manifest = {
    manifestVersion: 2,
    name: cfg.name,
    configFile: relative(dir, cfg.file),
    configHash: cfg.configHash,
    command,
    git: git ?? null,
    packages: packageVersions(),
    evalset: {
      name: es.name,
      format: cfg.evalset.format,
      path: cfg.evalset.pathAsWritten,
      split: cfg.evalset.split ?? null,
      fingerprint: evalsetFp,
      documents: es.documents.length,
      queries: es.queries.length,
      scopes: scopes.length,
      ...(dev ? { tuneSplit: { split: cfg.tune?.split, queries: dev.queries.length, fingerprint: evalSetFingerprint(dev) } } : {}),
      notes: es.notes ?? [],
      qrels: chosen,
    },
    systems,
    tuned: tuned.map((t) => ({ id: t.id, group: t.group, measure: t.measure, method: t.method, choices: t.choices, oracle: t.oracle })),
    cache: { root: cfg.cache, ...store.stats },
    // Filled in once the report is rendered; declared here to keep the manifest's key order.
    timings: undefined as PhaseTimings | undefined,
    startedAt,
    finishedAt: '',
  };
  let derived = { indexMs: 0, searchMs: 0, fuseMs: 0 };
  for (const o of outcomes.values()) {
    // A system without inputs searched; one with inputs derived its run from theirs (fused).
    if (o.system.inputs.length === 0) derived = { ...derived, indexMs: derived.indexMs + o.spent.indexMs, searchMs: derived.searchMs + o.spent.searchMs };
    else derived = { ...derived, fuseMs: derived.fuseMs + o.spent.indexMs + o.spent.searchMs };
  }
  await writeReportData(dir, data, () => {
    const timings: PhaseTimings = {
      jobs,
      loadMs,
      executeMs,
      ...derived,
      evaluateMs,
      statisticsMs,
      reportMs: performance.now() - t4,
      totalMs: performance.now() - t0,
    };
    folderFiles.set('manifest.json', `${JSON.stringify({ ...manifest, timings, finishedAt: new Date().toISOString() }, null, 2)}\n`);
    return folderFiles;
  });
  return { reportDir: dir, evalSet: es, runs, means, systems, tuned, input, ...(data.gateResult ? { gate: data.gateResult } : {}) };
}

/** What `--dry-run` prints: the expanded plan, with the cache entries that already exist. Runs nothing. */
export async function plan(cfg: ResolvedConfig, log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { es, dev, scopes, sensitiveDocuments } = await load(cfg, log);
  const store = new ContentStore(cfg.cache, { log });
  const systemsPlan = await probePlan(cfg.plan, { cache: store, log, env, workDir: join(cfg.cache, 'work') });
  const strata = new Map<string, number>();
  for (const q of es.queries) strata.set(q.stratum, (strata.get(q.stratum) ?? 0) + 1);
  const byNode = new Map<string, number>();
  for (const s of cfg.plan.systems) byNode.set(s.node, (byNode.get(s.node) ?? 0) + 1);
  const lines = [
    `plan for ${cfg.name} (config ${cfg.configHash.slice(0, 8)})`,
    `  eval set: ${es.name} [${cfg.evalset.format}] ${es.documents.length} documents, ${es.queries.length} queries, ${scopes.length} scope(s)`,
    ...(dev ? [`  tuning split: ${cfg.tune?.split} (${dev.queries.length} queries)`] : []),
    `  strata: ${[...strata].map(([s, n]) => `${s}=${n}`).join(', ')}`,
    `  measures: ${cfg.measures.join(', ')} (relevance level ${cfg.relevanceLevel}, topK ${cfg.topK})`,
    `  systems: ${cfg.plan.systems.length} (${[...byNode].map(([n, c]) => `${c} ${n}`).join(', ')})${cfg.tune ? ` + ${cfg.plan.groups.size} tuned` : ''}`,
  ];
  let cachedAll = 0;
  for (const s of systemsPlan.systems) {
    const cached = (await Promise.all(scopes.map((g) => store.has('run', runKey(s, g, cfg.topK))))).filter(Boolean).length;
    if (cached === scopes.length) cachedAll++;
    const from = s.inputs.length > 0 ? ` <- ${s.inputs.join(', ')}` : '';
    lines.push(
      `    ${s.id} [${s.node} ${s.kind}]${from} fingerprint ${s.fingerprintHash.slice(0, 12)}: ${cached}/${scopes.length} scope run(s) cached${cached === scopes.length ? ' (no work)' : ''}`,
    );
    const kept = sensitiveSummary(s.sensitive, s.bound.sendsTextOffMachine, sensitiveDocuments);
    if (kept) lines.push(`      ${kept.documents} sensitive document(s) ${kept.route === undefined ? 'left out' : `retrieved by ${kept.route}`}, never sent`);
  }
  for (const [group, members] of cfg.plan.groups) {
    lines.push(
      `    grid ${group}: ${members.length} systems${cfg.tune ? `, tuned as ${group}.tuned on ${cfg.tune.split ?? `${cfg.tune.folds} folds`} by ${cfg.tune.measure}` : ''}`,
    );
  }
  lines.push(`  cache: ${cachedAll}/${cfg.plan.systems.length} systems need no work`);
  const baseline = cfg.compare.baseline ?? cfg.runIds[0];
  lines.push(`  compare: ${cfg.compare.test}, baseline ${baseline}, correction ${cfg.compare.correction}`);
  if (cfg.gate) lines.push(`  gate: ${cfg.gate.candidate} vs ${cfg.gate.baseline ?? baseline} on ${cfg.gate.measure} (${cfg.gate.rule})`);
  lines.push(`  output: ${reportDirOf(cfg)}`, `  cache root: ${cfg.cache}`);
  return `${lines.join('\n')}\n`;
}
