import type { EvalSet, Qrels, Run } from '../../evalset/types.js';
import { scoreRuns } from '../compare/score.js';
import type { ResolvedConfig } from '../config/load.js';
import type { ExecutedPlan } from '../execution/run-plan.js';
import { type MeasureTable, measureNamed } from '../compare/measures.js';
import { measureOf } from '../metrics/measure.js';
import { buildReportData } from '../decision/build.js';
import type { HolesCheck, ReportInput } from '../decision/types.js';
import type { LoadedStudy } from './load.js';
import { scoringUnit } from './scopes.js';
import { tuneByFolds, tuneBySplit, type TunedSystem } from './tune.js';

/**
 * The Condensed list of a run (Sakai, "Alternatives to Bpref", SIGIR 2007): each query's ranking with the
 * documents the qrels do not grade for that query removed, so the judged ones move up. A document counts as
 * judged at the scoring unit when `units` maps it (the qrels are then at that unit). Scores are kept: the
 * order among the remaining documents is unchanged.
 */
export function condensedRun(run: Run, qrels: Qrels, units?: ReadonlyMap<string, string>): Run {
  const out = new Map<string, Map<string, number>>();
  for (const [qid, docs] of run) {
    const judged = qrels.get(qid);
    const kept = new Map<string, number>();
    if (judged) for (const [docId, score] of docs) if (judged.has(units?.get(docId) ?? docId)) kept.set(docId, score);
    out.set(qid, kept);
  }
  return out;
}

/** The condensed measure's name: a prime on the measure's name, `nDCG@10` -> `nDCG'@10`, `AP` -> `AP'`. */
export function condensedName(measure: string): string {
  const at = measure.indexOf('@');
  return at < 0 ? `${measure}'` : `${measure.slice(0, at)}'${measure.slice(at)}`;
}

/** The measure decisions are read on: the gate's, else the tuning measure, else the first tested one. */
export function primaryMeasureOf(cfg: ResolvedConfig): string | undefined {
  return cfg.gate?.measure ?? cfg.tune?.measure ?? cfg.measures.find((m) => measureNamed(cfg.parsedMeasures, m).tested);
}

/** runId -> measure -> per-query values (score.ts's PerQuery; not imported, as score.ts imports this file). */
type PerQuery = Record<string, Record<string, number[]>>;

/** What condensing reads of a scored ablation: the report's runs (tuned ones included), the tuned systems, the scoring qrels. */
interface Scored {
  readonly runs: ReadonlyMap<string, Run>;
  readonly tuned: readonly TunedSystem[];
  readonly qrels: Qrels;
}

/**
 * Judged or pooled qrels (they grade documents as not relevant): where holes are holes, not non-relevant
 * documents. Gold qrels declared complete have none: an unlisted document is known non-relevant.
 */
function hasHoles(cfg: ResolvedConfig, study: LoadedStudy, qrels: Qrels): boolean {
  if (study.qrels.source !== 'gold') return true;
  if (cfg.evalset.qrels === 'complete') return false;
  return [...qrels.values()].some((docs) => [...docs.values()].some((g) => g < cfg.relevanceLevel));
}

/** Bpref, which the holes check reads whatever measures the config names: a value made once, not a spelling read per study. */
const BPREF = measureOf('Bpref', {});

/** The decisions' inputs re-made on condensed lists: per-query values of every system (tuned ones re-tuned), Bpref, the picks. */
export interface CondensedScores {
  readonly measure: string;
  /** run -> measure -> condensed per-query values (the measures decisions read: primary, gate, tuning). */
  readonly perQuery: PerQuery;
  /** run -> per-query Bpref on the runs as scored. */
  readonly bpref: Readonly<Record<string, readonly number[]>>;
  /** Each tuned system as picked on plain scores and on condensed scores. */
  readonly tuned: readonly { readonly plain: TunedSystem; readonly condensed: TunedSystem }[];
}

/** Per-query values of `runs` (restricted to `ids`) condensed against `es`'s scoring qrels. */
function condensedPerQuery(cfg: ResolvedConfig, es: EvalSet, runs: ReadonlyMap<string, Run>, measures: readonly string[], ids: readonly string[]): PerQuery {
  const unit = scoringUnit(cfg, es);
  const condensed = new Map([...runs].map(([id, r]) => [id, condensedRun(r, unit.qrels, unit.units)] as const));
  const opts = { relevanceLevel: cfg.relevanceLevel, ...(unit.units ? { units: unit.units } : {}) };
  return scoreRuns(
    unit.qrels,
    condensed,
    measures.map((m) => measureNamed(cfg.parsedMeasures, m).measure),
    ids,
    opts,
  ).perQuery;
}

