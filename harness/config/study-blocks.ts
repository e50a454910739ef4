import { compareSchema, gateSchema, type CompareConfig, type GateConfig } from '../compare/config.js';
import type { SystemsPlan } from '../systems/plan.js';
import { didYouMean } from '../util/suggest.js';
import { existsSync, statSync } from 'node:fs';
import { judgeConfigSchema, type JudgeConfig } from './judge.js';
import { resolvePath } from './paths.js';
import { type ValidationConfig, validationSchema } from './validation.js';
import { canonicalMeasure, listedMeasure } from './measures-block.js';
import { keysOf, zodProblems } from './problems.js';
import type { Resolved } from './resolved.js';
import type { ExpectEntry, RawConfig } from './schema.js';

/** The `tune:` block, resolved: the measure in its canonical spelling. */
export interface ResolvedTune {
  readonly measure: string;
  readonly split?: string;
  readonly folds?: number;
  readonly seed: number;
}

/** What the blocks after the systems may check against: the measures, the plan, the eval set's format. */
export interface StudyContext {
  /** Undefined when the measures block is missing or failed (its own problem): the checks against it are skipped. */
  readonly measures: readonly string[] | undefined;
  readonly plan: SystemsPlan;
  /** The eval set's format name and split as written, and whether the format has splits (undefined when unknown). */
  readonly evalset?: { readonly format: string; readonly split?: string; readonly splits?: boolean };
}

/** `tune:`: a listed measure, a grid to tune, a split other than the one scored. */
export function resolveTune(t: RawConfig['tune'], ctx: StudyContext): Resolved<ResolvedTune | undefined> {
  if (t === undefined) return { value: undefined, problems: [] };
  const m = listedMeasure(t.measure, 'tune.measure', ctx.measures);
  const problems = [...m.problems];
  const tune =
    m.value === undefined
      ? undefined
      : { measure: m.value.spelling, seed: t.seed, ...(t.split === undefined ? {} : { split: t.split }), ...(t.folds === undefined ? {} : { folds: t.folds }) };
  if (ctx.plan.groups.size === 0) problems.push('tune: no arm or system has a grid or input subsets to tune; add a grid or remove tune');
  if (t.split !== undefined && ctx.evalset?.splits === false) problems.push(`tune.split: format "${ctx.evalset.format}" has no splits; use folds`);
  if (t.split !== undefined && t.split === (ctx.evalset?.split ?? 'test'))
    problems.push(`tune.split: "${t.split}" is the split being scored; tune on another (e.g. dev)`);
  return { value: tune, problems };
}

/** The ids a config may name as runs: every system, then one `<group>.tuned` per grid when tuning. */
export function runIdsOf(plan: SystemsPlan, tune: ResolvedTune | undefined): string[] {
  return [...plan.systems.map((x) => x.id), ...(tune ? [...plan.groups.keys()].map((g) => `${g}.tuned`) : [])];
}

/** Checks a run id another block names; an id whose entry has problems of its own is not reported again. */
export class RunRefs {
  constructor(
    readonly runIds: readonly string[],
    readonly declared: ReadonlySet<string>,
    /** The arms block is missing or failed (its own problem): no run id can be checked. */
    readonly armsUnknown = false,
  ) {}

  problems(path: string, runId: string | undefined): string[] {
    const ids = this.runIds;
    if (this.armsUnknown || runId === undefined || ids.includes(runId) || this.declared.has(runId)) return [];
    const shown = ids.length > 12 ? `${ids.slice(0, 12).join(', ')}, ... ${ids.length - 12} more` : ids.join(', ');
    return [`${path}: "${runId}" is not a system id${didYouMean(runId, ids)} (systems: ${shown})`];
  }
}

/** `compare:`, validated by the comparison module's own schema, its baseline a run. */
export function resolveCompare(raw: RawConfig['compare'], refs: RunRefs): Resolved<CompareConfig> {
  const c = compareSchema.safeParse(raw ?? {});
  if (!c.success) return { value: compareSchema.parse({}), problems: zodProblems(c.error.issues, ['compare'], (p) => keysOf(compareSchema, p), raw) };
  const questions = c.data.questions.flatMap((q, i) => [
    ...refs.problems(`compare.questions[${i}].baseline`, q.baseline),
    ...refs.problems(`compare.questions[${i}].system`, q.system),
  ]);
  return { value: c.data, problems: [...refs.problems('compare.baseline', c.data.baseline), ...questions] };
}

/**
 * `gate:`: its runs exist and differ, and its measure is listed and tested (then held in its canonical
 * spelling). The report refuses the same mistakes, but only after every arm ran: they are caught here first.
 */
