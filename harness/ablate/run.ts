import { join, relative } from 'node:path';
import type { Arm, IndexStats, ScoredDoc } from '../../arms/types.js';
import { corpusFingerprint, evalSetFingerprint } from '../../evalset/fingerprint.js';
import { loadEvalSet } from '../../evalset/load.js';
import { formatTrecRun } from '../../evalset/trec.js';
import type { Document, EvalSet, JsonValue, Query, Run } from '../../evalset/types.js';
import { cacheKey, canonicalJson, ContentStore, sha256Hex, type CacheKey, type ShapeCheck } from '../cache/index.js';
import type { ResolvedArm, ResolvedConfig } from '../config/load.js';
import { ConfigError, HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { evaluate, parseMeasure } from '../metrics/index.js';
import type { ReportInput } from '../report/types.js';
import { writeReport } from '../report/index.js';
import { gitState, packageVersions } from '../util/project.js';

/** Bump when the cached arm-run layout or its meaning changes; old entries are then never read. */
const RUN_CACHE_VERSION = 1;

/** The queries of one retrieval scope and the documents they search. Unscoped eval sets have one group. */
interface ScopeGroup {
  readonly scope: string | undefined;
  readonly documents: readonly Document[];
  readonly queries: readonly Query[];
  readonly key: (arm: ResolvedArm, topK: number) => CacheKey;
}

/** What one arm produced over one scope; this is what the run cache stores. */
interface ArmScopeResult {
  readonly indexStats: IndexStats;
  readonly indexMs: number;
  readonly searchMs: number;
  /** queryId -> [[docId, score], ...] best first. */
  readonly results: Record<string, [string, number][]>;
}

export interface ArmSummary {
  readonly id: string;
  readonly kind: string;
  readonly fingerprint: JsonValue;
  readonly indexStats: Record<string, number>;
  readonly indexMs: number;
  readonly searchMs: number;
  readonly cache: { readonly hits: number; readonly misses: number };
}

export interface AblateResult {
  readonly reportDir: string;
  readonly evalSet: EvalSet;
  readonly runs: ReadonlyMap<string, Run>;
  /** runId -> measure -> mean over all eval-set queries (missing queries count 0). */
  readonly means: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly arms: readonly ArmSummary[];
  readonly input: ReportInput;
}

export function reportDirOf(cfg: ResolvedConfig): string {
  return join(cfg.output, `${cfg.name}-${cfg.configHash.slice(0, 8)}`);
}

function loadConfiguredEvalSet(cfg: ResolvedConfig, log: Logger): Promise<EvalSet> {
  return loadEvalSet(
    {
      format: cfg.evalset.format,
      path: cfg.evalset.path,
      ...(cfg.evalset.split === undefined ? {} : { split: cfg.evalset.split }),
      ...(cfg.evalset.strata === undefined ? {} : { strata: cfg.evalset.strata }),
      options: cfg.evalset.options,
      source: cfg.file,
    },
    log,
  );
}

/**
 * The qrels and unit map to score with. With `unit:` set, each query's qrels move to that unit (a unit takes
 * the best grade of its judged members) and runs are mapped through the same map at evaluation.
 */
export function scoringUnit(cfg: Pick<ResolvedConfig, 'unit' | 'file'>, es: EvalSet): { qrels: EvalSet['qrels']; units?: ReadonlyMap<string, string> } {
  if (cfg.unit === undefined) return { qrels: es.qrels };
  const units = es.units?.get(cfg.unit);
  if (!units) {
    const known = [...(es.units?.keys() ?? [])];
    throw new ConfigError(cfg.file, [`unit: eval set ${es.name} has no unit "${cfg.unit}" (it defines: ${known.length > 0 ? known.join(', ') : 'none'})`]);
  }
  const qrels = new Map<string, Map<string, number>>();
  for (const [qid, judged] of es.qrels) {
    const mapped = new Map<string, number>();
    for (const [docId, grade] of judged) {
      const u = units.get(docId);
      if (u === undefined) throw new HarnessError(`eval set ${es.name}: judged document "${docId}" of query ${qid} has no ${cfg.unit} in the unit map`);
      mapped.set(u, Math.max(grade, mapped.get(u) ?? -Infinity));
    }
    qrels.set(qid, mapped);
  }
  return { qrels, units };
}

function groupByScope(es: EvalSet): ScopeGroup[] {
  const byId = new Map(es.documents.map((d) => [d.id, d] as const));
  const queriesByScope = new Map<string | undefined, Query[]>();
  for (const q of es.queries) {
    const list = queriesByScope.get(q.scope);
    if (list) list.push(q);
    else queriesByScope.set(q.scope, [q]);
  }
  const groups: ScopeGroup[] = [];
  for (const [scope, queries] of queriesByScope) {
    let documents: readonly Document[];
    if (scope === undefined) documents = es.documents;
    else {
      const ids = es.scopes?.get(scope);
      if (!ids) throw new HarnessError(`eval set ${es.name}: query ${queries[0]!.id} names scope "${scope}", which the eval set does not define`);
      documents = ids.map((id) => {
        const d = byId.get(id);
        if (!d) throw new HarnessError(`eval set ${es.name}: scope "${scope}" lists document "${id}", which is not in the corpus`);
        return d;
      });
    }
    const corpusFp = corpusFingerprint(documents);
    const queriesFp = sha256Hex(canonicalJson(queries.map((q) => [q.id, q.text])));
    groups.push({
      scope,
      documents,
      queries,
      key: (arm, topK) => cacheKey('run', RUN_CACHE_VERSION, { arm: arm.fingerprint, corpus: corpusFp, queries: queriesFp, topK }),
    });
  }
  return groups;
}

/**
 * The shape of a cached {@link ArmScopeResult} holding every query of its scope: an entry that checksums fine
 * but is `{}`, `null` or lacks a query is evicted and recomputed rather than used.
 */
function armScopeResultCheck(queries: readonly Query[]): ShapeCheck {
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not an object';
    const r = v as Record<string, unknown>;
    if (!finite(r['indexMs']) || !finite(r['searchMs'])) return 'indexMs/searchMs missing';
    const stats = r['indexStats'];
    if (stats === null || typeof stats !== 'object' || !Object.values(stats).every(finite)) return 'indexStats is not an object of numbers';
    const results = r['results'];
    if (results === null || typeof results !== 'object') return 'results missing';
    for (const q of queries) {
      const docs = (results as Record<string, unknown>)[q.id];
      if (!Array.isArray(docs)) return `no results for query ${q.id}`;
      if (!docs.every((d) => Array.isArray(d) && d.length === 2 && typeof d[0] === 'string' && finite(d[1]))) return `results of query ${q.id} are not [docId, score] pairs`;
    }
    return undefined;
  };
}

