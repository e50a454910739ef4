import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { armFactories, isArmKind } from '../../arms/registry.js';
import type { ArmFactory } from '../../arms/types.js';
import { evalSetFormats } from '../../evalset/load.js';
import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { ConfigError } from '../errors.js';
import { formatMeasure, parseMeasure } from '../metrics/index.js';
import { isMeasurePreset, measurePresets } from '../metrics/presets.js';
import { compareSchema, gateSchema, type CompareConfig, type GateConfig } from '../report/config.js';
import { configSchema, type ExpectEntry, type RawConfig } from './schema.js';
import { didYouMean } from './suggest.js';

export interface ResolvedArm {
  readonly id: string;
  readonly kind: string;
  readonly factory: ArmFactory;
  readonly params: unknown;
  readonly fingerprint: JsonValue;
  readonly label?: string;
  readonly substitute?: string;
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
  readonly arms: readonly ResolvedArm[];
  readonly compare: CompareConfig;
  readonly gate?: GateConfig;
  readonly output: string;
  readonly cache: string;
  readonly expect: Readonly<Record<string, Readonly<Record<string, ExpectEntry>>>>;
}

type Path = readonly (string | number)[];

function dotted(path: Path): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : `.${p}`;
  return s === '' ? '(top level)' : s;
}

/** Messages for zod issues, with "did you mean" for unknown keys taken from the schema that rejected them. */
function zodProblems(issues: readonly z.core.$ZodIssue[], prefix: Path, knownKeysAt: (path: Path) => readonly string[]): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as (string | number)[])];
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path as Path);
      for (const key of issue.keys) {
        out.push(`${dotted([...path, key])}: unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`);
      }
    } else {
      out.push(`${dotted(path)}: ${issue.message}`);
    }
  }
  return out;
}

