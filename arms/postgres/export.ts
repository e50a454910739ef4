import { UsageError } from '../../harness/errors.js';
import { type FuseParams, fuseParamsSchema, resolveFuseParams } from '../../harness/fusion/index.js';
import { type HybridParams, hybridParams, type PostgresParams, postgresParams } from './params.js';
import { type FtsList, ftsPairSql, hybridSql, type ListFusion, settingsSql, tsvectorSql } from './sql.js';

/**
 * A workbench fusion of a postgres full-text run and a postgres vector run, or of two postgres full-text runs,
 * exported as the one SQL statement a Postgres user deploys (docs/adr/0041-engine-fusion-and-ann-recall.md),
 * and the `SET LOCAL` lines its transaction needs. Only what SQL here expresses exactly: rrf (weights, rrfK)
 * and cc after min-max, z-score or dbsf, absent documents contributing 0, no priors, both weights positive.
 */
export interface ExportedFusion {
  /**
   * Full text and vector: the `hybrid` params that make the postgres arm compute the same fusion (run them back
   * through the arm to check the ranking). Bind parameters: `$1` query text, `$2` depth (entries read per
   * list), `$3` query vector, `$4` topK.
   */
  readonly hybrid?: HybridParams;
  /** Two full-text rankings, which no arm computes in one statement. Bind parameters: `$1` query text, `$2` depth, `$3` topK. */
  readonly ftsPair?: FtsPairExport;
  readonly sql: string;
  readonly settings: readonly string[];
}

/** What a statement over two full-text rankings fuses, and the tsvector columns it reads. */
export interface FtsPairExport {
  /** The method, rrfK, normalization (cc only), the weight of each input by id, and the depth when the fusion sets one. */
  readonly fusion: {
    readonly method: ListFusion['method'];
    readonly rrfK: number;
    readonly normalization?: ListFusion['normalization'];
    readonly weights: Readonly<Record<string, number>>;
    readonly depth?: number;
  };
  /**
   * `tsv`, and `tsv2` when the second ranking builds another tsvector (another config, fields or label), each
   * with the expression that builds it from a document's `title` and `text`, as the arm built it.
   */
  readonly columns: readonly { readonly name: 'tsv' | 'tsv2'; readonly definition: string }[];
}

/** Why the fusion has no SQL form here, one line per reason (empty when it has one). */
function inexpressible(fuse: FuseParams, fts: PostgresParams, second: PostgresParams): string[] {
  const out: string[] = [];
  if (fuse.method !== 'rrf' && fuse.method !== 'cc') out.push(`method ${fuse.method}: only rrf and cc are exported`);
  if (fuse.method === 'cc' && !['min-max', 'z-score', 'dbsf'].includes(fuse.normalization ?? ''))
    out.push(`normalization ${fuse.normalization}: only min-max, z-score and dbsf are exported`);
  if (fuse.absent !== 'zero') out.push(`absent ${fuse.absent}: only absent: zero (a missing document adds 0) is exported`);
  if (fuse.priors !== undefined) out.push('priors: a fusion with priors is not exported');
  if (fts.mode !== 'load' || fts.ranking !== 'fts') out.push('the first input must be a postgres arm with ranking: fts in mode: load');
  if (second.mode !== 'load' || !(second.ranking === 'fts' || (second.ranking === 'vector' && second.vector !== undefined)))
    out.push('the second input must be a postgres arm with ranking: vector or ranking: fts in mode: load');
  if (fts.urlEnv !== second.urlEnv) out.push(`the inputs read different databases (urlEnv ${fts.urlEnv ?? 'embedded'} and ${second.urlEnv ?? 'embedded'})`);
  return out;
}

/**
 * Exports `fuse` over inputs `[ftsId, secondId]` (their arms' params `fts` and `second`, a vector or a full-text
 * ranking) for the scratch schema `schema` (a deployment substitutes its own table for `<schema>.docs`). Throws
 * UsageError naming every reason the fusion has no SQL form.
 */
export function exportFusionSql(
  fuse: FuseParams,
  inputIds: readonly [string, string],
  fts: PostgresParams,
  second: PostgresParams,
  schema: string,
): ExportedFusion {
  const problems = inexpressible(fuse, fts, second);
  const resolved = problems.length === 0 ? resolveFuseParams(fuse, inputIds) : undefined;
  if (resolved && !resolved.weights.every((w) => w > 0))
    problems.push(`weights ${resolved.weights.join(', ')}: a list of weight 0 is a single-list ranking, not a fusion`);
  if (problems.length > 0 || resolved === undefined)
    throw new UsageError(`the fusion of ${inputIds.join(' and ')} has no SQL form here:\n  ${problems.join('\n  ')}`, {
      hint: 'export rrf, or cc with min-max / z-score / dbsf, over a postgres fts arm and a postgres vector or fts arm',
    });
  const hybrid = hybridParams.parse({
    method: fuse.method,
    rrfK: resolved.spec.rrfK,
    ...(fuse.method === 'cc' ? { normalization: resolved.spec.normalization } : {}),
    weights: { fts: resolved.weights[0], vector: resolved.weights[1] },
    ...(Number.isFinite(resolved.depth) ? { depth: resolved.depth } : {}),
  });
  if (second.ranking === 'fts') return exportFtsPair(hybrid, inputIds, resolved.weights, [fts, second], schema);
  const v = second.vector as NonNullable<PostgresParams['vector']>;
  return { hybrid, sql: hybridSql(schema, fts.fts, v, hybrid), settings: settingsSql(v.index, second) };
}

