import { loadEvalSet } from '../../evalset/load.js';
import type { EvalSet } from '../../evalset/types.js';
import type { ResolvedConfig } from '../config/load.js';
import { ConfigError, HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { measureNamed } from '../compare/measures.js';
import { needsTurnSessions } from '../metrics/measure.js';
import { answerEvalsetOptions } from './answer.js';

/**
 * The config's eval set, at its split or at `split` (the dev split a grid is tuned on); a study of answer
 * measures alone keeps the questions without judgments that its format would leave out (answer.ts).
 */
export function loadConfiguredEvalSet(cfg: ResolvedConfig, log: Logger, split?: string): Promise<EvalSet> {
  const s = split ?? cfg.evalset.split;
  return loadEvalSet(
    {
      format: cfg.evalset.format,
      path: cfg.evalset.path,
      ...(s === undefined ? {} : { split: s }),
      ...(cfg.evalset.strata === undefined ? {} : { strata: cfg.evalset.strata }),
      options: answerEvalsetOptions(cfg),
      source: cfg.file,
    },
    log,
  );
}

/** What scoring at a unit reads of a config: its unit, its file (for errors) and, when it names any, its measures with their values. */
type UnitConfig = Pick<ResolvedConfig, 'unit' | 'file'> & (Pick<ResolvedConfig, 'measures' | 'parsedMeasures'> | { readonly measures?: undefined });

/**
 * The qrels and unit map to score with. With `unit:` set, each query's qrels move to that unit (a unit takes
 * the best grade of its judged members) and runs are mapped through the same map at evaluation.
 */
export function scoringUnit(
  cfg: UnitConfig,
  es: EvalSet,
): { qrels: EvalSet['qrels']; units?: ReadonlyMap<string, string>; sessions?: ReadonlyMap<string, string> } {
  const sessions = turnSessionsFor(cfg, es);
  if (cfg.unit === undefined) return { qrels: es.qrels, ...(sessions ? { sessions } : {}) };
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

/**
 * The turn -> session map that LongMemEval's turn-to-session measures (`*-T2S@k`) read, when the config asks
 * for one; refused at load (exit 2) where they cannot be scored: at a `unit:`, or on an eval set without turns.
 */
function turnSessionsFor(cfg: UnitConfig, es: EvalSet) {
  if (cfg.measures === undefined) return undefined;
  const table = cfg.parsedMeasures;
  const asked = cfg.measures.filter((m) => needsTurnSessions(measureNamed(table, m).measure));
  if (asked.length === 0) return undefined;
  const what = `measures: ${asked.join(', ')} (LongMemEval's turn-to-session numbers)`;
  if (cfg.unit !== undefined) {
    throw new ConfigError(cfg.file, [`${what} map a turn ranking to sessions themselves; drop unit: ${cfg.unit}, or use Success@k, R-all@k, nDCG-LME@k`]);
  }
  const sessions = es.units?.get('session');
  if (!sessions)
    throw new ConfigError(cfg.file, [`${what} need the session of every turn; eval set ${es.name} has none (LongMemEval: options: { unit: turn })`]);
  return sessions;
}
