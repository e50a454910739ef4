import type { Document, JsonValue, Query } from '../../evalset/types.js';
import {
  applyPriors,
  contributions,
  docTable,
  empiricalReach,
  fuse,
  fuseParamsSchema,
  FusionParamsError,
  type FuseParams,
  fusedTheoreticalMin,
  packPairs,
  reachOnRuns,
  resolveFuseParams,
  unpackPairs,
  type DocTable,
  type FusionInput,
  type FusionSpec,
  type PackedRun,
  type ResolvedFuseParams,
} from '../fusion/index.js';
import { evenQueryMs, parseNodeParams, shownParams } from './node-params.js';
import type { BoundNode, InputDiagnostics, InputFacts, NodeKind, ScopeData, ScopeResults, ScopeRun, SystemDiagnostics } from './types.js';

/** The fused top-k that contribution shares and reachability are measured at. */
export const DIAGNOSTIC_CUTOFF = 10;

function tableOf(all: readonly ScopeResults[]): DocTable {
  const ids = new Set<string>();
  for (const r of all) for (const docs of Object.values(r)) for (const [d] of docs) ids.add(d);
  return docTable(ids);
}

/** Milliseconds since the epoch of an ISO date, NaN when absent or unparsable. */
function timeOf(value: JsonValue | undefined): number {
  return typeof value === 'string' ? Date.parse(value) : Number.NaN;
}

/**
 * Document features for the priors: timestamp and `metadata.importance` by table index. A query's time is its
 * `metadata.date` (or `timestamp`) when the eval set records one (LoCoMo and LongMemEval question dates), else
 * the newest document of its scope: the store's "now".
 */
function priorInputs(table: DocTable, documents: readonly Document[], queries: readonly Query[]) {
  const byId = new Map(documents.map((d) => [d.id, d] as const));
  const timestampMs = new Float64Array(table.ids.length).fill(Number.NaN);
  const importance = new Float64Array(table.ids.length).fill(Number.NaN);
  table.ids.forEach((id, i) => {
    const d = byId.get(id);
    if (!d) return;
    timestampMs[i] = timeOf(d.timestamp);
    const imp = d.metadata?.['importance'];
    if (typeof imp === 'number' && imp >= 0 && imp <= 1) importance[i] = imp;
  });
  let newest = Number.NaN;
  for (const d of documents) {
    const t = timeOf(d.timestamp);
    if (!Number.isNaN(t) && !(t <= newest)) newest = t;
  }
  const queryTimeMs = Float64Array.from(queries, (q) => {
    const t = timeOf(q.metadata?.['date'] ?? q.metadata?.['timestamp']);
    return Number.isNaN(t) ? newest : t;
  });
  return { features: { timestampMs, importance }, queryTimeMs };
}

/**
 * `fuse`: a Run from the Runs of two or more inputs (RRF, weighted RRF, CombSUM, CombMNZ, convex combination
 * with min-max / z-score / TM2C2 normalisation; harness/fusion), optionally re-weighted by recency and
 * importance priors. Its output is a Run like any other, so a fusion can feed another fusion.
 */
export const fuseNode: NodeKind = {
  summary: 'fuse the runs of its inputs (rrf, combsum, combmnz, cc)',
  arity: { min: 1, max: 64 },
  params: fuseParamsSchema,
  bind({ params, inputs }) {
    const r = parseNodeParams(fuseParamsSchema, params);
    if ('problems' in r) return r;
    const got = resolved(r.data, inputs);
    if ('problems' in got) return got;
    const fusion = got.resolved;
    const tm2c2 = tm2c2Problem(fusion.spec, inputs);
    if (tm2c2 !== undefined) return { problems: [tm2c2] };
    const min = fusedTheoreticalMin(
      inputs.map((input, k) => ({ weight: fusion.weights[k] as number, ...minOf(input) })),
      { ...fusion.spec, topK: 1 },
    );
    // A multiplicative prior raises a negative score instead of lowering it, so applyPriors refuses one; say so
    // now rather than after the arms have run.
    if (fusion.priors && (min === undefined || min < 0)) {
      return {
        problems: [
          `params.priors: priors scale fused scores, which must be >= 0; this fusion's can be negative (${fusion.spec.method} with ${fusion.spec.normalization} normalization); use rrf, or min-max / tm2c2 normalization`,
        ],
      };
    }
    return { node: boundFusion(r.data, fusion, inputs, min) };
  },
};

/** The params resolved against the inputs, or their problems under `params.`. */
function resolved(params: FuseParams, inputs: readonly InputFacts[]): { readonly resolved: ResolvedFuseParams } | { readonly problems: string[] } {
  try {
    return {
      resolved: resolveFuseParams(
        params,
        inputs.map((i) => i.id),
      ),
    };
  } catch (err) {
    if (err instanceof FusionParamsError) return { problems: err.problems.map((m) => `params.${m}`) };
    throw err;
  }
}

/** TM2C2 normalises by each input's theoretical minimum: an input that declares none is a problem. */
function tm2c2Problem(spec: ResolvedFuseParams['spec'], inputs: readonly InputFacts[]): string | undefined {
  if (spec.method !== 'cc' || spec.normalization !== 'tm2c2') return undefined;
  const missing = inputs.filter((i) => i.theoreticalMinScore === undefined).map((i) => i.id);
  if (missing.length === 0) return undefined;
  return `params.normalization: tm2c2 needs each input's theoretical minimum score, which ${missing.join(', ')} do(es) not declare; use min-max or z-score`;
}

