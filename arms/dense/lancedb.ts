import { mkdir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, sha256Hex } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';
import type { LancedbParams, VectorIndex } from './vector-index.js';
import { type EmbedderIdentity, identityJson } from './embedder.js';
import type { TopK } from './exact.js';
import type { VectorMatrix } from './store.js';

/** LanceDB's distance for an index kind: `l2` for `hnsw-sq`, whose quantized `dot` is unscaled (see lancedbIndex). */
function distanceOf(p: LancedbParams): 'dot' | 'l2' {
  return p.indexType === 'hnsw-sq' ? 'l2' : 'dot';
}

/**
 * Merges the rows kept out of an `l2` table (zero vectors: cosine 0 with every query) into one answer, best
 * first; ties keep the engine's order, then the lower row.
 */
function withZeroRows(scored: { row: number; score: number }[], zeroRows: number[], topK: number): TopK {
  const merged = zeroRows.length === 0 ? scored : [...scored, ...zeroRows.map((row) => ({ row, score: 0 }))];
  if (merged !== scored) merged.sort((a, b) => b.score - a.score);
  const top = merged.slice(0, topK);
  return { rows: Int32Array.from(top, (r) => r.row), scores: Float64Array.from(top, (r) => r.score) };
}

/** Folders named as Rust's tempfile names them (`.tmpXXXXXX`) in the temp dir. */
async function rustTempFolders(): Promise<Set<string>> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  return new Set(names.filter((n) => /^\.tmp[A-Za-z0-9]{6}$/.test(n)));
}

/**
 * LanceDB 0.31 leaves the shuffle folder of every index build in the temp dir (lance-format/lance#8992). Removes
 * the ones that appeared during our build and hold only Lance's shuffle files, so no other program's is touched.
 */
async function removeShuffleLeftovers(before: Set<string>): Promise<void> {
  for (const name of await rustTempFolders()) {
    if (before.has(name)) continue;
    const dir = join(tmpdir(), name);
    const files = await readdir(dir).catch(() => ['?']);
    if (files.length > 0 && files.every((f) => f.startsWith('shuffle_'))) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An ANN index in embedded LanceDB (`@lancedb/lancedb`), for corpora past what exact search should scan. The
 * table (columns `row`, `vector`) lives in `<workDir>/lancedb`, one table per (embedder, corpus ids, params), replaced
 * on rebuild. Rows are L2-normalised, so LanceDB's `dot` distance (1 - q·d) gives cosine = 1 - distance; the
 * `cosine` distance type is avoided because LanceDB treats zero vectors as invalid under it. `hnsw-sq` is built
 * and queried with `l2` instead (squared distance 2 - 2 q·d on unit rows, so cosine = 1 - distance / 2): LanceDB
 * 0.31's scalar-quantized `dot` distance returns unscaled code products (about -29 on unit vectors), and the
 * HNSW walk over them found 1 % of the exact top 10 on NFCorpus GloVe (docs/adr/0041-engine-fusion-and-ann-recall.md).
 * Zero rows stay out of an `l2` table (their distance, 1, would read as cosine 0.5) and join every answer at 0.
 *
 * Recall is measured by the dense arm on the eval queries as they are searched (arms/dense/ann-recall.ts),
 * not here: document vectors as queries find themselves and overstate it.
 */
export function lancedbIndex(workDir: string, p: LancedbParams, log: Logger, identity: EmbedderIdentity): VectorIndex {
  // biome-ignore lint/suspicious/noExplicitAny: the table type comes from a lazily imported module
  let table: any;
  let dims = 0;
  let zeroRows: number[] = [];
  const metric = distanceOf(p);
  const search = async (queries: Float32Array, topK: number): Promise<TopK[]> => {
    const out: TopK[] = [];
    for (let off = 0; off < queries.length; off += dims) {
      let q = table
        .vectorSearch(queries.subarray(off, off + dims))
        .distanceType(metric)
        .limit(topK)
        .select(['row', '_distance'])
        .nprobes(p.nprobes);
      // LanceDB refuses ef below k.
      if (p.indexType === 'hnsw-sq') q = q.ef(Math.max(p.ef, topK));
      if (p.refineFactor !== undefined) q = q.refineFactor(p.refineFactor);
      const rows = (await q.toArray()) as { row: number; _distance: number }[];
      const scored = rows.map((r) => ({ row: r.row, score: metric === 'l2' ? 1 - r._distance / 2 : 1 - r._distance }));
      out.push(withZeroRows(scored, zeroRows, topK));
    }
    return out;
  };
  return {
    async build(m: VectorMatrix) {
      dims = m.dims;
      const n = m.ids.length;
      const lancedb = await import('@lancedb/lancedb');
      const dir = join(workDir, 'lancedb');
      await mkdir(dir, { recursive: true });
      const db = await lancedb.connect(dir);
      // One table per (model, corpus, params): arms of one kind share the workDir, never a table.
      const name = `t${sha256Hex(canonicalJson({ model: identityJson(identity), ids: m.ids as string[], p: JSON.parse(JSON.stringify(p)) })).slice(0, 24)}`;
      const all = Array.from({ length: n }, (_, i) => ({ row: i, vector: Array.from(m.vectors.subarray(i * dims, (i + 1) * dims)) }));
      zeroRows = metric === 'l2' ? all.filter((r) => r.vector.every((x) => x === 0)).map((r) => r.row) : [];
      const data = zeroRows.length > 0 ? all.filter((r) => !r.vector.every((x) => x === 0)) : all;
      const t0 = performance.now();
      table = await db.createTable(name, data, { mode: 'overwrite' });
      const config =
        p.indexType === 'ivf-pq'
          ? lancedb.Index.ivfPq({ distanceType: 'dot', numPartitions: p.numPartitions, numSubVectors: p.numSubVectors })
          : p.indexType === 'ivf-flat'
            ? lancedb.Index.ivfFlat({ distanceType: 'dot', numPartitions: p.numPartitions })
            : lancedb.Index.hnswSq({ distanceType: metric, numPartitions: p.numPartitions, m: p.m, efConstruction: p.efConstruction });
      const tempBefore = await rustTempFolders();
      try {
        await table.createIndex('vector', { config, replace: true });
      } catch (err) {
        throw new HarnessError(`LanceDB could not build a ${p.indexType} index over ${n} vectors: ${(err as Error).message}`, {
          exitCode: 2,
          hint: 'small corpora need fewer partitions (lancedb.numPartitions) or index: exact',
          cause: err,
        });
      } finally {
        await removeShuffleLeftovers(tempBefore);
      }
      const buildMs = performance.now() - t0;
      log.info(`lancedb ${p.indexType} over ${n} vectors built in ${Math.round(buildMs)} ms`);
      return { annBuildMs: Math.round(buildMs) };
    },
    search,
  };
}