/** What the runner needs from its caller: where to log, the environment arms may read, the regenerating command. */
export interface AblateContext {
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly command: string;
}

async function runArmOnScope(arm: ResolvedArm, group: ScopeGroup, cfg: ResolvedConfig, store: ContentStore, ctx: AblateContext, onQueries: (n: number) => void): Promise<ArmScopeResult> {
  const topK = cfg.topK;
  const instance: Arm = arm.factory.create(arm.id, arm.params as never, {
    cache: store,
    log: ctx.log,
    workDir: join(cfg.cache, 'work', arm.kind),
    env: ctx.env,
  });
  try {
    const t0 = performance.now();
    const indexStats = await instance.index(group.documents);
    const t1 = performance.now();
    const results: Record<string, [string, number][]> = {};
    const keep = (qid: string, docs: readonly ScoredDoc[]) => {
      const seen = new Set<string>();
      results[qid] = docs.slice(0, topK).map((d) => {
        if (seen.has(d.docId)) throw new HarnessError(`arm ${arm.id} returned document "${d.docId}" twice for query ${qid}; an arm must return each document once`);
        if (!Number.isFinite(d.score)) throw new HarnessError(`arm ${arm.id} returned a non-finite score (${d.score}) for document "${d.docId}" and query ${qid}`);
        seen.add(d.docId);
        return [d.docId, d.score];
      });
    };
    if (instance.searchMany) {
      const batch = 64;
      for (let i = 0; i < group.queries.length; i += batch) {
        const slice = group.queries.slice(i, i + batch);
        const got = await instance.searchMany(slice, topK);
        for (const q of slice) keep(q.id, got.get(q.id) ?? []);
        onQueries(slice.length);
      }
    } else {
      for (const q of group.queries) {
        keep(q.id, await instance.search(q, topK));
        onQueries(1);
      }
    }
    return { indexStats, indexMs: t1 - t0, searchMs: performance.now() - t1, results };
  } finally {
    await instance.close?.();
  }
}