/** An input's theoretical minimum as a Fusion input carries it: absent when the input declares none. */
function minOf(input: InputFacts): { theoreticalMin?: number } {
  return input.theoreticalMinScore === undefined ? {} : { theoreticalMin: input.theoreticalMinScore };
}

/** Packed input runs as the Fusion reads them, with their weights, depth and theoretical minimums. */
function fusionInputs(fusion: ResolvedFuseParams, inputs: readonly InputFacts[], runs: readonly PackedRun[]): FusionInput[] {
  return runs.map((run, k) => ({ run, weight: fusion.weights[k] as number, depth: fusion.depth, ...minOf(inputs[k] as InputFacts) }));
}

function boundFusion(params: FuseParams, fusion: ResolvedFuseParams, inputs: readonly InputFacts[], min: number | undefined): BoundNode {
  const { weights, depth, priors } = fusion;
  return {
    kind: fusion.spec.method,
    params: shownParams({ ...params, weights: Object.fromEntries(inputs.map((i, k) => [i.id, weights[k]])) }),
    // An unlimited depth is `null` (JSON has no Infinity).
    fingerprint: {
      node: 'fuse',
      v: 1,
      spec: fusion.spec as unknown as JsonValue,
      weights,
      depth: Number.isFinite(depth) ? depth : null,
      priors: (priors ?? null) as unknown as JsonValue,
    },
    theoreticalMinScore: priors ? Math.min(0, min as number) : min,
    sendsTextOffMachine: false,
    create() {
      return {
        async runScope(scope, inputRuns: readonly ScopeRun[], topK) {
          return fuseScope(fusion, inputs, scope, inputRuns, topK);
        },
      };
    },
    diagnose: (output, inputResults) => diagnoseFusion(fusion, inputs, output, inputResults),
  };
}

/** The fused Run of one scope, re-weighted by the priors when there are any; its time is shared among the queries. */
function fuseScope(fusion: ResolvedFuseParams, inputs: readonly InputFacts[], scope: ScopeData, inputRuns: readonly ScopeRun[], topK: number): ScopeRun {
  const t0 = performance.now();
  const table = tableOf(inputRuns.map((x) => x.results));
  const qids = scope.queries.map((q) => q.id);
  const packed = inputRuns.map((x) => packPairs(x.results, qids, table));
  let out = fuse(fusionInputs(fusion, inputs, packed), { ...fusion.spec, topK });
  if (fusion.priors) {
    const { features, queryTimeMs } = priorInputs(table, scope.documents, scope.queries);
    out = applyPriors(out, fusion.priors, features, queryTimeMs);
  }
  const ms = performance.now() - t0;
  return { indexStats: {}, indexMs: 0, searchMs: ms, queryMs: evenQueryMs(qids, ms), results: unpackPairs(out, table) };
}

/**
 * The inputs a fusion's shown params give weight 0: never read, so the fusion is its other inputs alone. On a
 * grid point (alpha 0 or 1 of a convex combination, a weight swept down to 0) that is a degenerate end of the
 * sweep by design, not a misconfiguration.
 */
export function zeroWeightInputs(params: JsonValue | undefined): string[] {
  const record = (v: JsonValue | undefined): Readonly<Record<string, JsonValue>> | undefined =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Readonly<Record<string, JsonValue>>) : undefined;
  return Object.entries(record(record(params)?.['weights']) ?? {})
    .filter(([, w]) => w === 0)
    .map(([id]) => id);
}

/** Contribution shares and reachability of each input at the fused top-DIAGNOSTIC_CUTOFF, over every query. */
function diagnoseFusion(
  fusion: ResolvedFuseParams,
  inputs: readonly InputFacts[],
  output: ScopeResults,
  inputResults: readonly ScopeResults[],
): SystemDiagnostics {
  const table = tableOf([output, ...inputResults]);
  const qids = Object.keys(output);
  const packedInputs = fusionInputs(
    fusion,
    inputs,
    inputResults.map((x) => packPairs(x, qids, table)),
  );
  const fused = packPairs(output, qids, table);
  const spec: FusionSpec = { ...fusion.spec, topK: Math.max(DIAGNOSTIC_CUTOFF, 1) };
  const shares = contributions(fused, packedInputs, DIAGNOSTIC_CUTOFF);
  // Held against the runs: an input whose rivals return fewer than the cutoff for some query can reach it there.
  const reach = reachOnRuns(
    packedInputs,
    spec,
    DIAGNOSTIC_CUTOFF,
    inputs.map((i) => i.id),
  );
  const empirical = empiricalReach(packedInputs, spec, DIAGNOSTIC_CUTOFF);
  const diag: InputDiagnostics[] = inputs.map((input, k) => ({
    input: input.id,
    share: shares[k]?.share ?? 0,
    soloShare: shares[k]?.soloShare ?? 0,
    reachable: reach[k]?.reachable ?? true,
    reason: reach[k]?.reason ?? '',
    empiricalReach: empirical[k] ?? 0,
    cutoff: DIAGNOSTIC_CUTOFF,
    ...(reach[k] === undefined ? {} : { queries: reach[k].queries, barredQueries: reach[k].barred }),
  }));
  const problems = diag
    .filter((d) => !d.reachable)
    .map((d) => `input ${d.input} can never place a document only it ranks first in the fused top-${DIAGNOSTIC_CUTOFF}: ${d.reason}`);
  return { inputs: diag, problems };
}