/** The keys a zod object schema accepts at `path`, unwrapping optional/default/array layers. */
function keysOf(schema: z.ZodType, path: Path): readonly string[] {
  let s: unknown = schema;
  const unwrap = () => {
    for (;;) {
      const def = (s as { def?: { type?: string; innerType?: unknown; element?: unknown } }).def;
      if (def && (def.type === 'optional' || def.type === 'default' || def.type === 'prefault' || def.type === 'nullable')) s = def.innerType;
      else return;
    }
  };
  unwrap();
  for (const p of path) {
    const def = (s as { def?: { type?: string; element?: unknown; valueType?: unknown } }).def;
    if (typeof p === 'number' && def?.type === 'array') s = def.element;
    else if (def?.type === 'record') s = def.valueType;
    else if (typeof p === 'string' && (s as { shape?: Record<string, unknown> }).shape) s = (s as { shape: Record<string, unknown> }).shape[p];
    else return [];
    unwrap();
  }
  const shape = (s as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

function resolvePath(dir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(dir, p);
}

/** Checks an arm kind's requirements on this machine: env vars set, packages importable. */
function unmetRequirements(factory: ArmFactory, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const name of factory.requires?.env ?? []) {
    if (!env[name]) problems.push(`needs the environment variable ${name}; set it (its value is never printed)`);
  }
  for (const pkg of factory.requires?.packages ?? []) {
    try {
      import.meta.resolve(pkg);
    } catch {
      problems.push(`needs the package "${pkg}"; install it with \`npm install ${pkg}\``);
    }
  }
  return problems;
}

/**
 * Reads, validates and resolves an ablation config. Every problem is collected and thrown at once as a
 * ConfigError with `file: dotted.path: message` lines; nothing is left to fail an hour into a run.
 */
export function loadConfig(
  file: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; /** Overrides `output:` (relative to cwd). */ output?: string; /** Overrides `cache:` (relative to cwd). */ cache?: string } = {},
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
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(shown, zodProblems(parsed.error.issues, [], (p) => keysOf(configSchema, p)));
  }
  const cfg: RawConfig = parsed.data;
  const dir = dirname(abs);
  const problems: string[] = [];

  // Eval set: format known, path present, options valid for that format.
  const fmtNames = Object.keys(evalSetFormats);
  const fmt = Object.hasOwn(evalSetFormats, cfg.evalset.format)
    ? evalSetFormats[cfg.evalset.format as keyof typeof evalSetFormats]
    : undefined;
  let evalsetOptions: unknown = {};
  if (!fmt) {
    problems.push(`evalset.format: unknown format "${cfg.evalset.format}"${didYouMean(cfg.evalset.format, fmtNames)} (known: ${fmtNames.join(', ')})`);
  } else {
    if (cfg.evalset.split !== undefined && !fmt.splits) {
      problems.push(`evalset.split: format "${cfg.evalset.format}" has no splits; remove split`);
    }
    const r = (fmt.options as z.ZodType).safeParse(cfg.evalset.options);
    if (r.success) evalsetOptions = r.data;
    else problems.push(...zodProblems(r.error.issues, ['evalset', 'options'], (p) => keysOf(fmt.options as z.ZodType, p)));
  }
  const evalsetPath = resolvePath(dir, cfg.evalset.path);
  if (!existsSync(evalsetPath)) problems.push(`evalset.path: "${cfg.evalset.path}" does not exist (resolved against the config's folder to ${evalsetPath})`);
  const strataPath = cfg.evalset.strata === undefined ? undefined : resolvePath(dir, cfg.evalset.strata);
  if (strataPath !== undefined && !existsSync(strataPath)) problems.push(`evalset.strata: "${cfg.evalset.strata}" does not exist (resolved to ${strataPath})`);

  // Measures: one canonical spelling each, no duplicates; a preset name expands in place.
  const measures: string[] = [];
  cfg.measures.forEach((entry, i) => {
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

  // Arms: kind known, params valid for the kind, ids unique, requirements met on this machine.
  const kinds = Object.keys(armFactories);
  const arms: ResolvedArm[] = [];
  const seen = new Map<string, number>();
  cfg.arms.forEach((arm, i) => {
    const first = seen.get(arm.id);
    if (first !== undefined) problems.push(`arms[${i}].id: duplicate arm id "${arm.id}" (also arms[${first}])`);
    else seen.set(arm.id, i);
    if (!isArmKind(arm.kind)) {
      problems.push(`arms[${i}].kind: unknown arm kind "${arm.kind}"${didYouMean(arm.kind, kinds)} (known: ${kinds.join(', ')})`);
      return;
    }
    const factory = armFactories[arm.kind] as ArmFactory;
    const r = factory.params.safeParse(arm.params);
    if (!r.success) {
      problems.push(
        ...zodProblems(r.error.issues, ['arms', i, 'params'], (p) => keysOf(factory.params, p)).map(
          (m) => `${m} [${arm.kind} params: ${keysOf(factory.params, []).join(', ') || 'none'}]`,
        ),
      );
      return;
    }
    for (const unmet of unmetRequirements(factory, env)) {
      problems.push(`arms[${i}]: ${arm.kind} ${unmet}, or remove arm "${arm.id}"`);
    }
    arms.push({
      id: arm.id,
      kind: arm.kind,
      factory,
      params: r.data,
      fingerprint: factory.fingerprint(r.data as never),
      ...(arm.label === undefined ? {} : { label: arm.label }),
      ...(arm.substitute === undefined ? {} : { substitute: arm.substitute }),
    });
  });
  const armIds = cfg.arms.map((a) => a.id);
  const runRef = (path: string, runId: string | undefined) => {
    if (runId !== undefined && !armIds.includes(runId)) {
      problems.push(`${path}: "${runId}" is not an arm id${didYouMean(runId, armIds)} (arms: ${armIds.join(', ')})`);
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

  if (problems.length > 0) throw new ConfigError(shown, problems);

  // Where results go and what they are expected to be do not change the results, so they stay out of the hash.
  const hashed = { ...cfg, measures, output: undefined, cache: undefined, description: undefined, expect: undefined };
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
    arms,
    compare,
    ...(gate === undefined ? {} : { gate }),
    output: opts.output !== undefined ? resolvePath(opts.cwd ?? process.cwd(), opts.output) : resolvePath(dir, cfg.output ?? resolve(opts.cwd ?? process.cwd(), 'reports')),
    cache: opts.cache !== undefined ? resolvePath(opts.cwd ?? process.cwd(), opts.cache) : resolvePath(dir, cfg.cache ?? resolve(opts.cwd ?? process.cwd(), '.cache')),
    expect,
  });
}
