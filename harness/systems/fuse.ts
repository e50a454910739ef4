import type { Document, JsonValue, Query, Run } from '../../evalset/types.js';
import { keysOf, zodProblems } from '../config/problems.js';
import {
  applyPriors,
  contributions,
  docTable,
  empiricalReach,
  fuse,
  fuseParamsSchema,
  FusionParamsError,
  fusedTheoreticalMin,
  packRun,
  resolveFuseParams,
  structuralReach,
  type DocTable,
  type FusionInput,
  type FusionSpec,
  type PackedRun,
  type PriorSpec,
} from '../fusion/index.js';
import type { InputDiagnostics, NodeKind, ScopeResults, ScopeRun } from './types.js';

/** The fused top-k that contribution shares and reachability are measured at. */
export const DIAGNOSTIC_CUTOFF = 10;

function toRun(results: ScopeResults): Run {
  const run = new Map<string, Map<string, number>>();
  for (const [qid, docs] of Object.entries(results)) run.set(qid, new Map(docs));
  return run;
}

function toResults(packed: PackedRun, table: DocTable): ScopeResults {
  const out: ScopeResults = {};
  packed.queries.forEach((qid, q) => {
    const list: [string, number][] = [];
    for (let i = packed.offsets[q] as number; i < (packed.offsets[q + 1] as number); i++)
      list.push([table.ids[packed.docs[i] as number] as string, packed.scores[i] as number]);
    out[qid] = list;
  });
  return out;
}

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
    const r = fuseParamsSchema.safeParse(params);
    if (!r.success) return { problems: zodProblems(r.error.issues, ['params'], (p) => keysOf(fuseParamsSchema, p)) };
    let resolved: ReturnType<typeof resolveFuseParams>;
    try {
      resolved = resolveFuseParams(
        r.data,
        inputs.map((i) => i.id),
      );
    } catch (err) {
      if (err instanceof FusionParamsError) return { problems: err.problems.map((m) => `params.${m}`) };
      throw err;
    }
    const { weights, depth } = resolved;
    const priors: PriorSpec | undefined = resolved.priors;
    const mins = inputs.map((i) => i.theoreticalMinScore);
    const specOf = (topK: number): FusionSpec => ({ ...resolved.spec, topK });
    if (specOf(1).method === 'cc' && specOf(1).normalization === 'tm2c2') {
      const missing = inputs.filter((i) => i.theoreticalMinScore === undefined).map((i) => i.id);
      if (missing.length > 0)
        return {
          problems: [
            `params.normalization: tm2c2 needs each input's theoretical minimum score, which ${missing.join(', ')} do(es) not declare; use min-max or z-score`,
          ],
        };
    }
    const fusionInputs = (runs: readonly PackedRun[]): FusionInput[] =>
      runs.map((run, k) => ({ run, weight: weights[k] as number, depth, ...(mins[k] === undefined ? {} : { theoreticalMin: mins[k] }) }));
    const shownParams = JSON.parse(JSON.stringify({ ...r.data, weights: Object.fromEntries(inputs.map((i, k) => [i.id, weights[k]])) })) as JsonValue;
    const min = fusedTheoreticalMin(
      inputs.map((_, k) => ({ weight: weights[k] as number, ...(mins[k] === undefined ? {} : { theoreticalMin: mins[k] }) })),
      specOf(1),
    );
    // A multiplicative prior raises a negative score instead of lowering it, so applyPriors refuses one; say so
    // now rather than after the arms have run.
    if (priors && (min === undefined || min < 0)) {
      return {
        problems: [
          `params.priors: priors scale fused scores, which must be >= 0; this fusion's can be negative (${resolved.spec.method} with ${resolved.spec.normalization} normalization); use rrf, or min-max / tm2c2 normalization`,
        ],
      };
    }
    return {
      node: {
        kind: resolved.spec.method,
        params: shownParams,
        // An unlimited depth is `null` (JSON has no Infinity).
        fingerprint: {
          node: 'fuse',
          v: 1,
          spec: resolved.spec as unknown as JsonValue,
          weights,
          depth: Number.isFinite(depth) ? depth : null,
          priors: (priors ?? null) as unknown as JsonValue,
        },
        theoreticalMinScore: priors ? Math.min(0, min as number) : min,
        sendsTextOffMachine: false,
        create() {
          return {
            async runScope(scope, inputRuns: readonly ScopeRun[], topK) {
              const t0 = performance.now();
              const table = tableOf(inputRuns.map((x) => x.results));
              const qids = scope.queries.map((q) => q.id);
              const packed = inputRuns.map((x) => packRun(toRun(x.results), qids, table));
              let out = fuse(fusionInputs(packed), specOf(topK));
              if (priors) {
                const { features, queryTimeMs } = priorInputs(table, scope.documents, scope.queries);
                out = applyPriors(out, priors, features, queryTimeMs);
              }
              const ms = performance.now() - t0;
              const each = qids.length === 0 ? 0 : ms / qids.length;
              return { indexStats: {}, indexMs: 0, searchMs: ms, queryMs: Object.fromEntries(qids.map((q) => [q, each])), results: toResults(out, table) };
            },
          };
        },
        diagnose(output, inputResults) {
          const table = tableOf([output, ...inputResults]);
          const qids = Object.keys(output);
          const packedInputs = fusionInputs(inputResults.map((x) => packRun(toRun(x), qids, table)));
          const fused = packRun(toRun(output), qids, table);
          const spec = specOf(Math.max(DIAGNOSTIC_CUTOFF, 1));
          const shares = contributions(fused, packedInputs, DIAGNOSTIC_CUTOFF);
          const reach = structuralReach(
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
          }));
          const problems = diag
            .filter((d) => !d.reachable)
            .map((d) => `input ${d.input} can never place a document only it ranks first in the fused top-${DIAGNOSTIC_CUTOFF}: ${d.reason}`);
          return { inputs: diag, problems };
        },
      },
    };
  },
};
