import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { armFactories, isArmKind } from '../../arms/registry.js';
import type { ArmFactory, ArmRequirements } from '../../arms/types.js';
import { evalSetFormats } from '../../evalset/load.js';
import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { ConfigError } from '../errors.js';
import { formatMeasure, parseMeasure } from '../metrics/index.js';
import { isMeasurePreset, measurePresets } from '../metrics/presets.js';
import { compareSchema, gateSchema, type CompareConfig, type GateConfig } from '../compare/config.js';
import { armEntrySchema, configSchema, systemEntrySchema, type ExpectEntry, type RawConfig } from './schema.js';
import { didYouMean } from '../util/suggest.js';
import { ownPackage } from '../util/project.js';
import { keysOf, zodProblems } from './problems.js';
import { buildPlan, type PlanEntry, type SystemsPlan } from '../systems/plan.js';
import { judgeConfigSchema, type JudgeConfig } from './judge.js';

/** The `tune:` block, resolved: the measure in its canonical spelling. */
export interface ResolvedTune {
  readonly measure: string;
  readonly split?: string;
  readonly folds?: number;
  readonly seed: number;
}

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
    readonly options: unknown;
  };
  readonly measures: readonly string[];
  readonly relevanceLevel: number;
  readonly unit?: string;
  readonly topK: number;
  /** Every system (arms and the systems computed from them), expanded and bound, in execution order. */
  readonly plan: SystemsPlan;
  /** Ids of the runs the report holds: every system, then one `<group>.tuned` per grid when tuning. */
  readonly runIds: readonly string[];
  readonly tune?: ResolvedTune;
  readonly compare: CompareConfig;
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
}

/** A config parsed block by block: a block that failed is absent, an arm or system entry that failed is a hole. */
type LenientConfig = { -readonly [K in keyof RawConfig]?: K extends 'arms' | 'systems' ? (NonNullable<RawConfig[K]>[number] | undefined)[] : RawConfig[K] };

/**
 * The config parsed block by block rather than all or nothing, so that one mistake does not hide the others:
 * every top-level key is checked by its own schema (unknown keys with a "did you mean"), arms and systems
 * entry by entry; a block that fails is left out (or at its default) and the checks that need it are skipped.
 */
function parseLeniently(raw: unknown): { cfg: LenientConfig | undefined; problems: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { cfg: undefined, problems: ['(top level): expected a YAML mapping of keys (name, evalset, measures, arms, ...)'] };
  const obj = raw as Record<string, unknown>;
  const shape = configSchema.shape as Record<string, z.ZodType>;
  const known = Object.keys(shape);
  const problems: string[] = [];
  const cfg: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    if (!Object.hasOwn(shape, key)) problems.push(`${key}: unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`);
  }
  for (const key of known) {
    const schema = shape[key] as z.ZodType;
    if ((key === 'arms' || key === 'systems') && Array.isArray(obj[key])) {
      const element = key === 'arms' ? armEntrySchema : systemEntrySchema;
      const list = obj[key] as unknown[];
      if (key === 'arms' && list.length === 0) problems.push('arms: list at least one arm');
      // A failed entry stays as a hole, so later problems still name each entry by its place in the file.
      cfg[key] = list.map((entry, i) => {
        const r = element.safeParse(entry);
        if (r.success) return r.data;
        problems.push(...zodProblems(r.error.issues, [key, i], (p) => keysOf(element, p)));
        return undefined;
      });
      continue;
    }
    const r = schema.safeParse(obj[key]);
    if (r.success) cfg[key] = r.data;
    else problems.push(...zodProblems(r.error.issues, [key], (p) => keysOf(schema, p)));
  }
  return { cfg: cfg as LenientConfig, problems };
}

function isComplete(cfg: LenientConfig): cfg is RawConfig {
  const whole = <T>(list: readonly (T | undefined)[] | undefined) => list === undefined || list.every((x) => x !== undefined);
  return (
    cfg.name !== undefined &&
    cfg.evalset !== undefined &&
    cfg.measures !== undefined &&
    cfg.arms !== undefined &&
    cfg.topK !== undefined &&
    cfg.relevanceLevel !== undefined &&
    whole(cfg.arms) &&
    whole(cfg.systems)
  );
}

