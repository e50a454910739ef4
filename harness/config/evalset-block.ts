import { existsSync } from 'node:fs';
import type { z } from 'zod';
import { evalSetFormats } from '../../evalset/load.js';
import { didYouMean } from '../util/suggest.js';
import { resolvePath } from './paths.js';
import { keysOf, zodProblems } from './problems.js';
import type { Resolved } from './resolved.js';
import type { RawConfig } from './schema.js';

type EvalSetFormat = (typeof evalSetFormats)[keyof typeof evalSetFormats];

/** The `evalset:` block resolved: its format's definition, options parsed by that format, paths absolute. */
export interface EvalsetBlock {
  readonly format?: EvalSetFormat;
  readonly options: unknown;
  readonly path: string;
  readonly strata?: string;
}

/** Format known (with a "did you mean"), split allowed, options valid for that format. */
function formatOf(es: RawConfig['evalset']): Resolved<{ format?: EvalSetFormat; options: unknown }> {
  const names = Object.keys(evalSetFormats);
  if (!Object.hasOwn(evalSetFormats, es.format))
    return { value: { options: {} }, problems: [`evalset.format: unknown format "${es.format}"${didYouMean(es.format, names)} (known: ${names.join(', ')})`] };
  const format = evalSetFormats[es.format as keyof typeof evalSetFormats];
  const problems: string[] = [];
  if (es.split !== undefined && !format.splits) problems.push(`evalset.split: format "${es.format}" has no splits; remove split`);
  const r = (format.options as z.ZodType).safeParse(es.options);
  if (r.success) return { value: { format, options: r.data }, problems };
  problems.push(...zodProblems(r.error.issues, ['evalset', 'options'], (p) => keysOf(format.options as z.ZodType, p), es.options));
  return { value: { format, options: {} }, problems };
}

/** The eval set's format, options and paths (resolved against the config's folder, each checked to exist). */
export function resolveEvalset(es: RawConfig['evalset'] | undefined, ctx: { readonly dir: string }): Resolved<EvalsetBlock> {
  if (!es) return { value: { options: {}, path: '' }, problems: [] };
  const f = formatOf(es);
  const problems = [...f.problems];
  const path = resolvePath(ctx.dir, es.path);
  if (!existsSync(path)) problems.push(`evalset.path: "${es.path}" does not exist (resolved against the config's folder to ${path})`);
  const strata = es.strata === undefined ? undefined : resolvePath(ctx.dir, es.strata);
  if (strata !== undefined && !existsSync(strata)) problems.push(`evalset.strata: "${es.strata}" does not exist (resolved to ${strata})`);
  const format = f.value.format === undefined ? {} : { format: f.value.format };
  return { value: { ...format, options: f.value.options, path, ...(strata === undefined ? {} : { strata }) }, problems };
}