/** The tuned grids re-picked on condensed scores, by the same method (split or folds, same seed) as the plain ones. */
function retune(cfg: ResolvedConfig, study: LoadedStudy, executed: ExecutedPlan, scored: Scored, perQuery: PerQuery, measures: readonly string[]) {
  const t = cfg.tune;
  if (!t) return [];
  const { es, dev } = study;
  let onDev: PerQuery | undefined;
  if (dev) {
    const devIds = dev.queries.map((q) => q.id);
    const grouped = new Set([...cfg.plan.groups.values()].flat());
    const runs = new Map([...executed.outcomes].filter(([id]) => grouped.has(id)).map(([id, o]) => [id, o.run] as const));
    onDev = condensedPerQuery(cfg, dev, runs, measures, devIds);
  }
  return scored.tuned.map((plain) => {
    const members = cfg.plan.groups.get(plain.group) ?? [];
    const condensed =
      onDev && dev
        ? tuneBySplit(plain.group, members, perQuery, onDev, {
            measure: t.measure,
            split: t.split as string,
            testQueries: es.queries.length,
            devQueries: dev.queries.length,
          })
        : tuneByFolds(plain.group, members, perQuery, es.queries, { measure: t.measure, folds: t.folds as number, seed: t.seed });
    return { plain, condensed };
  });
}

/**
 * The primary measure (and the gate's and tuning measures) on condensed lists, Bpref, and every tuned grid
 * re-picked on condensed scores; undefined on relevant-only gold qrels, where every unlisted document is a
 * judged non-relevant one and condensing would drop them all.
 */
export function condensedScores(cfg: ResolvedConfig, study: LoadedStudy, executed: ExecutedPlan, scored: Scored): CondensedScores | undefined {
  const measure = primaryMeasureOf(cfg);
  if (measure === undefined || !hasHoles(cfg, study, scored.qrels)) return undefined;
  const measures = [...new Set([measure, ...(cfg.gate ? [cfg.gate.measure] : []), ...(cfg.tune ? [cfg.tune.measure] : [])])];
  const ids = study.es.queries.map((q) => q.id);
  const tunedIds = new Set(scored.tuned.map((t) => t.id));
  const plainRuns = new Map([...scored.runs].filter(([id]) => !tunedIds.has(id)));
  const perQuery = condensedPerQuery(cfg, study.es, plainRuns, measures, ids);
  const tuned = retune(cfg, study, executed, scored, perQuery, measures);
  for (const t of tuned) perQuery[t.condensed.id] = t.condensed.perQuery;
  const unit = scoringUnit(cfg, study.es);
  const opts = { relevanceLevel: cfg.relevanceLevel, ...(unit.units ? { units: unit.units } : {}) };
  const bp = scoreRuns(unit.qrels, scored.runs, [BPREF], ids, opts).perQuery;
  const bpref = Object.fromEntries(Object.entries(bp).map(([id, byMeasure]) => [id, Object.values(byMeasure)[0] as number[]] as const));
  return { measure, perQuery, bpref, tuned };
}

const meanOf = (v: readonly number[] | undefined) => (v === undefined || v.length === 0 ? 0 : v.reduce((a, b) => a + b, 0) / v.length);

/** The gate decided by `buildReportData` on its own measure and pair, with `perQuery` standing for the report's values. */
export function gateOn(input: ReportInput, perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>, table: MeasureTable) {
  const g = input.gate;
  if (!g) return undefined;
  const baseline = g.baseline ?? input.compare.baseline ?? (input.runs[0]?.id as string);
  const pair = [baseline, g.candidate];
  const { examples: _e, holes: _h, ...rest } = input;
  const restricted: ReportInput = {
    ...rest,
    runs: input.runs.filter((r) => pair.includes(r.id)),
    measures: [g.measure],
    perQuery: Object.fromEntries(pair.map((id) => [id, { [g.measure]: perQuery[id]?.[g.measure] ?? [] }] as const)),
    compare: { ...input.compare, baseline },
  };
  return buildReportData(restricted, [measureNamed(table, g.measure)]).gateResult;
}

/**
 * The report's holes check: per system (a grid by its tuned system) the primary measure, its condensed form and Bpref (overall means), the
 * gate decided again on condensed values by the same rule (and on plain values restricted the same way, so the
 * two verdicts differ only by the holes), and each tuned grid's picks on both.
 */
export function holesCheckOf(input: ReportInput, cs: CondensedScores, table: MeasureTable): HolesCheck {
  // A grid's members are many and its tuned system stands for them (its picks are compared below).
  const g = input.gate;
  const shown = input.runs.filter((r) => r.group === undefined || r.kind === 'tuned' || r.id === g?.candidate || r.id === g?.baseline);
  const rows = shown.map((r) => ({
    run: r.id,
    measure: meanOf(input.perQuery[r.id]?.[cs.measure]),
    condensed: meanOf(cs.perQuery[r.id]?.[cs.measure]),
    bpref: meanOf(cs.bpref[r.id]),
  }));
  const plain = gateOn(input, input.perQuery, table);
  const condensed = gateOn(input, cs.perQuery, table);
  const gate =
    plain && condensed ? { gate: { plain: plain.verdict, condensed: condensed.verdict, plainReason: plain.reason, condensedReason: condensed.reason } } : {};
  const picks = cs.tuned.map((t) => ({
    tuned: t.plain.id,
    measure: t.plain.measure,
    plain: t.plain.choices.map((c) => c.member),
    condensed: t.condensed.choices.map((c) => c.member),
  }));
  return { measure: cs.measure, condensed: condensedName(cs.measure), rows, ...gate, picks };
}