function optional(x: {
  readonly grid?: PlanEntry['grid'];
  readonly label?: string;
  readonly substitute?: string;
  readonly sensitive?: PlanEntry['sensitive'];
}) {
  return {
    ...(x.sensitive === undefined ? {} : { sensitive: x.sensitive }),
    ...(x.grid === undefined ? {} : { grid: x.grid }),
    ...(x.label === undefined ? {} : { label: x.label }),
    ...(x.substitute === undefined ? {} : { substitute: x.substitute }),
  };
}

function resolvePath(dir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(dir, p);
}

/** `pkg` at the version range harness is built for (its peer or dependency range), for an `npm install`. */
function installSpec(pkg: string): string {
  const pj = ownPackage();
  const range = pj.peerDependencies?.[pkg] ?? pj.dependencies?.[pkg];
  return range === undefined ? pkg : `${pkg}@${range}`;
}

/** An arm's requirements with these params (raw from the config; unparseable params fall back to the defaults). */
export function armRequirements(factory: ArmFactory, rawParams: unknown): ArmRequirements {
  if (typeof factory.requires !== 'function') return factory.requires ?? {};
  const parsed = factory.params.safeParse(rawParams ?? {});
  const fallback = factory.params.safeParse({});
  const params = parsed.success ? parsed.data : fallback.success ? fallback.data : undefined;
  return params === undefined ? {} : factory.requires(params);
}

