import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import type { JsonValue, QrelsCompleteness } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { ConfigError } from '../errors.js';
import type { CompareConfig, GateConfig } from '../compare/config.js';
import type { SystemsPlan } from '../systems/plan.js';
import { didYouMean } from '../util/suggest.js';
import {
  answerGateProblems,
  answerLabelProblems,
  answerRunIds,
  evidenceGate,
  isAnswerOnlyKind,
  type ResolvedAnswer,
  resolveAnswer,
  splitAnswerSystems,
  unansweredRefProblems,
} from './answer-block.js';
import { resolveEvalset } from './evalset-block.js';
import type { JudgeConfig } from './judge.js';
import { resolveMeasures } from './measures-block.js';
import { type MeasureTable, measureTable } from '../compare/measures.js';
import { withSiblingHints } from './param-hints.js';
import { resolvePath } from './paths.js';
import { keysOf, nearMissTargets, zodProblems } from './problems.js';
import { armEntrySchema, configSchema, systemEntrySchema, type ExpectEntry, type RawConfig } from './schema.js';
import { resolveSystems } from './systems-block.js';
import {
  type ResolvedEvidence,
  type ResolvedTune,
  RunRefs,
  resolveCompare,
  resolveEvidence,
  resolveExpect,
  resolveGate,
  resolveJudging,
  resolveTune,
  runIdsOf,
} from './study-blocks.js';
import type { ValidationConfig } from './validation.js';

export type { ResolvedTune } from './study-blocks.js';
export { armRequirements } from './systems-block.js';

/** A validated config: defaults filled, paths absolute, measures canonical, arms bound to their factories. */
export interface ResolvedConfig {
  readonly file: string;
  readonly dir: string;
  readonly name: string;
  readonly description?: string;
  /** sha256 of the canonical config (defaults filled, paths as written): the identity of the experiment. */
  readonly configHash: string;
  readonly evalset: {
    readonly format: string;
    /** As written, for reports (no absolute paths in rendered files). */
    readonly pathAsWritten: string;
    readonly path: string;
    readonly split?: string;
    readonly strata?: string;
    /** `evalset.qrels`, else the format's default (ADR 0040 addendum). */
    readonly qrels: QrelsCompleteness;
    readonly options: unknown;
  };
  /** Canonical spellings, in the config's order: the names every output writes. */
  readonly measures: readonly string[];
  /**
   * Every measure of `measures`, read once by the loader, by spelling: scoring, the gate, tuning and the decision
   * take the parsed value from here (measureNamed), never by reading a spelling again.
   */
  readonly parsedMeasures: MeasureTable;
  readonly relevanceLevel: number;
  readonly unit?: string;
  readonly topK: number;
  /** Every system (arms and the systems computed from them), expanded and bound, in execution order. */
  readonly plan: SystemsPlan;
  /** Ids of the runs the report holds: every system, then one `<group>.tuned` per grid when tuning. */
  readonly runIds: readonly string[];
  readonly tune?: ResolvedTune;
  readonly compare: CompareConfig;
  /** `compare.permutations` was written in the config: the load refuses a count too small rather than raise it. */
  readonly permutationsGiven?: boolean;
  readonly gate?: GateConfig;
  readonly output: string;
  readonly cache: string;
  readonly expect: Readonly<Record<string, Readonly<Record<string, ExpectEntry>>>>;
  /** Which qrels the runner scores with (default gold). */
  readonly qrels: 'gold' | 'judged' | 'gold+judged';
  /** The judgments folder (absolute), when the config names one. */
  readonly judgments?: string;
  /** The `judge:` block, validated. */
  readonly judge?: JudgeConfig;
  /** The human labels of the judged pool (`humanLabels:`), absolute and as written. */
  readonly humanLabels?: ResolvedEvidence['humanLabels'];
  /** When the judge counts as validated (`validation:`, defaults filled). */
  readonly validation: ValidationConfig;
  /** The answer level (`answer:` and answer-only systems), when the config asks an answer measure. */
  readonly answer?: ResolvedAnswer;
}

/** A config parsed block by block: a block that failed is absent, an arm or system entry that failed is a hole. */
type LenientConfig = { -readonly [K in keyof RawConfig]?: K extends 'arms' | 'systems' ? (NonNullable<RawConfig[K]>[number] | undefined)[] : RawConfig[K] };

/**
 * The config parsed block by block rather than all or nothing, so that one mistake does not hide the others:
 * every top-level key is checked by its own schema (unknown keys with a "did you mean"), arms and systems
 * entry by entry; a block that fails is left out (or at its default) and the checks that need it are skipped.
 */
