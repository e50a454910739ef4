import type { FtsParams, VectorParams } from './params.js';

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

/** Full-text top-`limit`: `(id, score)` by ts_rank / ts_rank_cd with the weights and normalisation bitmask. */
export function ftsTopSql(schema: string, p: FtsParams, text: string, limit: string): string {
  const weights = `'{${p.weights.join(',')}}'::float4[]`;
  const score = `${p.rank}(${weights}, tsv, q, ${p.normalization})::float8`;
  return `SELECT id, ${score} AS score FROM ${checkedSchema(schema)}.docs, (SELECT ${tsquerySql(p, text)} AS q) t WHERE tsv @@ q ${ORDER} LIMIT ${limit}`;
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

/**
 * The hybrid: the full-text and vector top-`$2` lists, ranked 1.. in the workbench's order, fused by
 * reciprocal rank in one statement. Bind parameters: `$1` query text, `$2` depth, `$3` query vector, `$4` topK.
 * The sum is float8 and adds 0 for a list that lacks the document, exactly as the workbench's RRF accumulates
 * `0 + 1/(k + r)`, so both give bit-equal scores and, with the same tie order, the same ranking.
 */
export function hybridSql(schema: string, fts: FtsParams, vec: VectorParams, rrfK: number): string {
  const k = `${rrfK}::float8`;
  const rank = (sql: string) => `SELECT id, row_number() OVER (${ORDER}) AS r FROM (${sql}) x`;
  return [
    `WITH f AS (${rank(ftsTopSql(schema, fts, '$1', '$2'))}),`,
    `v AS (${rank(vectorTopSql(schema, vec, '$3', '$2'))})`,
    `SELECT id, COALESCE(1::float8 / (${k} + f.r), 0) + COALESCE(1::float8 / (${k} + v.r), 0) AS score`,
    `FROM f FULL OUTER JOIN v USING (id) ${ORDER} LIMIT $4`,
  ].join('\n');
}

/** pgvector's text form of a vector: `[x,y,...]`; a float32 printed as JavaScript prints it reads back the same. */
export function vectorText(v: Float32Array, from = 0, dims = v.length): string {
  let out = '[';
  for (let j = 0; j < dims; j++) out += (j === 0 ? '' : ',') + String(v[from + j]);
  return `${out}]`;
}
