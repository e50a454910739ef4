/**
 * Lexical-arm benchmark: the in-process `bm25` arm against `sqlite-fts5`, both in this run, on
 * - BEIR NFCorpus (3,633 documents, 323 test queries) when ../shared is present, and
 * - a seeded synthetic corpus of 100,000 documents (100-200 words each, Zipfian (s = 1) vocabulary of 50,000
 *   words whose 33 most frequent are Lucene's English stop words), with 500 queries of 2-5 content words
 *   (log-uniform over frequency ranks 50..20,000) and the same queries with one common stop word added.
 * Prints indexing docs/s and query latency p50/p95 for top-100, and the ratios bm25 / FTS5.
 * Goal (issue 3): bm25 queries at least 10x faster than FTS5 at 100k documents, indexing at least as fast.
 *
 * Run: `npm run bench` or, after `npm run build`, `node dist/bench/lexical.js`.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bm25Arm } from '../arms/bm25/index.js';
import { sqliteFts5Arm } from '../arms/sqlite-fts5/index.js';
import type { Arm, ArmContext, ArmFactory } from '../arms/types.js';
import type { Document, Query } from '../evalset/types.js';
import { loadBeir } from '../evalset/beir.js';
import { ContentStore } from '../harness/cache/index.js';
import { stderrLogger } from '../harness/log.js';
import { createRng } from '../harness/stats/rng.js';

const SEED = 20_260_422;
const DOCS = 100_000;
const VOCAB = 50_000;
const QUERIES = 500;
const TOP_K = 100;

/** Frequency ranks 0..32 are Lucene's stop words in rough English order, then invented words. */
const STOP_FIRST = ['the', 'of', 'and', 'to', 'a', 'in', 'is', 'that', 'for', 'it', 'as', 'was', 'with', 'be', 'by', 'on', 'not', 'this', 'are', 'at', 'or', 'an', 'but', 'they', 'there', 'their', 'no', 'if', 'into', 'such', 'then', 'these', 'will'];

function syntheticCorpus(): { docs: Document[]; queries: Query[]; stopQueries: Query[] } {
  const rng = createRng(SEED);
  const rand = () => rng.nextFloat();
  const syllables = ['ka', 'lo', 'mi', 'ten', 'ra', 'so', 'vel', 'dor', 'an', 'ex', 'ul', 'pri', 'ston', 'ge', 'bar', 'ni', 'que', 'tor', 'hal', 'ment'];
  const words: string[] = [...STOP_FIRST];
  const seen = new Set(words);
  while (words.length < VOCAB) {
    let w = '';
    const n = 2 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) w += syllables[Math.floor(rand() * syllables.length)]!;
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  const cdf = new Float64Array(VOCAB);
  let total = 0;
  for (let r = 0; r < VOCAB; r++) cdf[r] = total += 1 / (r + 1);
  const draw = (): number => {
    const u = rand() * total;
    let lo = 0;
    let hi = VOCAB - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const docs: Document[] = [];
  for (let d = 0; d < DOCS; d++) {
    const len = 100 + Math.floor(rand() * 101);
    const parts: string[] = [];
    for (let i = 0; i < len; i++) parts.push(words[draw()]!);
    docs.push({ id: `syn-${d}`, text: `${parts.join(' ')}.` });
  }
  const queries: Query[] = [];
  const stopQueries: Query[] = [];
  for (let q = 0; q < QUERIES; q++) {
    const n = 2 + Math.floor(rand() * 4);
    const terms: string[] = [];
    // Content words log-uniform over frequency ranks 50..20,000: queries name topical words, rarely the most
    // common ones.
    while (terms.length < n) terms.push(words[Math.floor(50 * 400 ** rand())]!);
    queries.push({ id: `q${q}`, text: terms.join(' '), stratum: 'content' });
    const stop = STOP_FIRST[Math.floor(rand() * 8)]!;
    stopQueries.push({ id: `s${q}`, text: [stop, ...terms].join(' '), stratum: 'stop' });
  }
  return { docs, queries, stopQueries };
}

interface Timing {
  docsPerSecond: number;
  p50: number;
  p95: number;
  stopP50?: number;
  stopP95?: number;
}

function quantile(sorted: readonly number[], q: number): number {
  // Nearest rank: the smallest value with at least q of the sample at or below it.
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

async function latencies(arm: Arm, queries: readonly Query[]): Promise<{ p50: number; p95: number }> {
  for (const q of queries.slice(0, 20)) await arm.search(q, TOP_K);
  const ms: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await arm.search(q, TOP_K);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p95: quantile(ms, 0.95) };
}

async function measure(
  factory: ArmFactory<any>,
  params: unknown,
  docs: readonly Document[],
  queries: readonly Query[],
  stopQueries?: readonly Query[],
): Promise<Timing> {
  const ctx: ArmContext = { cache: new ContentStore(tmpdir()), log: stderrLogger({ quiet: true }), workDir: tmpdir(), env: process.env };
  const arm = factory.create('bench', factory.params.parse(params), ctx);
  const t0 = performance.now();
  await arm.index(docs);
  const seconds = (performance.now() - t0) / 1000;
  const main = await latencies(arm, queries);
  const stop = stopQueries === undefined ? undefined : await latencies(arm, stopQueries);
  await arm.close?.();
  return { docsPerSecond: docs.length / seconds, ...main, ...(stop && { stopP50: stop.p50, stopP95: stop.p95 }) };
}

const fmtMs = (x: number | undefined) => (x === undefined ? '-' : `${x.toFixed(3)} ms`);
const fmtRate = (x: number) => `${Math.round(x).toLocaleString('en-US')} docs/s`;

function table(title: string, rows: readonly [string, Timing][]): void {
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(`${'arm'.padEnd(28)}${'index'.padStart(18)}${'p50'.padStart(12)}${'p95'.padStart(12)}${'stop p50'.padStart(12)}${'stop p95'.padStart(12)}\n`);
  for (const [name, t] of rows) {
    process.stdout.write(
      `${name.padEnd(28)}${fmtRate(t.docsPerSecond).padStart(18)}${fmtMs(t.p50).padStart(12)}${fmtMs(t.p95).padStart(12)}${fmtMs(t.stopP50).padStart(12)}${fmtMs(t.stopP95).padStart(12)}\n`,
    );
  }
}

function ratios(bm25: Timing, fts: Timing, label: string): void {
  const speed = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '-' : `${(b / a).toFixed(1)}x`);
  process.stdout.write(
    `ratio bm25 / ${label}: indexing ${(bm25.docsPerSecond / fts.docsPerSecond).toFixed(2)}x as fast; ` +
      `queries ${speed(bm25.p50, fts.p50)} faster at p50, ${speed(bm25.p95, fts.p95)} at p95` +
      (bm25.stopP50 === undefined ? '' : `; with a stop word ${speed(bm25.stopP50, fts.stopP50)} at p50, ${speed(bm25.stopP95, fts.stopP95)} at p95`) +
      '\n',
  );
}

