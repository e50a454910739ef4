import { join } from 'node:path';
import type { ContentStore } from '../cache/index.js';
import type { Logger } from '../log.js';
import type { SystemsPlan } from '../systems/plan.js';
import { probePlan } from '../systems/probe.js';
import type { ScopeData } from '../systems/types.js';
import { outcomeOf, type SystemOutcome } from './outcome.js';
import { executeParallel } from './parallel.js';
import { autoJobs } from './pool.js';
import type { SystemRuns } from './scope-run.js';
import { executeSerial } from './serial.js';

/** What a plan is run from: its systems, the depth each returns, the cache root its work folders live under. */
export interface PlanToRun {
  readonly plan: SystemsPlan;
  readonly topK: number;
  readonly cache: string;
}

/** How a plan runs: where runs are cached, where to log, what arms may read, threads, what to recompute. */
export interface RunPlanOptions {
  readonly store: ContentStore;
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  /** Worker threads (`--jobs`): a number (1 runs serially) or `auto` ({@link autoJobs}); default 1. */
  readonly jobs?: number | 'auto';
  /** System ids to recompute instead of reading the run cache (`--refresh`); everything downstream follows. */
  readonly refresh?: readonly string[];
}

/** A plan as it ran: every system's outcome in plan order, and the threads it ran with. */
export interface ExecutedPlan {
  readonly outcomes: ReadonlyMap<string, SystemOutcome>;
  readonly jobs: number;
}

/**
 * The one way anything gets runs (`harness ablate`, `harness judge`, `--dry-run` aside): remote systems are
 * probed first, so a changed server never serves an old run from the cache; then every system of the plan
 * runs over every scope, each from the run cache when it can: a system is computed at most once per scope and
 * reused by every system that consumes it, and its instance (an arm with its model) is created only on the
 * first cache miss and closed when the system is done. With jobs > 1 the (system, scope) runs whose inputs are
 * ready go to a pool of worker threads (pool.ts); the outcomes are the same, assembled in plan order.
 */
export async function runPlan(source: PlanToRun, scopes: readonly ScopeData[], opts: RunPlanOptions): Promise<ExecutedPlan> {
  const { store, log, env } = opts;
  const jobs = opts.jobs === undefined ? 1 : opts.jobs === 'auto' ? autoJobs(source.plan, scopes.length) : opts.jobs;
  const plan = await probePlan(source.plan, { cache: store, log, env, workDir: join(source.cache, 'work') });
  const execute = {
    topK: source.topK,
    store,
    log,
    env,
    workDir: source.cache,
    jobs,
    ...(opts.refresh === undefined ? {} : { refresh: new Set(opts.refresh) }),
  };
  const runs = jobs > 1 ? await executeParallel(plan, scopes, { ...execute, jobs }) : await executeSerial(plan, scopes, execute);
  return { outcomes: outcomesOf(plan, runs, scopes, log), jobs };
}

function outcomesOf(plan: SystemsPlan, runs: ReadonlyMap<string, SystemRuns>, scopes: readonly ScopeData[], log: Logger): Map<string, SystemOutcome> {
  const outcomes = new Map<string, SystemOutcome>();
  for (const system of plan.systems) outcomes.set(system.id, outcomeOf(system, runs.get(system.id) as SystemRuns, scopes, outcomes, log));
  return outcomes;
}