function parseLeniently(raw: unknown): { cfg: LenientConfig | undefined; problems: string[]; failedIds: string[]; failedAnswerOnly: number } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return {
      cfg: undefined,
      problems: ['(top level): expected a YAML mapping of keys (name, evalset, measures, arms, ...)'],
      failedIds: [],
      failedAnswerOnly: 0,
    };
  const obj = raw as Record<string, unknown>;
  const shape = configSchema.shape as Record<string, z.ZodType>;
  const known = Object.keys(shape);
  const problems: string[] = [];
  // The ids of entries that failed: another block naming one is not a second problem.
  const failedIds: string[] = [];
  // Answer-only entries that failed: the answer block's checks count them as there (one mistake, one problem).
  let failedAnswerOnly = 0;
  const cfg: Record<string, unknown> = {};
  const unknown = Object.keys(obj).filter((key) => !Object.hasOwn(shape, key));
  for (const key of unknown) problems.push(`${key}: unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`);
  // `measurs:` is one mistake: its line says so, and the missing `measures:` it causes is not a second problem.
  const misspelt = new Set(nearMissTargets(unknown, known, (k) => obj[k] === undefined));
  problems.push(...armsProblems(obj, misspelt));
  for (const key of known) {
    const schema = shape[key] as z.ZodType;
    if ((key === 'arms' || key === 'systems') && Array.isArray(obj[key])) {
      const element = key === 'arms' ? armEntrySchema : systemEntrySchema;
      const list = obj[key] as unknown[];
      // A failed entry stays as a hole, so later problems still name each entry by its place in the file.
      cfg[key] = list.map((entry, i) => {
        const r = element.safeParse(entry);
        if (r.success) return r.data;
        problems.push(...zodProblems(r.error.issues, [key, i], (p) => keysOf(element, p), entry));
        const id = (entry as { id?: unknown } | null)?.id;
        if (typeof id === 'string') failedIds.push(id);
        if (isAnswerOnlyKind(String((entry as { kind?: unknown } | null)?.kind))) failedAnswerOnly++;
        return undefined;
      });
      continue;
    }
    const r = schema.safeParse(obj[key]);
    if (r.success) cfg[key] = r.data;
    else if (!misspelt.has(key)) problems.push(...zodProblems(r.error.issues, [key], (p) => keysOf(schema, p), obj[key]));
  }
  return { cfg: cfg as LenientConfig, problems, failedIds, failedAnswerOnly };
}

/**
 * At least one arm, unless `systems:` lists answer-only systems (full-context, answers-file), which answer
 * without a run: an answers-only study lists no arm (docs/adr/0045-answer-level-evaluation.md). A missing
 * `arms:` that a misspelt key stands for is that key's problem.
 */
function armsProblems(obj: Record<string, unknown>, misspelt: ReadonlySet<string>): string[] {
  const systems = Array.isArray(obj['systems']) ? (obj['systems'] as unknown[]) : [];
  const answerOnly = systems.some((e) => isAnswerOnlyKind(String((e as { kind?: unknown } | null)?.kind)));
  const arms = obj['arms'];
  if (answerOnly || misspelt.has('arms') || (Array.isArray(arms) && arms.length > 0) || (arms !== undefined && !Array.isArray(arms))) return [];
  return ['arms: list at least one arm (or, for a study of answers alone, systems of kind answers-file or full-context)'];
}

function isComplete(cfg: LenientConfig): cfg is RawConfig {
  const whole = <T>(list: readonly (T | undefined)[] | undefined) => list === undefined || list.every((x) => x !== undefined);
  return (
    cfg.name !== undefined &&
    cfg.evalset !== undefined &&
    cfg.measures !== undefined &&
    cfg.topK !== undefined &&
    cfg.relevanceLevel !== undefined &&
    whole(cfg.arms) &&
    whole(cfg.systems)
  );
}

/** Where the config is read from and what overrides it: the environment requirements are checked in, the working directory flags are relative to, `--output` and `--cache`. */
export interface LoadOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Overrides `output:` (relative to cwd). */
  readonly output?: string;
  /** Overrides `cache:` (relative to cwd). */
  readonly cache?: string;
}

