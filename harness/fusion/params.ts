import { z } from 'zod';
import { didYouMean } from '../util/suggest.js';
import { FusionParamsError } from './errors.js';
import { ABSENT_POLICIES, FUSION_METHODS, NORMALIZATIONS, type FusionSpec } from './spec.js';
import type { PriorSpec } from './priors.js';

const unit = z.number().min(0).max(1);

const priorsSchema = z
  .object({
    recency: z.object({ halfLifeDays: z.number().positive().finite(), weight: unit }).strict().optional(),
    importance: z.object({ weight: unit }).strict().optional(),
  })
  .strict();

/**
 * The `params` of a fusion in a config, strict, defaults filled:
 * - `method` (required): rrf | combsum | combmnz | cc.
 * - `rrfK`: rrf only, default 60 (an error on other methods).
 * - `depth`: documents read from each input per query, a positive integer; absent: all the input returned.
 * - `weights`: inputId -> weight >= 0; inputs not named weigh 1.
 * - `alpha`: cc with exactly two inputs: weights alpha and 1 - alpha (an error with `weights` or another method).
 * - `normalization`: combsum / combmnz / cc, default min-max (an error on rrf).
 * - `absent`: zero (default) | min.
 * - `priors`: recency { halfLifeDays, weight } and importance { weight }, weights in [0, 1].
 */
export const fuseParamsSchema = z
  .object({
    method: z.enum(FUSION_METHODS),
    rrfK: z.number().finite().min(0).optional(),
    depth: z.number().int().positive().optional(),
    weights: z.record(z.string(), z.number().finite().min(0)).optional(),
    alpha: unit.optional(),
    normalization: z.enum(NORMALIZATIONS).optional(),
    absent: z.enum(ABSENT_POLICIES).default('zero'),
    priors: priorsSchema.optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.method !== 'rrf' && p.rrfK !== undefined)
      ctx.addIssue({ code: 'custom', path: ['rrfK'], message: `rrfK applies to rrf only; remove it (method is ${p.method})` });
    if (p.method === 'rrf' && p.normalization !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['normalization'], message: 'rrf uses ranks, not scores; remove normalization or choose combsum, combmnz or cc' });
    }
    if (p.alpha !== undefined && p.method !== 'cc')
      ctx.addIssue({ code: 'custom', path: ['alpha'], message: `alpha applies to cc only; use weights with ${p.method}` });
    if (p.alpha !== undefined && p.weights !== undefined) ctx.addIssue({ code: 'custom', path: ['alpha'], message: 'give either alpha or weights, not both' });
  })
  .transform((p) => ({
    ...p,
    ...(p.method === 'rrf' ? { rrfK: p.rrfK ?? 60 } : { normalization: p.normalization ?? ('min-max' as const) }),
  }));

export type FuseParams = z.output<typeof fuseParamsSchema>;

/** A fusion's params resolved against its inputs, ready for `fuse` (add `topK`). */
export interface ResolvedFuseParams {
  readonly spec: Omit<FusionSpec, 'topK'>;
  /** One weight per input id, in the order of `inputIds`. */
  readonly weights: number[];
  /** Documents read from each input per query; Infinity = all. */
  readonly depth: number;
  readonly priors?: PriorSpec;
}

/**
 * Turns validated params into per-input weights aligned with `inputIds`. Throws FusionParamsError listing
 * every problem as `path: message` relative to `params` (a weight naming an unknown input, with a "did you
 * mean"; alpha without exactly two inputs; duplicate input ids; every weight 0), for the caller to prefix with
 * the fusion's config path.
 */
export function resolveFuseParams(params: FuseParams, inputIds: readonly string[]): ResolvedFuseParams {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const id of inputIds) {
    if (seen.has(id)) problems.push(`inputs: "${id}" is listed twice`);
    seen.add(id);
  }
  if (inputIds.length === 0) problems.push('inputs: a fusion needs at least one input');
  for (const id of Object.keys(params.weights ?? {})) {
    if (!seen.has(id)) problems.push(`weights.${id}: "${id}" is not an input of this fusion${didYouMean(id, inputIds)} (inputs: ${inputIds.join(', ')})`);
  }
  let weights = inputIds.map((id) => params.weights?.[id] ?? 1);
  if (params.alpha !== undefined) {
    if (inputIds.length !== 2) problems.push(`alpha: alpha weighs exactly two inputs (alpha, 1 - alpha), this fusion has ${inputIds.length}; use weights`);
    else weights = [params.alpha, 1 - params.alpha];
  }
  if (inputIds.length > 0 && weights.every((w) => w === 0)) problems.push('weights: every input has weight 0; give at least one a positive weight');
  if (problems.length > 0) throw new FusionParamsError(problems);
  return {
    spec: { method: params.method, rrfK: params.rrfK ?? 60, normalization: params.normalization ?? 'none', absent: params.absent },
    weights,
    depth: params.depth ?? Infinity,
    ...(params.priors === undefined ? {} : { priors: params.priors }),
  };
}