/**
 * `../shared/data/nfcorpus` beside the project root (the folder with package.json above this file, which is
 * `bench/` from source and `dist/bench/` when built), or under $HARNESS_SHARED_DIR.
 */
function nfcorpusDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(process.env['HARNESS_SHARED_DIR'] ?? resolve(dir, '..', 'shared'), 'data', 'nfcorpus');
}

export async function main(): Promise<void> {
  const nfcorpus = nfcorpusDir();
  if (existsSync(nfcorpus)) {
    const set = await loadBeir(nfcorpus, { split: 'test' });
    const bm25 = await measure(bm25Arm, {}, set.documents, set.queries);
    const fts = await measure(sqliteFts5Arm, { tokenizer: 'porter' }, set.documents, set.queries);
    table(`NFCorpus (${set.documents.length} documents, ${set.queries.length} test queries, top-${TOP_K})`, [
      ['bm25 (lucene preset)', bm25],
      ['sqlite-fts5 (porter)', fts],
    ]);
    ratios(bm25, fts, 'sqlite-fts5 porter');
  } else {
    process.stdout.write(`NFCorpus: skipped (${nfcorpus} not present)\n`);
  }

  const t0 = performance.now();
  const { docs, queries, stopQueries } = syntheticCorpus();
  process.stdout.write(`\nsynthetic corpus generated in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  const bm25 = await measure(bm25Arm, {}, docs, queries, stopQueries);
  const ftsPorter = await measure(sqliteFts5Arm, { tokenizer: 'porter' }, docs, queries, stopQueries);
  const ftsPlain = await measure(sqliteFts5Arm, { tokenizer: 'unicode61' }, docs, queries, stopQueries);
  table(`synthetic (${DOCS.toLocaleString('en-US')} documents, ${QUERIES} queries of 2-5 words, top-${TOP_K}; stop = same queries plus one stop word)`, [
    ['bm25 (lucene preset)', bm25],
    ['sqlite-fts5 (porter)', ftsPorter],
    ['sqlite-fts5 (unicode61)', ftsPlain],
  ]);
  ratios(bm25, ftsPorter, 'sqlite-fts5 porter');
  ratios(bm25, ftsPlain, 'sqlite-fts5 unicode61');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
