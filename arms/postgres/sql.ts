import type { FtsParams, HybridParams, VectorParams } from './params.js';

/**
 * The SQL of the `postgres` arm, as pure string builders. Values a user types (query text, vectors, limits)
 * are always bind parameters; what is spliced into the text comes from params validated against closed sets or
 * numeric ranges (params.ts), or from the scratch schema's generated name.
 *
 * Every list is ordered `score DESC, id COLLATE "C" DESC`: the workbench's ranking order (score descending,
 * then docId descending, as trec_eval). `COLLATE "C"` compares bytes, which for UTF-8 is code-point order: the
 * JavaScript order of the ids for every id without characters above U+FFFF.
 */

const ORDER = 'ORDER BY score DESC, id COLLATE "C" DESC';

/** A scratch schema name: letters, digits and underscore only. */
export function checkedSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a scratch schema name: ${schema}`);
  return schema;
}

/** An identifier as SQL text: double-quoted, inner quotes doubled (any name PostgreSQL holds reads back as itself). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The tsvector of one document from bind parameters `title` and `text` (SQL expressions). */
export function tsvectorSql(p: FtsParams, title: string, text: string): string {
  const cfg = `'${p.config}'::regconfig`;
  if (p.fields === 'flat') return `to_tsvector(${cfg}, concat_ws(' ', nullif(${title}, ''), ${text}))`;
  return `setweight(to_tsvector(${cfg}, coalesce(${title}, '')), '${p.titleWeight}') || setweight(to_tsvector(${cfg}, ${text}), '${p.textWeight}')`;
}

/** The tsquery of the query text in bind parameter `text`. */
export function tsquerySql(p: FtsParams, text: string): string {
  const cfg = `'${p.config}'::regconfig`;
  if (p.parser === 'raw') return `to_tsquery(${cfg}, ${text})`;
  const parsed = `${p.parser === 'websearch' ? 'websearch_to_tsquery' : 'plainto_tsquery'}(${cfg}, ${text})`;
  // The parsers AND every term; a bag-of-words search ORs them. Lexemes are quoted in tsquery text, so the
  // only ' & ' outside quotes are the operators.
  return p.match === 'all' ? parsed : `replace(${parsed}::text, ' & ', ' | ')::tsquery`;
}

/**
 * Full-text top-`limit`: `(id, score)` by ts_rank / ts_rank_cd with the weights and normalisation bitmask, over
 * the tsvector column `column` (a name this module chooses, never a user's).
 */
export function ftsTopSql(schema: string, p: FtsParams, text: string, limit: string, column = 'tsv'): string {
  const weights = `'{${p.weights.join(',')}}'::float4[]`;
  const score = `${p.rank}(${weights}, ${column}, q, ${p.normalization})::float8`;
  return `SELECT id, ${score} AS score FROM ${checkedSchema(schema)}.docs, (SELECT ${tsquerySql(p, text)} AS q) t WHERE ${column} @@ q ${ORDER} LIMIT ${limit}`;
}

const OPERATOR = { cosine: '<=>', l2: '<->', inner: '<#>' } as const;
const OPS_SUFFIX = { cosine: 'cosine_ops', l2: 'l2_ops', inner: 'ip_ops' } as const;

/** The distance of row `emb` to the query vector in bind parameter `vector`. */
export function distanceSql(p: VectorParams, vector: string): string {
  return `emb ${OPERATOR[p.distance]} ${vector}::${p.type}`;
}

/** Higher is better: 1 - cosine distance, minus the L2 distance, the inner product (pgvector's <#> is its negation). */
export function scoreOfDistance(p: VectorParams, distance: string): string {
  return p.distance === 'cosine' ? `1 - (${distance})` : `-(${distance})`;
}

/**
 * Vector top-`limit`. Exact: every row scored and ordered by the workbench's order. Approximate: the index
 * returns its top-`limit` by distance (an index scan needs `ORDER BY distance` alone), then those are ordered
 * by score and id.
 */
export function vectorTopSql(schema: string, p: VectorParams, vector: string, limit: string): string {
  const s = checkedSchema(schema);
  const d = distanceSql(p, vector);
  if (p.index === 'exact') return `SELECT id, ${scoreOfDistance(p, d)} AS score FROM ${s}.docs ${ORDER} LIMIT ${limit}`;
  return `SELECT id, score FROM (SELECT id, ${scoreOfDistance(p, d)} AS score FROM ${s}.docs ORDER BY ${d} LIMIT ${limit}) c ${ORDER}`;
}

/** The index DDL of an approximate index, or undefined for exact search. */
export function vectorIndexSql(schema: string, p: VectorParams): string | undefined {
  const ops = `${p.type}_${OPS_SUFFIX[p.distance]}`;
  const s = checkedSchema(schema);
  if (p.index === 'hnsw') return `CREATE INDEX docs_emb ON ${s}.docs USING hnsw (emb ${ops}) WITH (m = ${p.m}, ef_construction = ${p.efConstruction})`;
  if (p.index === 'ivfflat') return `CREATE INDEX docs_emb ON ${s}.docs USING ivfflat (emb ${ops}) WITH (lists = ${p.lists})`;
  return undefined;
}

/** The query-time settings of a search (the top-level params of the same names). */
export interface QuerySettings {
  readonly efSearch?: number | undefined;
  readonly probes?: number | undefined;
  readonly iterativeScan?: 'off' | 'strict_order' | 'relaxed_order' | undefined;
}

/**
 * The query-time settings given, as `SET LOCAL` statements for `index` (`any`: a query-mode arm's own index,
 * unknown here, so both index kinds' settings). They last until the transaction ends, so they hold behind a
 * transaction-pooling PgBouncer, where a plain SET would leak into another client's session. A setting not
 * given is not sent: a server older than pgvector 0.8 rejects iterative_scan.
 */
export function settingsSql(index: 'exact' | 'hnsw' | 'ivfflat' | 'any', s: QuerySettings): string[] {
  if (index === 'exact') return [];
  const hnsw = index === 'hnsw' || index === 'any';
  const ivf = index === 'ivfflat' || index === 'any';
  const out: string[] = [];
  if (hnsw && s.efSearch !== undefined) out.push(`SET LOCAL hnsw.ef_search = ${s.efSearch}`);
  if (ivf && s.probes !== undefined) out.push(`SET LOCAL ivfflat.probes = ${s.probes}`);
  if (hnsw && s.iterativeScan !== undefined) out.push(`SET LOCAL hnsw.iterative_scan = ${s.iterativeScan}`);
  if (ivf && s.iterativeScan !== undefined && s.iterativeScan !== 'strict_order') out.push(`SET LOCAL ivfflat.iterative_scan = ${s.iterativeScan}`);
  return out;
}

/** A float8 literal that reads back as the same double (String(x) round-trips in JavaScript and in PostgreSQL). */
function float8(x: number): string {
  return `${String(x)}::float8`;
}

/**
 * One list's contribution w·φ(score) as the workbench's kernel (harness/fusion/accumulate.ts) computes it, over
 * window aggregates of the list: lo and den per normalization, and its flat value when den is 0 (min-max 1,
 * z-score 0, dbsf 0.5, or fewer than two entries for dbsf). Aggregates in PostgreSQL sum in their own order and
 * stddev_* use the Youngs-Cramer update, so z-score and dbsf differ from the kernel's in the last bits.
 */
function ccTerm(h: ListFusion, w: number): { cols: string; gain: (t: string) => string } {
  if (h.normalization === 'min-max') return { cols: 'min(score) OVER () AS lo, max(score) OVER () - min(score) OVER () AS den', gain: (t) => gainOf(t, w, 1) };
  if (h.normalization === 'z-score') return { cols: 'avg(score) OVER () AS lo, coalesce(stddev_pop(score) OVER (), 0) AS den', gain: (t) => gainOf(t, w, 0) };
  const sd = 'coalesce(stddev_samp(score) OVER (), 0)';
  return {
    cols: `avg(score) OVER () - 3 * ${sd} AS lo, (avg(score) OVER () + 3 * ${sd}) - (avg(score) OVER () - 3 * ${sd}) AS den, count(*) OVER () AS n`,
    gain: (t) => `CASE WHEN ${t}.n < 2 THEN ${float8(w * 0.5)} ELSE ${gainOf(t, w, 0.5)} END`,
  };
}

function gainOf(t: string, w: number, flat: number): string {
  return `CASE WHEN ${t}.den = 0 THEN ${float8(w * flat)} ELSE ${float8(w)} * ((${t}.score - ${t}.lo) / ${t}.den) END`;
}

/** How two lists are fused, as `hybrid` params say it: the method, rrfK and (cc) the normalization. */
export type ListFusion = Pick<HybridParams, 'method' | 'rrfK' | 'normalization'>;

/** One list of a fused statement: its CTE's name, its weight, and its SELECT of `(id, score)`, top `$2`. */
interface FusedList {
  readonly name: string;
  readonly weight: number;
  readonly sql: string;
}

/**
 * Two lists fused in one statement as the workbench's `fuse` fuses the same two runs, top `topK` (a bind).
 * - rrf: each list ranked 1.. in the workbench's order, COALESCE(w / (k + r), 0) summed in float8: the
 *   workbench accumulates 0 + w/(k + r) in the same order, so scores are bit-equal.
 * - cc: each list's w·φ(score) (see ccTerm), summed, divided by the weight sum; a list that lacks the
 *   document adds 0 (the absent policy `zero`). Weights are positive (params.ts): both lists are read.
 */
function fusedSql(lists: readonly [FusedList, FusedList], h: ListFusion, topK: string): string {
  const k = float8(h.rrfK);
  const ranked = (sql: string) => `SELECT id, row_number() OVER (${ORDER}) AS r FROM (${sql}) x`;
  const cc = h.method === 'cc' ? ccTerm : undefined;
  const ctes = lists.map((l) => `${l.name} AS (${cc ? `SELECT id, score, ${cc(h, l.weight).cols} FROM (${l.sql}) x` : ranked(l.sql)})`);
  const terms = lists.map((l) => `COALESCE(${cc ? cc(h, l.weight).gain(l.name) : `${float8(l.weight)} / (${k} + ${l.name}.r)`}, 0)`);
  const sum = terms.join(' + ');
  const weightSum = lists.reduce((a, l) => a + l.weight, 0);
  return [
    `WITH ${ctes.join(',\n')}`,
    `SELECT id, ${cc ? `(${sum}) / ${float8(weightSum)}` : sum} AS score`,
    `FROM ${lists[0].name} FULL OUTER JOIN ${lists[1].name} USING (id) ${ORDER} LIMIT ${topK}`,
  ].join('\n');
}

/**
 * The hybrid: the full-text and vector top-`$2` lists (CTEs `f` and `v`) fused in one statement (fusedSql).
 * Bind parameters: `$1` query text, `$2` depth, `$3` query vector, `$4` topK.
 */
export function hybridSql(schema: string, fts: FtsParams, vec: VectorParams, h: HybridParams): string {
  return fusedSql(
    [
      { name: 'f', weight: h.weights.fts, sql: ftsTopSql(schema, fts, '$1', '$2') },
      { name: 'v', weight: h.weights.vector, sql: vectorTopSql(schema, vec, '$3', '$2') },
    ],
    h,
    '$4',
  );
}

/** One full-text ranking of a pair: its params, the tsvector column it reads, its weight. */
export interface FtsList {
  readonly fts: FtsParams;
  readonly column: 'tsv' | 'tsv2';
  readonly weight: number;
}

/**
 * Two full-text rankings of one table (CTEs `f1` and `f2`, each over its own tsvector column) fused in one
 * statement (fusedSql). Bind parameters: `$1` query text, `$2` depth, `$3` topK.
 */
export function ftsPairSql(schema: string, lists: readonly [FtsList, FtsList], h: ListFusion): string {
  const list = (l: FtsList, name: string): FusedList => ({ name, weight: l.weight, sql: ftsTopSql(schema, l.fts, '$1', '$2', l.column) });
  return fusedSql([list(lists[0], 'f1'), list(lists[1], 'f2')], h, '$3');
}

/** pgvector's text form of a vector: `[x,y,...]`; a float32 printed as JavaScript prints it reads back the same. */
export function vectorText(v: Float32Array, from = 0, dims = v.length): string {
  let out = '[';
  for (let j = 0; j < dims; j++) out += (j === 0 ? '' : ',') + String(v[from + j]);
  return `${out}]`;
}
