import { relative } from 'node:path';
import type { ResolvedConfig } from '../config/load.js';
import { UsageError } from '../errors.js';
import { didYouMean } from '../util/suggest.js';

/** The `--jobs` option of every command that runs a plan. */
export const jobsOption = {
  type: 'string',
  default: 'auto',
  describe: 'Worker threads for systems and scopes: a number, or auto (the cores, at most the runs that can go at once); 1 runs serially',
} as const;

/** The `--refresh` option of every command that runs a plan. */
export const refreshOption = {
  type: 'string',
  array: true,
  describe: 'Recompute this system (an arm id, repeatable) and everything downstream of it instead of reading the run cache',
} as const;

/** `--jobs N|auto`: a whole number from 1 up, or auto. */
export function parseJobs(value: string): number | 'auto' {
  if (value === 'auto') return 'auto';
  if (/^[1-9][0-9]{0,3}$/.test(value)) return Number(value);
  throw new UsageError(`--jobs: expected a whole number from 1 or "auto", got "${value}"`, { hint: '--jobs 1 runs serially; --jobs auto uses the cores' });
}

/** `--refresh` ids (repeatable, comma-separated), each a system of the config's plan. */
export function refreshIds(values: readonly unknown[] | undefined, cfg: ResolvedConfig, cwd: string): string[] {
  const refresh = (values ?? []).flatMap((r) => String(r).split(','));
  const ids = cfg.plan.systems.map((s) => s.id);
  for (const r of refresh) {
    if (!ids.includes(r)) {
      throw new UsageError(`--refresh: "${r}" is not a system of ${relative(cwd, cfg.file) || cfg.file}${didYouMean(r, ids)}`, {
        hint: `name an arm or system id: ${ids.length > 12 ? `${ids.slice(0, 12).join(', ')}, ...` : ids.join(', ')}`,
      });
    }
  }
  return refresh;
}
