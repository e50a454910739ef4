import type { Qrels, Run } from '../../evalset/types.js';
import { scoreRuns } from '../compare/score.js';
import type { ResolvedConfig } from '../config/load.js';
import type { GoldOnlyVerdict, ReportInput } from '../decision/types.js';
import { type MeasureTable, measureNamed } from '../compare/measures.js';
import { gateOn } from './condensed.js';
import type { LoadedStudy } from './load.js';
import { scoringUnit } from './scopes.js';

/** The gate's pair scored on the eval set's gold qrels alone: run -> the gate's measure -> per-query values. */
export interface GoldOnlyScores {
  readonly measure: string;
  readonly perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;
  /** Test queries with at least one gold judgment: a gold verdict over fewer says less. */
  readonly judgedQueries: number;
}

/**
 * On judged or gold+judged qrels with gold beside them, the gate's baseline and candidate scored on gold alone
 * (every pair the judge filled counts as gold leaves it: not relevant), so the report can set the verdict on
 * gold next to the one on the judge's grades. Undefined without a gate, on gold qrels, or with no gold at all.
 */
export function goldOnlyScores(cfg: ResolvedConfig, study: LoadedStudy, runs: ReadonlyMap<string, Run>): GoldOnlyScores | undefined {
  const gold: Qrels | undefined = study.qrels.judge?.gold;
  const g = cfg.gate;
  if (g === undefined || gold === undefined || gold.size === 0) return undefined;
  const ids = study.es.queries.map((q) => q.id);
  const judgedQueries = ids.filter((q) => (gold.get(q)?.size ?? 0) > 0).length;
  if (judgedQueries === 0) return undefined;
  const unit = scoringUnit(cfg, { ...study.es, qrels: gold });
  const baseline = g.baseline ?? cfg.compare.baseline ?? (cfg.runIds[0] as string);
  const pair = new Map([...runs].filter(([id]) => id === baseline || id === g.candidate));
  const opts = { relevanceLevel: cfg.relevanceLevel, ...(unit.units ? { units: unit.units } : {}) };
  const perQuery = scoreRuns(unit.qrels, pair, [measureNamed(cfg.parsedMeasures, g.measure).measure], ids, opts).perQuery;
  return { measure: g.measure, perQuery, judgedQueries };
}

/** The gate re-decided by its own rule on the gold-only values. */
export function goldOnlyVerdict(input: ReportInput, gold: GoldOnlyScores, table: MeasureTable): GoldOnlyVerdict | undefined {
  const r = gateOn(input, gold.perQuery, table);
  return r === undefined ? undefined : { verdict: r.verdict, reason: r.reason, judgedQueries: gold.judgedQueries };
}
