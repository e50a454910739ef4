import { relative } from 'node:path';
import { qrelsProvenance } from '../judge/qrels.js';
import { evalSetFingerprint } from '../../evalset/fingerprint.js';
import type { JsonValue } from '../../evalset/types.js';
import type { ContentStore } from '../cache/index.js';
import type { ResolvedConfig } from '../config/load.js';
import type { ExecutedPlan } from '../execution/run-plan.js';
import type { ReportRun } from '../decision/types.js';
import { gitState, packageVersions } from '../util/project.js';
import type { LoadedStudy } from './load.js';
import { sensitiveField } from './report-input.js';
import type { TunedSystem } from './tune.js';

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
  /** Answering and grading (the answer stage), when the study asks answer measures. */
  readonly answerMs?: number;
  readonly evaluateMs: number;
  readonly statisticsMs: number;
  /** Writing the runs, qrels and renderings (the folder's final write comes after the manifest is made). */
  readonly reportMs: number;
  readonly totalMs: number;
}

/** The (system, scope) time this ablation computed: a system without inputs searched, one with inputs derived its run from theirs (fused). */
export function spentTimes(executed: ExecutedPlan): Pick<PhaseTimings, 'indexMs' | 'searchMs' | 'fuseMs'> {
  let spent = { indexMs: 0, searchMs: 0, fuseMs: 0 };
  for (const o of executed.outcomes.values()) {
    if (o.system.inputs.length === 0) spent = { ...spent, indexMs: spent.indexMs + o.spent.indexMs, searchMs: spent.searchMs + o.spent.searchMs };
    else spent = { ...spent, fuseMs: spent.fuseMs + o.spent.indexMs + o.spent.searchMs };
  }
  return spent;
}

export function systemSummaries(executed: ExecutedPlan, sensitiveDocuments: number): SystemSummary[] {
  return [...executed.outcomes.values()].map((o) => ({
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
}

function manifestEvalSet(cfg: ResolvedConfig, study: LoadedStudy) {
  const { es, dev } = study;
  return {
    name: es.name,
    format: cfg.evalset.format,
    path: cfg.evalset.pathAsWritten,
    split: cfg.evalset.split ?? null,
    fingerprint: evalSetFingerprint(es),
    documents: es.documents.length,
    queries: es.queries.length,
    scopes: study.scopes.length,
    ...(dev ? { tuneSplit: { split: cfg.tune?.split, queries: dev.queries.length, fingerprint: evalSetFingerprint(dev) } } : {}),
    notes: es.notes ?? [],
    qrels: qrelsProvenance(study.qrels),
  };
}

/** What the manifest records besides timings: the stages' inputs and identities, as the manifest's keys come in order. */
export interface ManifestParts {
  readonly dir: string;
  readonly command: string;
  readonly study: LoadedStudy;
  readonly systems: readonly SystemSummary[];
  readonly tuned: readonly TunedSystem[];
  readonly store: ContentStore;
  readonly startedAt: string;
  /** The answer stage's provenance: reader, judge, requests and cache use, cost per system. */
  readonly answer?: JsonValue;
}

/** The manifest.json of a report folder (version 2), its timings and finish time filled in when the folder is written. */
export function manifestOf(cfg: ResolvedConfig, p: ManifestParts, timings: PhaseTimings, finishedAt: string): string {
  const manifest = {
    manifestVersion: 2,
    name: cfg.name,
    configFile: relative(p.dir, cfg.file),
    configHash: cfg.configHash,
    command: p.command,
    git: gitState(cfg.dir) ?? null,
    packages: packageVersions(),
    evalset: manifestEvalSet(cfg, p.study),
    systems: p.systems,
    tuned: p.tuned.map((t) => ({ id: t.id, group: t.group, measure: t.measure, method: t.method, choices: t.choices, oracle: t.oracle })),
    ...(p.answer === undefined ? {} : { answer: p.answer }),
    cache: { root: cfg.cache, ...p.store.stats },
    timings,
    startedAt: p.startedAt,
    finishedAt,
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