export function resolveGate(
  raw: RawConfig['gate'],
  refs: RunRefs,
  measures: readonly string[] | undefined,
  compareBaseline?: string,
): Resolved<GateConfig | undefined> {
  if (raw === undefined) return { value: undefined, problems: [] };
  const g = gateSchema.safeParse(raw);
  if (!g.success) return { value: undefined, problems: zodProblems(g.error.issues, ['gate'], (p) => keysOf(gateSchema, p), raw) };
  const gate = g.data;
  const m = listedMeasure(gate.measure, 'gate.measure', measures);
  const problems = [...refs.problems('gate.baseline', gate.baseline), ...refs.problems('gate.candidate', gate.candidate), ...m.problems];
  if (m.problems.length === 0 && m.value !== undefined && !m.value.tested)
    problems.push(`gate.measure: "${gate.measure}" is a coverage diagnostic, not a quality measure; gate on e.g. nDCG@10`);
  const baseline = gate.baseline ?? compareBaseline ?? refs.runIds[0];
  if (!refs.armsUnknown && baseline === gate.candidate)
    problems.push(
      `gate.candidate: "${gate.candidate}" is also the gate's baseline${gate.baseline === undefined ? ' (compare.baseline, else the first system)' : ''}; gate another system against it`,
    );
  return { value: m.problems.length === 0 && m.value !== undefined ? { ...gate, measure: m.value.spelling } : gate, problems };
}

export type ExpectBlock = Record<string, Record<string, ExpectEntry>>;

/** `expect:`: runs and measures must exist, so a typo can never make --verify pass vacuously. */
export function resolveExpect(raw: RawConfig['expect'], refs: RunRefs, measures: readonly string[] | undefined): Resolved<ExpectBlock> {
  const expect: ExpectBlock = {};
  const problems: string[] = [];
  for (const [runId, entries] of Object.entries(raw ?? {})) {
    problems.push(...refs.problems(`expect.${runId}`, runId));
    const byMeasure: Record<string, ExpectEntry> = {};
    expect[runId] = byMeasure;
    for (const [m, entry] of Object.entries(entries)) {
      const c = canonicalMeasure(m);
      if ('error' in c) {
        problems.push(`expect.${runId}.${m}: ${c.error}`);
        continue;
      }
      if (measures !== undefined && !measures.includes(c.spelling))
        problems.push(`expect.${runId}.${m}: not among measures (${measures.join(', ')}); add it there`);
      byMeasure[c.spelling] = entry;
    }
  }
  return { value: expect, problems };
}

/** `qrels:`, `judgments:`, `judge:`: judged qrels need a judgments folder; the judge block is the judge module's. */
export function resolveJudging(cfg: Pick<RawConfig, 'qrels' | 'judgments' | 'judge'>): Resolved<JudgeConfig | undefined> {
  const problems: string[] = [];
  if (cfg.qrels !== undefined && cfg.qrels !== 'gold' && cfg.judgments === undefined)
    problems.push(`qrels: "${cfg.qrels}" reads judgments; add judgments: <folder written by harness judge>`);
  if (cfg.judge === undefined) return { value: undefined, problems };
  const j = judgeConfigSchema.safeParse(cfg.judge);
  if (j.success) return { value: j.data, problems };
  return { value: undefined, problems: [...problems, ...zodProblems(j.error.issues, ['judge'], (p) => keysOf(judgeConfigSchema, p), cfg.judge)] };
}

/** The human labels and the validation thresholds, resolved: the labels file absolute and as written. */
export interface ResolvedEvidence {
  readonly humanLabels?: { readonly path: string; readonly asWritten: string };
  readonly validation: ValidationConfig;
}

/**
 * `humanLabels:`, `validation:` and `gate.judged`: human labels validate a judge, so they need judged qrels; a
 * gate that decides on the PPI interval needs them; the labels file must exist (its lines are checked against
 * the judgments when the study loads).
 */
export function resolveEvidence(
  cfg: Pick<RawConfig, 'qrels' | 'humanLabels' | 'validation'>,
  gate: GateConfig | undefined,
  dir: string,
): Resolved<ResolvedEvidence> {
  const problems: string[] = [];
  const v = validationSchema.safeParse(cfg.validation ?? {});
  const validation = v.success ? v.data : validationSchema.parse({});
  if (!v.success) problems.push(...zodProblems(v.error.issues, ['validation'], (p) => keysOf(validationSchema, p), cfg.validation));
  const gold = (cfg.qrels ?? 'gold') === 'gold';
  if (gate?.judged === 'ppi' && gold)
    problems.push('gate.judged: "ppi" corrects a judge\'s bias, and qrels is gold (no judge); remove gate.judged or set qrels: judged / gold+judged');
  else if (gate?.judged === 'ppi' && cfg.humanLabels === undefined)
    problems.push('gate.judged: "ppi" corrects the judged deltas with human labels; add humanLabels: <kappa session or TREC qrels> (harness kappa --by query)');
  if (cfg.humanLabels === undefined) return { value: { validation }, problems };
  if (gold) problems.push('humanLabels: human labels validate a judge, and qrels is gold; set qrels: judged or gold+judged, or remove humanLabels');
  const path = resolvePath(dir, cfg.humanLabels);
  if (!existsSync(path) || !statSync(path).isFile())
    problems.push(`humanLabels: ${path} is not a file; give a kappa session (harness kappa --by query) or TREC qrels, relative to the config file`);
  return { value: { humanLabels: { path, asWritten: cfg.humanLabels }, validation }, problems };
}