/** The config file's YAML as a JS value; a missing file or a YAML error is a ConfigError naming the file (and line). */
function readYaml(abs: string, shown: string): unknown {
  if (!existsSync(abs) || !statSync(abs).isFile()) {
    throw new ConfigError(shown, [`config file not found; pass an existing YAML file to --config`]);
  }
  const doc = parseDocument(readFileSync(abs, 'utf8'), { prettyErrors: true, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      shown,
      doc.errors.map((e) => `line ${e.linePos?.[0]?.line ?? '?'}: YAML: ${e.message.split('\n')[0]}`),
    );
  }
  return doc.toJS();
}

/** Every block resolved in the order its problems are reported; each block after the systems reads the values before it. */
function resolveBlocks(cfg: LenientConfig, failed: { ids: readonly string[]; answerOnly: number }, dir: string, env: NodeJS.ProcessEnv) {
  const failedIds = failed.ids;
  const evalset = resolveEvalset(cfg.evalset, { dir });
  const measures = resolveMeasures(cfg.measures);
  // Answer-only systems (full-context, answers-file) have no run: the answer block resolves them, not the plan.
  const split = splitAnswerSystems(cfg.systems);
  const systems = resolveSystems({ ...cfg, systems: split.withRuns }, { dir, env });
  const { plan, declared } = systems.value;
  const es = cfg.evalset;
  const format = evalset.value.format;
  // A block that is missing or failed is its own problem: the checks that read it are skipped, not failed again.
  const names = measures.value.map((m) => m.spelling);
  const listed = cfg.measures === undefined ? undefined : names;
  const read = cfg.measures === undefined ? undefined : measures.value;
  const study = {
    measures: listed,
    plan,
    ...(es
      ? { evalset: { format: es.format, ...(es.split === undefined ? {} : { split: es.split }), ...(format ? { splits: Boolean(format.splits) } : {}) } }
      : {}),
  };
  const tune = resolveTune(cfg.tune, study);
  const withRuns = runIdsOf(plan, tune.value);
  const answerOnly = split.answerOnly.map((a) => a.entry.id);
  const answer = resolveAnswer(cfg.answer, {
    measures: read,
    plan,
    tune: tune.value,
    runIds: withRuns,
    answerOnly: split.answerOnly,
    failedAnswerOnly: failed.answerOnly,
    topK: cfg.topK ?? 1000,
    dir,
  });
  const runIds = answer.value === undefined ? withRuns : answerRunIds(answer.value);
  // No arms with answer-only systems is an answers-only study, whose ids can be checked; otherwise the arms block failed.
  const refs = new RunRefs(runIds, new Set([...declared, ...failedIds, ...answerOnly]), cfg.arms === undefined && answerOnly.length === 0);
  const compare = resolveCompare(cfg.compare, refs);
  const gate = resolveGate(cfg.gate, refs, listed, compare.value.baseline);
  const expect = resolveExpect(cfg.expect, refs, listed);
  const unanswered =
    answer.value === undefined
      ? []
      : [
          ...unansweredRefProblems(answer.value, withRuns, refsOf(compare.value, gate.value, expect.value)),
          ...answerGateProblems(answer.value, gate.value?.measure, cfg.humanLabels !== undefined),
          ...answerLabelProblems(answer.value, {
            gate: gate.value,
            humanLabels: cfg.humanLabels !== undefined,
            qrels: cfg.qrels ?? 'gold',
            measures: read ?? [],
          }),
        ];
  const judge = resolveJudging(cfg);
  // A gate on an answer measure reads answer labels: its `judged: ppi` is answerLabelProblems' to check.
  const evidence = resolveEvidence(cfg, evidenceGate(gate.value, answer.value), dir);
  const problems = withSiblingHints(
    [evalset, measures, systems, tune, answer, compare, gate, expect, judge, evidence].flatMap((r) => r.problems).concat(unanswered),
    cfg.arms,
  );
  return {
    evalset: evalset.value,
    measures: names,
    parsedMeasures: measureTable(measures.value),
    plan,
    tune: tune.value,
    runIds: refs.runIds,
    compare: compare.value,
    gate: gate.value,
    expect: expect.value,
    judge: judge.value,
    evidence: evidence.value,
    answer: answer.value,
    problems,
  };
}

/** The run ids the compare, gate and expect blocks name, with where. */
function refsOf(compare: CompareConfig, gate: GateConfig | undefined, expect: Readonly<Record<string, unknown>>): { path: string; id: string | undefined }[] {
  return [
    { path: 'compare.baseline', id: compare.baseline },
    ...compare.questions.flatMap((q, i) => [
      { path: `compare.questions[${i}].baseline`, id: q.baseline },
      { path: `compare.questions[${i}].system`, id: q.system },
    ]),
    { path: 'gate.baseline', id: gate?.baseline },
    { path: 'gate.candidate', id: gate?.candidate },
    ...Object.keys(expect).map((id) => ({ path: `expect.${id}`, id })),
  ];
}