/** Runs every arm over the eval set (from the cache where it can), evaluates, and writes the report folder. */
export async function ablate(cfg: ResolvedConfig, ctx: AblateContext): Promise<AblateResult> {
  const { log, command } = ctx;
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const es = await loadConfiguredEvalSet(cfg, log);
  if (es.queries.length === 0) throw new HarnessError(`eval set ${es.name} has no queries to evaluate`);
  const loadMs = performance.now() - t0;
  const groups = groupByScope(es);
  const store = new ContentStore(cfg.cache, { log });
  await store.sweepOrphans();
  const dir = reportDirOf(cfg);
  const runs = new Map<string, Run>();
  // The whole report folder is written at once at the end (finished arm runs are safe in the cache meanwhile).
  const folderFiles = new Map<string, string>();
  const armSummaries: ArmSummary[] = [];

  for (const arm of cfg.arms) {
    const progress = log.progress(`${arm.id}`, es.queries.length);
    const merged = new Map<string, Map<string, number>>();
    const stats: Record<string, number> = {};
    let indexMs = 0;
    let searchMs = 0;
    let hits = 0;
    let misses = 0;
    for (const group of groups) {
      const key = group.key(arm, cfg.topK);
      let computed = false;
      const res = await store.json<ArmScopeResult>('run', key, async () => {
        computed = true;
        return runArmOnScope(arm, group, cfg, store, ctx, (n) => progress.tick(n));
      }, armScopeResultCheck(group.queries));
      if (computed) misses++;
      else {
        hits++;
        progress.tick(group.queries.length);
      }
      for (const [k, v] of Object.entries(res.indexStats)) stats[k] = (stats[k] ?? 0) + v;
      indexMs += res.indexMs;
      searchMs += res.searchMs;
      for (const q of group.queries) {
        merged.set(q.id, new Map(res.results[q.id]));
      }
    }
    progress.done();
    runs.set(arm.id, merged);
    folderFiles.set(`runs/${arm.id}.trec`, formatTrecRun(merged, arm.id));
    armSummaries.push({ id: arm.id, kind: arm.kind, fingerprint: arm.fingerprint, indexStats: stats, indexMs, searchMs, cache: { hits, misses } });
  }

  const measures = cfg.measures.map((m) => parseMeasure(m));
  const queryIds = es.queries.map((q) => q.id);
  const { qrels, units } = scoringUnit(cfg, es);
  const perQuery: Record<string, Record<string, number[]>> = {};
  const means = new Map<string, Map<string, number>>();
  for (const [runId, run] of runs) {
    const ev = evaluate(qrels, run, measures, { relevanceLevel: cfg.relevanceLevel, queries: queryIds, ...(units ? { units } : {}) });
    perQuery[runId] = {};
    const m = new Map<string, number>();
    for (const name of cfg.measures) {
      const values = ev.perQuery.get(name);
      if (!values) throw new HarnessError(`internal: measure ${name} was not computed for run ${runId}`);
      const arr = queryIds.map((qid) => values.get(qid) ?? 0);
      perQuery[runId]![name] = arr;
      m.set(name, arr.reduce((a, b) => a + b, 0) / arr.length);
    }
    means.set(runId, m);
  }

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
      notes: [...(es.notes ?? [])],
      qrelsSource: 'gold',
    },
    runs: cfg.arms.map((a) => ({
      id: a.id,
      kind: a.kind,
      fingerprint: sha256Hex(canonicalJson(a.fingerprint)),
      ...(a.label === undefined ? {} : { label: a.label }),
      ...(a.substitute === undefined ? {} : { substitute: a.substitute }),
    })),
    measures: cfg.measures,
    queries: es.queries.map((q) => ({ id: q.id, stratum: q.stratum })),
    perQuery,
    compare: cfg.compare,
    ...(cfg.gate === undefined ? {} : { gate: cfg.gate }),
    command,
  };
  const git = gitState(cfg.dir);
  const manifest = {
    manifestVersion: 1,
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
      scopes: groups.length,
      notes: es.notes ?? [],
    },
    arms: armSummaries.map((a) => ({ ...a, fingerprintHash: sha256Hex(canonicalJson(a.fingerprint)) })),
    cache: { root: cfg.cache, ...store.stats },
    timings: { loadMs, totalMs: performance.now() - t0 },
    startedAt,
    finishedAt: new Date().toISOString(),
  };
  folderFiles.set('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
  await writeReport(dir, input, folderFiles);
  return { reportDir: dir, evalSet: es, runs, means, arms: armSummaries, input };
}

