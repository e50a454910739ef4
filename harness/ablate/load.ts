import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EvalSet } from '../../evalset/types.js';
import { folderReplaceProblem } from '../cache/index.js';
import { type CompareConfig, marginOf, OVERALL_MARGIN_KEY } from '../compare/config.js';
import { declaredFamilies, familyReach, type FamilyReach } from '../compare/families.js';
import { measureNamed } from '../compare/measures.js';
import type { ResolvedConfig } from '../config/load.js';
import { ConfigError, HarnessError } from '../errors.js';
import { scopesOf } from '../execution/scopes.js';
import { type QrelsChoice, withChosenQrels } from '../judge/qrels.js';
import type { Logger } from '../log.js';
import { relevanceLevelProblem } from '../metrics/evaluate.js';
import { stratumIndices } from '../decision/build.js';
import type { ScopeData } from '../systems/types.js';
import { loadConfiguredEvalSet, scoringUnit } from './scopes.js';
import { countSensitive, sensitiveProblems } from './sensitive.js';
import { foldsProblem } from './tune.js';
import { studyQueries } from './answer.js';
import { reportDirOf } from './write.js';

/** The first stage of an ablation: the eval set, its dev split when a grid is tuned on one, and the scopes that cover both query sets. */
export interface LoadedStudy {
  readonly es: EvalSet;
  readonly qrels: QrelsChoice;
  readonly dev?: EvalSet;
  readonly scopes: readonly ScopeData[];
  /** Documents flagged sensitive in the eval set (and its dev split). */
  readonly sensitiveDocuments: number;
  /** The comparison settings the report uses: the config's, with `permutations` raised when its families need it. */
  readonly compare: CompareConfig;
}

/** Each randomization family of the report this config will write, with what its draws let it reach. */
export function familyReaches(cfg: ResolvedConfig, es: EvalSet, permutations = cfg.compare.permutations): FamilyReach[] {
  if (cfg.compare.test !== 'randomization') return [];
  const strata = stratumIndices(es.queries.map((q) => ({ id: q.id, stratum: q.stratum, text: q.text }))).map((s) => ({ id: s.id, n: s.indices.length }));
  const testedMeasures = cfg.measures
    .map((m) => measureNamed(cfg.parsedMeasures, m))
    .filter((m) => m.tested)
    .map((m) => m.spelling);
  return declaredFamilies({ runIds: cfg.runIds, strata, testedMeasures, cfg: cfg.compare, ...(cfg.gate ? { gate: cfg.gate } : {}) }).map((f) =>
    familyReach(f, permutations, cfg.compare.alpha),
  );
}

/**
 * Under `gate.rule: equivalent`, every stratum the gate decides on needs a margin, and every key of
 * `gate.margins` must name one (a misspelt stratum would silently fall back to `margin`).
 */
export function marginProblems(cfg: ResolvedConfig, es: EvalSet): string[] {
  const g = cfg.gate;
  if (g?.rule !== 'equivalent') return [];
  const strata = [...new Set(es.queries.map((q) => q.stratum))];
  const known = new Set([...strata, OVERALL_MARGIN_KEY]);
  const problems = Object.keys(g.margins ?? {})
    .filter((k) => !known.has(k))
    .map((k) => `gate.margins.${k}: no stratum ${k} in the eval set (strata: ${strata.join(', ')}; ${OVERALL_MARGIN_KEY} names the overall row)`);
  const rows =
    strata.length > 1 ? [...strata.map((s) => ({ s, overall: false })), { s: OVERALL_MARGIN_KEY, overall: true }] : [{ s: strata[0] ?? '', overall: true }];
  for (const r of rows) {
    if (marginOf(g, r.s, r.overall) === undefined)
      problems.push(`gate.margins.${r.s}: rule equivalent needs a margin for every stratum; add it or set gate.margin`);
  }
  return problems;
}

/**
 * The permutation count every declared family can reach significance with (docs/adr/0039): the config's
 * when it is enough; else, when the config left it at its default, the smallest round count that is, said in
 * one line on stderr; else (the user chose it) a problem naming compare.permutations and the count needed.
 * A family no count can help (its strata too small to enumerate below the threshold) changes nothing here:
 * the report's permutations-too-few warning says so.
 */