/** Checks an arm's requirements on this machine: env vars set, packages importable. */
function unmetRequirements(req: ArmRequirements, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const name of req.env ?? []) {
    if (!env[name]) problems.push(`needs the environment variable ${name}; set it (its value is never printed)`);
  }
  const missing = (req.packages ?? []).filter((pkg) => {
    try {
      import.meta.resolve(pkg);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    const which = missing.length === 1 ? `the package "${missing[0]}"; install it` : `the packages ${missing.map((p) => `"${p}"`).join(', ')}; install them`;
    problems.push(`needs ${which} with \`npm install ${missing.map(installSpec).join(' ')}\``);
  }
  return problems;
}

/**
 * Reads, validates and resolves an ablation config. Every problem is collected and thrown at once as a
 * ConfigError with `file: dotted.path: message` lines; nothing is left to fail an hour into a run.
 */
export function loadConfig(
  file: string,
  opts: {
    env?: NodeJS.ProcessEnv;
    cwd?: string /** Overrides `output:` (relative to cwd). */;
    output?: string /** Overrides `cache:` (relative to cwd). */;
    cache?: string;
  } = {},
): ResolvedConfig {
  const env = opts.env ?? process.env;
  const abs = resolvePath(opts.cwd ?? process.cwd(), file);
  const shown = relative(opts.cwd ?? process.cwd(), abs) || abs;
  if (!existsSync(abs) || !statSync(abs).isFile()) {
    throw new ConfigError(shown, [`config file not found; pass an existing YAML file to --config`]);
  }
  const doc = parseDocument(readFileSync(abs, 'utf8'), { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      shown,
      doc.errors.map((e) => `line ${e.linePos?.[0]?.line ?? '?'}: YAML: ${e.message.split('\n')[0]}`),
    );
  }
  const raw: unknown = doc.toJS();
  const lenient = parseLeniently(raw);
  const cfg = lenient.cfg;
  const dir = dirname(abs);
  const problems: string[] = [...lenient.problems];
  if (cfg === undefined) throw new ConfigError(shown, problems);

  // Eval set: format known, path present, options valid for that format.
  const fmtNames = Object.keys(evalSetFormats);
  const es = cfg.evalset;
  const fmt = es && Object.hasOwn(evalSetFormats, es.format) ? evalSetFormats[es.format as keyof typeof evalSetFormats] : undefined;
  let evalsetOptions: unknown = {};
  let evalsetPath = '';
  let strataPath: string | undefined;
  if (es) {
    if (!fmt) {
      problems.push(`evalset.format: unknown format "${es.format}"${didYouMean(es.format, fmtNames)} (known: ${fmtNames.join(', ')})`);
    } else {
      if (es.split !== undefined && !fmt.splits) problems.push(`evalset.split: format "${es.format}" has no splits; remove split`);
      const r = (fmt.options as z.ZodType).safeParse(es.options);
      if (r.success) evalsetOptions = r.data;
      else problems.push(...zodProblems(r.error.issues, ['evalset', 'options'], (p) => keysOf(fmt.options as z.ZodType, p)));
    }
    evalsetPath = resolvePath(dir, es.path);
    if (!existsSync(evalsetPath)) problems.push(`evalset.path: "${es.path}" does not exist (resolved against the config's folder to ${evalsetPath})`);
    strataPath = es.strata === undefined ? undefined : resolvePath(dir, es.strata);
    if (strataPath !== undefined && !existsSync(strataPath)) problems.push(`evalset.strata: "${es.strata}" does not exist (resolved to ${strataPath})`);
  }

  // Measures: one canonical spelling each, no duplicates; a preset name expands in place.
  const measures: string[] = [];
  (cfg.measures ?? []).forEach((entry, i) => {
    for (const m of isMeasurePreset(entry) ? measurePresets[entry] : [entry]) addMeasure(m, i);
  });
  function addMeasure(m: string, i: number): void {
    try {
      const canonical = formatMeasure(parseMeasure(m));
      if (measures.includes(canonical)) problems.push(`measures[${i}]: "${m}" is listed twice (as ${canonical})`);
      else measures.push(canonical);
    } catch (err) {
      problems.push(`measures[${i}]: ${(err as Error).message}`);
    }
  }

  // Systems: arms (retrieve nodes) and derived systems expanded into the plan; requirements met on this machine.
  (cfg.arms ?? []).forEach((arm, i) => {
    if (arm === undefined || !isArmKind(arm.kind)) return;
    for (const unmet of unmetRequirements(armRequirements(armFactories[arm.kind] as ArmFactory, arm.params), env)) {
      problems.push(`arms[${i}]: ${arm.kind} ${unmet}, or remove arm "${arm.id}"`);
    }
  });
  const entries: PlanEntry[] = [
    ...(cfg.arms ?? []).flatMap((a, i) =>
      a === undefined ? [] : [{ at: `arms[${i}]`, id: a.id, node: 'retrieve', kind: a.kind, inputs: [], params: a.params, dir, ...optional(a) }],
    ),
    ...(cfg.systems ?? []).flatMap((x, i) =>
      x === undefined ? [] : [{ at: `systems[${i}]`, id: x.id, node: x.kind, kind: x.kind, inputs: x.inputs, params: x.params, ...optional(x) }],
    ),
  ];
  const built = buildPlan(entries, cfg.topK ?? 1000);
  problems.push(...built.problems);
  const plan = built.plan;

  let tune: ResolvedTune | undefined;
  if (cfg.tune !== undefined) {
    const t = cfg.tune;
    try {
      const m = formatMeasure(parseMeasure(t.measure));
      if (!measures.includes(m)) problems.push(`tune.measure: "${t.measure}" is not among measures (${measures.join(', ')})`);
      tune = { measure: m, seed: t.seed, ...(t.split === undefined ? {} : { split: t.split }), ...(t.folds === undefined ? {} : { folds: t.folds }) };
    } catch (err) {
      problems.push(`tune.measure: ${(err as Error).message}`);
    }
    if (plan.groups.size === 0) problems.push('tune: no arm or system has a grid or input subsets to tune; add a grid or remove tune');
    if (t.split !== undefined && es && fmt && !fmt.splits) problems.push(`tune.split: format "${es.format}" has no splits; use folds`);
    if (t.split !== undefined && t.split === (es?.split ?? 'test'))
      problems.push(`tune.split: "${t.split}" is the split being scored; tune on another (e.g. dev)`);
  }
  const runIds = [...plan.systems.map((x) => x.id), ...(tune ? [...plan.groups.keys()].map((g) => `${g}.tuned`) : [])];
  // An id whose entry has problems of its own is not reported again wherever it is named.
  const declared = new Set(entries.map((e) => e.id));
  const runRef = (path: string, runId: string | undefined) => {
    if (runId !== undefined && !runIds.includes(runId) && !declared.has(runId)) {
      problems.push(
        `${path}: "${runId}" is not a system id${didYouMean(runId, runIds)} (systems: ${runIds.length > 12 ? `${runIds.slice(0, 12).join(', ')}, ... ${runIds.length - 12} more` : runIds.join(', ')})`,
      );
    }
  };

  // compare / gate: validated by the report module's own schemas.
  let compare = compareSchema.parse({});
  const c = compareSchema.safeParse(cfg.compare ?? {});
  if (c.success) {
    compare = c.data;
    runRef('compare.baseline', compare.baseline);
  } else problems.push(...zodProblems(c.error.issues, ['compare'], (p) => keysOf(compareSchema, p)));
  let gate: GateConfig | undefined;
  if (cfg.gate !== undefined) {
    const g = gateSchema.safeParse(cfg.gate);
    if (g.success) {
      gate = g.data;
      runRef('gate.baseline', gate.baseline);
      runRef('gate.candidate', gate.candidate);
      try {
        const m = formatMeasure(parseMeasure(gate.measure));
        if (!measures.includes(m)) problems.push(`gate.measure: "${gate.measure}" is not among measures (${measures.join(', ')})`);
        else gate = { ...gate, measure: m };
      } catch (err) {
        problems.push(`gate.measure: ${(err as Error).message}`);
      }
    } else problems.push(...zodProblems(g.error.issues, ['gate'], (p) => keysOf(gateSchema, p)));
  }

  // expect: runs and measures must exist, so a typo can never make --verify pass vacuously.
  const expect: Record<string, Record<string, ExpectEntry>> = {};
  for (const [runId, entries] of Object.entries(cfg.expect ?? {})) {
    runRef(`expect.${runId}`, runId);
    expect[runId] = {};
    for (const [m, entry] of Object.entries(entries)) {
      try {
        const canonical = formatMeasure(parseMeasure(m));
        if (!measures.includes(canonical)) problems.push(`expect.${runId}.${m}: not among measures (${measures.join(', ')}); add it there`);
        expect[runId]![canonical] = entry;
      } catch (err) {
        problems.push(`expect.${runId}.${m}: ${(err as Error).message}`);
      }
    }
  }

  // qrels / judgments / judge: judged qrels need a judgments folder; the judge block is the judge module's.
  if (cfg.qrels !== undefined && cfg.qrels !== 'gold' && cfg.judgments === undefined)
    problems.push(`qrels: "${cfg.qrels}" reads judgments; add judgments: <folder written by harness judge>`);
  let judge: JudgeConfig | undefined;
  if (cfg.judge !== undefined) {
    const j = judgeConfigSchema.safeParse(cfg.judge);
    if (j.success) judge = j.data;
    else problems.push(...zodProblems(j.error.issues, ['judge'], (p) => keysOf(judgeConfigSchema, p)));
  }

  if (problems.length > 0) throw new ConfigError(shown, problems);
  if (!isComplete(cfg)) throw new ConfigError(shown, ['(top level): internal: a block failed to parse without a problem; please report this']);

  // Where results go and what they are expected to be do not change the results, so they stay out of the hash.
  const hashed = { ...cfg, measures, output: undefined, cache: undefined, description: undefined, expect: undefined, judge: undefined };
  return Object.freeze({
    file: abs,
    dir,
    name: cfg.name,
    ...(cfg.description === undefined ? {} : { description: cfg.description }),
    configHash: sha256Hex(canonicalJson(JSON.parse(JSON.stringify(hashed)) as JsonValue)),
    evalset: {
      format: cfg.evalset.format,
      pathAsWritten: cfg.evalset.path,
      path: evalsetPath,
      ...(cfg.evalset.split === undefined ? {} : { split: cfg.evalset.split }),
      ...(strataPath === undefined ? {} : { strata: strataPath }),
      options: evalsetOptions,
    },
    measures,
    relevanceLevel: cfg.relevanceLevel,
    ...(cfg.unit === undefined ? {} : { unit: cfg.unit }),
    topK: cfg.topK,
    plan,
    runIds,
    ...(tune === undefined ? {} : { tune }),
    compare,
    ...(gate === undefined ? {} : { gate }),
    output:
      opts.output !== undefined
        ? resolvePath(opts.cwd ?? process.cwd(), opts.output)
        : resolvePath(dir, cfg.output ?? resolve(opts.cwd ?? process.cwd(), 'reports')),
    cache:
      opts.cache !== undefined
        ? resolvePath(opts.cwd ?? process.cwd(), opts.cache)
        : resolvePath(dir, cfg.cache ?? resolve(opts.cwd ?? process.cwd(), '.cache')),
    expect,
    qrels: cfg.qrels ?? 'gold',
    ...(cfg.judgments === undefined ? {} : { judgments: resolvePath(dir, cfg.judgments) }),
    ...(judge === undefined ? {} : { judge }),
  });
}
