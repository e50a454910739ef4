/**
 * Dense benchmark, in one run:
 * - embedding throughput, passages/s at batch 32, of `onnx-embed` on the GloVe folder (real transformers.js +
 *   onnxruntime-node; built by scripts/build-glove-model.ts if missing) and of `use-lite` (TF.js wasm), on the
 *   bundled example's passages (short memories, ~20 words), no cache;
 * - exact top-100 by cosine over 100,000 x 1024-d random unit vectors (one 400 MB Float32Array), one query at
 *   a time, beside a plain sequential sum over the same Float32Array: the memory-bandwidth floor of reading
 *   the matrix once. Prints p50 of each and the ratio. Goal (ADR 0017): a query within 2x of the floor.
 *
 * Sizes can be cut for a quick look with `HARNESS_BENCH_DENSE_ROWS` (default 100000).
 *
 * Run: `npm run bench -- dense` or, after `npm run build`, `node dist/bench/dense.js`.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { onnxEmbedArm, loadOnnxEmbedder } from '../arms/dense/onnx.js';
import { loadUseLite, useLiteArm } from '../arms/dense/use-lite.js';
import type { Embedder } from '../arms/dense/embedder.js';
import { exactTopK, normalizeRows } from '../arms/dense/exact.js';
import { loadEvalSet } from '../evalset/load.js';
import { stderrLogger } from '../harness/log.js';
import { projectRoot } from '../harness/util/project.js';
import { createRng } from '../harness/stats/rng.js';
import { buildGloveModel, defaultGloveDir } from '../arms/dense/glove-model.js';

const BATCH = 32;
const DIMS = 1024;
const TOP_K = 100;
const QUERIES = 15;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Passages/s of `e` over `texts`, in batches of 32, after one untimed warm-up batch. */
async function throughput(e: Embedder, texts: readonly string[]): Promise<number> {
  await e.embed(texts.slice(0, BATCH), 'document');
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += BATCH) await e.embed(texts.slice(i, i + BATCH), 'document');
  return texts.length / ((performance.now() - t0) / 1000);
}

/**
 * Σ m[i] over the whole array with four accumulators, as {@link exactTopK}'s dot product reads it: the cost of
 * streaming the matrix through the core once, which no exact search can beat.
 */
function sequentialSum(m: Float32Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (let i = 0; i < m.length; i += 4) {
    s0 += m[i] as number;
    s1 += m[i + 1] as number;
    s2 += m[i + 2] as number;
    s3 += m[i + 3] as number;
  }
  return s0 + s1 + s2 + s3;
}

export async function main(): Promise<void> {
  const log = stderrLogger({ quiet: true });
  const es = await loadEvalSet({ format: 'memory', path: join(projectRoot(), 'evalset/examples/alex-memory') }, log);
  const passages = es.documents.map((d) => d.text);
  const words = passages.reduce((n, t) => n + t.split(/\s+/).length, 0) / passages.length;
  process.stdout.write(`embedding throughput, batch ${BATCH}, example passages (mean ${words.toFixed(1)} words):\n`);

  const glove = defaultGloveDir();
  await buildGloveModel(glove, { log: (m) => process.stderr.write(`${m}\n`) });
  const onnx = await loadOnnxEmbedder(onnxEmbedArm.params.parse({ model: glove, pooling: 'mean', queryPrefix: '', batchSize: BATCH }), {
    modelDir: join(glove, '..'),
    env: { HF_HUB_OFFLINE: '1' },
    log,
  });
  const onnxRate = await throughput(onnx, passages.slice(0, 320));
  await onnx.close?.();
  process.stdout.write(`  onnx-embed (GloVe 100d)   ${onnxRate.toFixed(0).padStart(6)} passages/s  (${320} passages)\n`);
  try {
    const use = await loadUseLite(useLiteArm.params.parse({ batchSize: BATCH }));
    const useRate = await throughput(use, passages.slice(0, 96));
    process.stdout.write(`  use-lite (USE lite 512d)  ${useRate.toFixed(1).padStart(6)} passages/s  (${96} passages)\n`);
  } catch (err) {
    process.stdout.write(`  use-lite: not measured (${(err as Error).message})\n`);
  }

  const rows = Number(process.env.HARNESS_BENCH_DENSE_ROWS ?? 100_000);
  const rng = createRng(17);
  const m = new Float32Array(rows * DIMS);
  for (let i = 0; i < m.length; i++) m[i] = rng.nextFloat() * 2 - 1;
  normalizeRows(m, DIMS);
  const qs = normalizeRows(
    Float32Array.from({ length: QUERIES * DIMS }, () => rng.nextFloat() * 2 - 1),
    DIMS,
  );
  const sumMs: number[] = [];
  const queryMs: number[] = [];
  let sink = 0;
  for (let q = 0; q < QUERIES; q++) {
    let t0 = performance.now();
    sink += sequentialSum(m);
    sumMs.push(performance.now() - t0);
    t0 = performance.now();
    const [top] = exactTopK(m, qs.subarray(q * DIMS, (q + 1) * DIMS), DIMS, TOP_K);
    queryMs.push(performance.now() - t0);
    sink += top?.scores[0] ?? 0;
  }
  const floor = median(sumMs);
  const query = median(queryMs);
  const gb = (m.byteLength / 1e9).toFixed(2);
  process.stdout.write(
    `exact top-${TOP_K} over ${rows.toLocaleString('en-US')} x ${DIMS}-d unit vectors (${gb} GB), ${QUERIES} queries, p50:\n` +
      `  sequential sum (floor)  ${floor.toFixed(1).padStart(8)} ms  (${(m.byteLength / 1e6 / floor).toFixed(1)} GB/s)\n` +
      `  exact top-${TOP_K}          ${query.toFixed(1).padStart(8)} ms\n` +
      `  ratio query / floor     ${(query / floor).toFixed(2).padStart(8)}x  (goal <= 2x)${Number.isNaN(sink) ? ' ' : ''}\n`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