type Blocks = Omit<ReturnType<typeof resolveBlocks>, 'problems'>;

/** The identity of the experiment: the canonical config with defaults filled, less what does not change results (where results go, what they are expected to be). */
function configHash(cfg: RawConfig, measures: readonly string[]): string {
  const hashed = { ...cfg, measures, output: undefined, cache: undefined, description: undefined, expect: undefined, judge: undefined };
  return sha256Hex(canonicalJson(JSON.parse(JSON.stringify(hashed)) as JsonValue));
}

/** `--output`/`--cache` (relative to cwd) over the config's `output:`/`cache:` (relative to its folder), else `reports`/`.cache` in cwd. */
function folder(flag: string | undefined, written: string | undefined, dir: string, cwd: string, fallback: string): string {
  return flag !== undefined ? resolvePath(cwd, flag) : resolvePath(dir, written ?? resolve(cwd, fallback));
}

function assemble(cfg: RawConfig, b: Blocks, file: { abs: string; dir: string; cwd: string }, opts: LoadOptions): ResolvedConfig {
  const { evalset: es } = cfg;
  return Object.freeze({
    file: file.abs,
    dir: file.dir,
    name: cfg.name,
    ...(cfg.description === undefined ? {} : { description: cfg.description }),
    configHash: configHash(cfg, b.measures),
    evalset: {
      format: es.format,
      pathAsWritten: es.path,
      path: b.evalset.path,
      ...(es.split === undefined ? {} : { split: es.split }),
      ...(b.evalset.strata === undefined ? {} : { strata: b.evalset.strata }),
      qrels: es.qrels ?? b.evalset.format?.qrels ?? 'pooled',
      options: b.evalset.options,
    },
    measures: b.measures,
    parsedMeasures: b.parsedMeasures,
    relevanceLevel: cfg.relevanceLevel,
    ...(cfg.unit === undefined ? {} : { unit: cfg.unit }),
    topK: cfg.topK,
    plan: b.plan,
    runIds: b.runIds,
    ...(b.tune === undefined ? {} : { tune: b.tune }),
    compare: b.compare,
    ...(cfg.compare?.['permutations'] === undefined ? {} : { permutationsGiven: true }),
    ...(b.gate === undefined ? {} : { gate: b.gate }),
    output: folder(opts.output, cfg.output, file.dir, file.cwd, 'reports'),
    cache: folder(opts.cache, cfg.cache, file.dir, file.cwd, '.cache'),
    expect: b.expect,
    qrels: cfg.qrels ?? 'gold',
    ...(cfg.judgments === undefined ? {} : { judgments: resolvePath(file.dir, cfg.judgments) }),
    ...(b.judge === undefined ? {} : { judge: b.judge }),
    ...(b.evidence.humanLabels === undefined ? {} : { humanLabels: b.evidence.humanLabels }),
    validation: b.evidence.validation,
    ...(b.answer === undefined ? {} : { answer: b.answer }),
  });
}

/**
 * Reads, validates and resolves an ablation config: one resolver per block, each `(raw, context) → value and
 * problems`. Every problem is collected and thrown at once as a ConfigError with `file: dotted.path: message`
 * lines; nothing is left to fail an hour into a run.
 */
export function loadConfig(file: string, opts: LoadOptions = {}): ResolvedConfig {
  const cwd = opts.cwd ?? process.cwd();
  const abs = resolvePath(cwd, file);
  const shown = relative(cwd, abs) || abs;
  const lenient = parseLeniently(readYaml(abs, shown));
  const cfg = lenient.cfg;
  if (cfg === undefined) throw new ConfigError(shown, lenient.problems);
  const dir = dirname(abs);
  const { problems, ...blocks } = resolveBlocks(cfg, { ids: lenient.failedIds, answerOnly: lenient.failedAnswerOnly }, dir, opts.env ?? process.env);
  if (lenient.problems.length + problems.length > 0) throw new ConfigError(shown, [...lenient.problems, ...problems]);
  if (!isComplete(cfg)) throw new ConfigError(shown, ['(top level): internal: a block failed to parse without a problem; please report this']);
  return assemble(cfg, blocks, { abs, dir, cwd }, opts);
}