/**
 * Two full-text rankings, fused as `h` says (its method, rrfK, normalization and depth; `weights` by input, in
 * input order), each list over its own tsvector column, one column when both rankings build the same tsvector.
 * No query-time settings: there is no vector index.
 */
function exportFtsPair(
  h: HybridParams,
  ids: readonly [string, string],
  weights: readonly number[],
  [a, b]: readonly [PostgresParams, PostgresParams],
  schema: string,
): ExportedFusion {
  const [defA, defB] = [tsvectorSql(a.fts, 'title', 'text'), tsvectorSql(b.fts, 'title', 'text')];
  const columns: FtsPairExport['columns'] = [{ name: 'tsv', definition: defA }, ...(defA === defB ? [] : [{ name: 'tsv2' as const, definition: defB }])];
  const lists: [FtsList, FtsList] = [
    { fts: a.fts, column: 'tsv', weight: weights[0]! },
    { fts: b.fts, column: defA === defB ? 'tsv' : 'tsv2', weight: weights[1]! },
  ];
  const fusion: FtsPairExport['fusion'] = {
    method: h.method,
    rrfK: h.rrfK,
    ...(h.method === 'cc' ? { normalization: h.normalization } : {}),
    weights: Object.fromEntries(ids.map((id, i) => [id, lists[i]!.weight])),
    ...(h.depth === undefined ? {} : { depth: h.depth }),
  };
  return { ftsPair: { fusion, columns }, sql: ftsPairSql(schema, lists, h), settings: [] };
}

/** The parts of a report's run the export reads (harness/report/types.ts ReportRun). */
export interface ExportRun {
  readonly id: string;
  readonly kind: string;
  readonly node?: string;
  readonly inputs?: readonly string[];
  readonly params?: unknown;
  readonly tuning?: { readonly choices: readonly { readonly member: string }[] };
}

/**
 * Refuses a system id that would not stay inside the SQL comment line it is printed in: a line break ends the
 * comment, and what follows it would run (a hand-edited report.json). UsageError naming `field`.
 */
function oneLine(id: string, field: string): void {
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(id))
    throw new UsageError(`report.json ${field}: the system id ${JSON.stringify(id)} holds a line break or another control character`, {
      hint: 'a system id is one line of printable text: fix the id in report.json, or run harness ablate again',
    });
}

/**
 * The exported SQL of system `id` among a report's runs: a fuse system, or a tuned one (its picked point; every
 * fold must have picked the same), over a postgres fts arm and a postgres vector or fts arm. UsageError otherwise.
 */
export function exportFromReport(runs: readonly ExportRun[], id: string, schema = 'harness_scratch'): ExportedFusion & { system: string } {
  const byId = new Map(runs.map((r) => [r.id, r]));
  let run = byId.get(id);
  if (run === undefined) throw new UsageError(`no system "${id}" in the report`, { hint: `systems: ${runs.map((r) => r.id).join(', ')}` });
  if (run.node === 'tune') {
    const picks = [...new Set(run.tuning?.choices.map((c) => c.member) ?? [])];
    if (picks.length !== 1) throw new UsageError(`${id}: its folds picked ${picks.length} different points (${picks.join(', ')}); export one of them by id`);
    run = byId.get(picks[0]!);
  }
  if (run?.node !== 'fuse' || run.inputs?.length !== 2)
    throw new UsageError(`${id}: only a fusion of two inputs (or a tuned one) is exported; this is a ${run?.node ?? 'missing'} system`);
  const inputs = run.inputs.map((i) => byId.get(i));
  const params = inputs.map((r) => (r?.kind === 'postgres' ? postgresParams.safeParse(r.params) : undefined));
  if (!params[0]?.success || !params[1]?.success)
    throw new UsageError(`${id}: its inputs ${run.inputs.join(', ')} must both be postgres arms (fts first, then vector or fts)`);
  oneLine(run.id, `runs[${runs.indexOf(run)}].id`);
  const fuse = fuseParamsSchema.safeParse(run.params);
  if (!fuse.success) throw new UsageError(`${id}: its params do not read as fusion params: ${fuse.error.issues.map((i) => i.message).join('; ')}`);
  const out = exportFusionSql(fuse.data, [run.inputs[0]!, run.inputs[1]!], params[0].data, params[1].data, schema);
  // Two full-text rankings print their inputs' ids (the weights) in the comment line too.
  if (out.ftsPair) for (const input of inputs) oneLine((input as ExportRun).id, `runs[${runs.indexOf(input as ExportRun)}].id`);
  return { system: run.id, ...out };
}