export function effectiveCompare(cfg: ResolvedConfig, es: EvalSet, log: Logger): { compare: CompareConfig; problem?: string } {
  const short = familyReaches(cfg, es).filter((r) => !r.reachable && r.needed !== null);
  if (short.length === 0) return { compare: cfg.compare };
  const needed = Math.max(...short.map((r) => r.needed as number));
  const which = short.map((r) => `${r.family.id} (${r.family.size} tests, smallest corrected p ${r.smallestCorrectedP.toPrecision(3)})`).join(', ');
  const have = cfg.compare.permutations;
  if (cfg.permutationsGiven) {
    return {
      compare: cfg.compare,
      problem:
        `compare.permutations: ${have} draws cannot make any test of family ${which} significant at alpha ${cfg.compare.alpha}; ` +
        `set it to at least ${needed}, or remove it to let harness choose`,
    };
  }
  log.info(`harness: compare.permutations raised from ${have} to ${needed} so family ${which} can reach significance`);
  return { compare: { ...cfg.compare, permutations: needed } };
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

/** The eval set with the qrels the config chooses; a load failure also names an output problem found before it. */
async function loadScored(cfg: ResolvedConfig, log: Logger, out: string | undefined): Promise<{ es: EvalSet; qrels: QrelsChoice }> {
  try {
    return await withChosenQrels(await loadConfiguredEvalSet(cfg, log), cfg);
  } catch (err) {
    if (out && err instanceof HarnessError)
      throw new HarnessError(`${err.message}\n  also: ${cfg.file}: ${out}`, { exitCode: err.exitCode, cause: err, ...(err.hint ? { hint: err.hint } : {}) });
    throw err;
  }
}

/** What would fail at scoring time: the scoring unit and the relevance level. */
function scoringProblems(cfg: ResolvedConfig, es: EvalSet): string[] {
  try {
    const { qrels } = scoringUnit(cfg, es);
    const level = relevanceLevelProblem(
      qrels,
      cfg.relevanceLevel,
      cfg.measures.map((m) => measureNamed(cfg.parsedMeasures, m).measure),
    );
    return level ? [`relevanceLevel: ${level}`] : [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return [...err.problems];
  }
}

/** The dev split a grid is tuned on, with what is wrong with it. */
async function loadDev(cfg: ResolvedConfig, log: Logger, es: EvalSet, split: string): Promise<{ dev: EvalSet; problems: string[] }> {
  const problems: string[] = [];
  const dev = studyQueries(cfg, await loadConfiguredEvalSet(cfg, log, split));
  if (dev.queries.length === 0) problems.push(`tune.split: split "${split}" has no queries to tune on`);
  const testIds = new Map(es.queries.map((q) => [q.id, q] as const));
  const clash = dev.queries.find((q) => testIds.has(q.id) && testIds.get(q.id)?.text !== q.text);
  if (clash) problems.push(`tune.split: query ${clash.id} has different text in split ${split}; dev and test query ids must not collide`);
  return { dev, problems };
}

/**
 * Loads the eval set (and its dev split when a grid is tuned on one) and checks, before any work and all
 * together, what can fail later: the output folder, the scoring unit, the relevance level.
 */
export async function loadStudy(cfg: ResolvedConfig, log: Logger): Promise<LoadedStudy> {
  // An earlier report this user cannot replace would fail the run after all its work: refuse before it.
  const locked = await folderReplaceProblem(reportDirOf(cfg));
  if (locked !== undefined) throw new HarnessError(`output: ${locked}`, { hint: 'remove it as the user who owns it, or point output (or --output) elsewhere' });
  const out = await outputProblem(cfg);
  const problems = out ? [out] : [];
  const scored = await loadScored(cfg, log, out);
  const { qrels } = scored;
  // Retrieval measures score queries with judgments, answer measures questions with a gold answer.
  const es = studyQueries(cfg, scored.es);
  if (es.queries.length === 0) problems.push(`evalset: eval set ${es.name} has no queries to evaluate`);
  problems.push(...scoringProblems(cfg, es));
  const split = cfg.tune?.split;
  const folds = cfg.tune?.folds === undefined ? undefined : foldsProblem(es.queries, cfg.tune.folds, cfg.tune.seed);
  if (folds !== undefined) problems.push(folds);
  const loadedDev = split === undefined ? undefined : await loadDev(cfg, log, es, split);
  problems.push(...(loadedDev?.problems ?? []));
  const dev = loadedDev?.dev;
  const sensitiveDocuments = countSensitive([es, dev]);
  problems.push(...sensitiveProblems(cfg.plan, sensitiveDocuments));
  problems.push(...marginProblems(cfg, es));
  const { compare, problem } = effectiveCompare(cfg, es, log);
  if (problem !== undefined) problems.push(problem);
  if (problems.length > 0) throw new ConfigError(cfg.file, problems);
  if (!dev) return { es, qrels, scopes: scopesOf(es), sensitiveDocuments, compare };
  // Dev and test queries share the corpus: index each scope once and answer both sets.
  const testIds = new Set(es.queries.map((q) => q.id));
  const extra = dev.queries.filter((q) => !testIds.has(q.id));
  return { es, qrels, dev, scopes: scopesOf(es, [...es.queries, ...extra]), sensitiveDocuments, compare };
}
