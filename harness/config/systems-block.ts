import { armFactories, isArmKind } from '../../arms/registry.js';
import type { ArmFactory, ArmRequirements } from '../../arms/types.js';
import { buildPlan, type PlanEntry, type SystemsPlan } from '../systems/plan.js';
import { ownPackage } from '../util/project.js';
import type { Resolved } from './resolved.js';
import type { RawConfig } from './schema.js';

/** The arms and systems blocks as parsed leniently: an entry that failed is a hole, so later problems still name entries by place. */
export interface SystemsBlocks {
  readonly arms?: readonly (NonNullable<RawConfig['arms']>[number] | undefined)[];
  readonly systems?: readonly (NonNullable<RawConfig['systems']>[number] | undefined)[];
  readonly topK?: number;
}

function optional(x: {
  readonly grid?: PlanEntry['grid'];
  readonly label?: string;
  readonly substitute?: string;
  readonly sensitive?: PlanEntry['sensitive'];
  readonly deviations?: PlanEntry['deviations'];
}) {
  return {
    ...(x.deviations === undefined ? {} : { deviations: x.deviations }),
    ...(x.sensitive === undefined ? {} : { sensitive: x.sensitive }),
    ...(x.grid === undefined ? {} : { grid: x.grid }),
    ...(x.label === undefined ? {} : { label: x.label }),
    ...(x.substitute === undefined ? {} : { substitute: x.substitute }),
  };
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

/** Every arm's requirements met on this machine, as `arms[i]:` problems. */
function requirementProblems(arms: SystemsBlocks['arms'], env: NodeJS.ProcessEnv): string[] {
  return (arms ?? []).flatMap((arm, i) => {
    if (arm === undefined || !isArmKind(arm.kind)) return [];
    return unmetRequirements(armRequirements(armFactories[arm.kind] as ArmFactory, arm.params), env).map(
      (unmet) => `arms[${i}]: ${arm.kind} ${unmet}, or remove arm "${arm.id}"`,
    );
  });
}

/** Arms (retrieve nodes) and derived systems as plan entries, each with where it stands in the config. */
function planEntries(cfg: SystemsBlocks, dir: string): PlanEntry[] {
  return [
    ...(cfg.arms ?? []).flatMap((a, i) =>
      a === undefined ? [] : [{ at: `arms[${i}]`, id: a.id, node: 'retrieve', kind: a.kind, inputs: [], params: a.params, dir, ...optional(a) }],
    ),
    ...(cfg.systems ?? []).flatMap((x, i) =>
      x === undefined ? [] : [{ at: `systems[${i}]`, id: x.id, node: x.kind, kind: x.kind, inputs: x.inputs, params: x.params, ...optional(x) }],
    ),
  ];
}

/** The systems plan: arms and derived systems expanded (grids, input subsets) and bound; requirements met on this machine. */
export function resolveSystems(
  cfg: SystemsBlocks,
  ctx: { readonly dir: string; readonly env: NodeJS.ProcessEnv },
): Resolved<{ plan: SystemsPlan; declared: ReadonlySet<string> }> {
  const problems = requirementProblems(cfg.arms, ctx.env);
  const entries = planEntries(cfg, ctx.dir);
  const built = buildPlan(entries, cfg.topK ?? 1000);
  return { value: { plan: built.plan, declared: new Set(entries.map((e) => e.id)) }, problems: [...problems, ...built.problems] };
}