/** What `--dry-run` prints: the plan, with the cache entries that already exist. Runs nothing. */
export async function plan(cfg: ResolvedConfig, log: Logger): Promise<string> {
  const es = await loadConfiguredEvalSet(cfg, log);
  const groups = groupByScope(es);
  const store = new ContentStore(cfg.cache);
  const strata = new Map<string, number>();
  for (const q of es.queries) strata.set(q.stratum, (strata.get(q.stratum) ?? 0) + 1);
  const lines = [
    `plan for ${cfg.name} (config ${cfg.configHash.slice(0, 8)})`,
    `  eval set: ${es.name} [${cfg.evalset.format}] ${es.documents.length} documents, ${es.queries.length} queries, ${groups.length} scope(s)`,
    `  strata: ${[...strata].map(([s, n]) => `${s}=${n}`).join(', ')}`,
    `  measures: ${cfg.measures.join(', ')} (relevance level ${cfg.relevanceLevel}, topK ${cfg.topK})`,
    `  arms:`,
  ];
  for (const arm of cfg.arms) {
    const cached = (await Promise.all(groups.map((g) => store.has('run', g.key(arm, cfg.topK))))).filter(Boolean).length;
    lines.push(`    ${arm.id} [${arm.kind}] fingerprint ${sha256Hex(canonicalJson(arm.fingerprint)).slice(0, 12)}: ${cached}/${groups.length} scope run(s) cached${cached === groups.length ? ' (no work)' : ''}`);
  }
  lines.push(`  compare: ${cfg.compare.test}, baseline ${cfg.compare.baseline ?? cfg.arms[0]!.id}, correction ${cfg.compare.correction}`);
  if (cfg.gate) lines.push(`  gate: ${cfg.gate.candidate} vs ${cfg.gate.baseline ?? cfg.compare.baseline ?? cfg.arms[0]!.id} on ${cfg.gate.measure} (${cfg.gate.rule})`);
  lines.push(`  output: ${reportDirOf(cfg)}`, `  cache: ${cfg.cache}`);
  return `${lines.join('\n')}\n`;
}

export type VerifyStatus = 'OK' | 'OKISH' | 'FAIL';

export interface VerifyLine {
  readonly run: string;
  readonly measure: string;
  readonly expected: number | undefined;
  readonly tolerance: number | undefined;
  readonly actual: number;
  readonly status: VerifyStatus | undefined;
}

/**
 * Checks the `expect:` block: OK within tolerance, OKISH within 1.5x (Anserini's band), FAIL beyond — in either
 * direction, since an unexplained improvement is a change too. Runs without expectations are listed beside
 * them for reference.
 */
export function verify(cfg: ResolvedConfig, means: ReadonlyMap<string, ReadonlyMap<string, number>>): VerifyLine[] {
  const measures = new Set<string>();
  for (const entries of Object.values(cfg.expect)) for (const m of Object.keys(entries)) measures.add(m);
  const lines: VerifyLine[] = [];
  for (const arm of cfg.arms) {
    for (const m of measures) {
      const actual = means.get(arm.id)?.get(m);
      if (actual === undefined) continue;
      const e = cfg.expect[arm.id]?.[m];
      let status: VerifyStatus | undefined;
      if (e) {
        const d = Math.abs(actual - e.value);
        // Compare at a hair above the tolerance so 0.3218 vs 0.3268 at tolerance 0.005 is not lost to binary rounding.
        const slack = 1e-12;
        status = d <= e.tolerance + slack ? 'OK' : d <= 1.5 * e.tolerance + slack ? 'OKISH' : 'FAIL';
      }
      lines.push({ run: arm.id, measure: m, expected: e?.value, tolerance: e?.tolerance, actual, status });
    }
  }
  return lines;
}

export function formatVerify(lines: readonly VerifyLine[]): string {
  const runW = Math.max(16, ...lines.map((l) => l.run.length));
  const mW = Math.max(10, ...lines.map((l) => l.measure.length));
  return lines
    .map((l) => {
      const head = `  ${(l.status ?? '--').padEnd(6)} ${l.run.padEnd(runW)} ${l.measure.padEnd(mW)}`;
      if (l.status === undefined) return `${head} actual ${l.actual.toFixed(4)} (no expectation)`;
      const d = l.actual - l.expected!;
      return `${head} expected ${l.expected!.toFixed(4)} actual ${l.actual.toFixed(4)} delta ${d >= 0 ? '+' : ''}${d.toFixed(4)} tolerance ${l.tolerance!.toFixed(4)}`;
    })
    .join('\n');
}
