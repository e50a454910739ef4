/**
 * Lexical-arm benchmark: the in-process `bm25` arm (lucene preset, default pruning) against `sqlite-fts5`
 * (porter), on
 * - BEIR NFCorpus (3,633 documents, 323 test queries) when ../shared is present, and
 * - seeded synthetic corpora (arms/bm25/synthetic-corpus.ts: 100-200 words per document from a Zipf (s = 1)
 *   vocabulary of 50,000 words whose 33 commonest are Lucene's stop words) at each size of
 *   `HARNESS_BENCH_LEXICAL_SIZES` (comma-separated document counts, default 10000,100000,1000000), all searched with
 *   the same 500 queries of 2-5 content words. Corpora are generated in memory, never written to disk.
 *
 * Same work on both sides: each engine runs in a fresh process (so peak memory is its own) that generates the
 * corpus, warms up on a separate 20,000-document corpus with 100 queries (written like real text, see
 * {@link warmupCorpus}), then indexes (timed) and answers
 * every query at top-100 (timed, after 20 untimed queries). FTS5 has no stop words, so its queries are given
 * with Lucene's stop words removed, as the bm25 analyzer removes them. Output is checked equal where the two
 * engines are comparable: on synthetic corpora (whose invented words both Porter stemmers treat alike), the
 * set of documents matching each of the first 10 queries must be the same; the scores differ by design (FTS5
 * fixes k1 = 1.2, b = 0.75 and its own idf).
 * Prints indexing docs/s, query latency p50/p95, peak RSS, the ratios bm25 / FTS5 at each size, and how
 * query and index cost grow from the smallest size to the largest, next to the growth of the postings read.
 * On NFCorpus each engine also indexes the corpus a second time in the same process, timed apart: the first
 * index pays for compiling the code paths that real text takes and the synthetic warm-up does not.
 * Goals (issues 16 and 17, ADR 0012), printed MET or MISSED at the end: indexing at least as fast as FTS5 at
 * every corpus, and at the largest size bm25 query p50 at least 50x faster than FTS5 and peak RSS no worse.
 * The indexing goal is printed again as issue 30's goal 6, one `goal 30.6 (...)` line per corpus (NFCorpus's
 * first index and its second, and each synthetic size).
 *
 * Run: `npm run bench -- lexical` or, after `npm run build`, `node dist/bench/lexical.js`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bm25Arm, createBm25, type Bm25Arm } from '../arms/bm25/index.js';
import type { Pruning } from '../arms/bm25/inverted-index.js';
import { LUCENE_ENGLISH_STOP_WORDS } from '../arms/bm25/analyzer.js';
import { syntheticCorpus } from '../arms/bm25/synthetic-corpus.js';
import { sqliteFts5Arm } from '../arms/sqlite-fts5/index.js';
import type { Arm, ArmContext } from '../arms/types.js';
import type { Document, Query } from '../evalset/types.js';
import { loadBeir } from '../evalset/beir.js';
import { ContentStore } from '../harness/cache/index.js';
import { UsageError, HarnessError } from '../harness/errors.js';
import { createRng } from '../harness/stats/rng.js';
import { stderrLogger } from '../harness/log.js';

const QUERIES = 500;
const TOP_K = 100;
const WARMUP_DOCS = 20_000;
const WARMUP_QUERIES = 100;
const CHECK_QUERIES = 10;
const SIZES_ENV = 'HARNESS_BENCH_LEXICAL_SIZES';
const DEFAULT_SIZES = [10_000, 100_000, 1_000_000];

type Engine = 'bm25' | 'fts5';
type CorpusName = 'nfcorpus' | 'synthetic';

/** What one engine measured in its own process. */
interface Measurement {
  readonly engine: Engine;
  readonly documents: number;
  readonly queries: number;
  /** Indexing, CPU seconds of the process (every thread), then wall-clock seconds. */
  readonly indexSeconds: number;
  readonly indexWallSeconds: number;
  /**
   * NFCorpus only: CPU seconds of indexing the same corpus again into a fresh arm of the same process, once the
   * first index has compiled every code path real text takes (the synthetic warm-up covers only some).
   */
  readonly reindexSeconds?: number;
  /** Query latency quantiles, CPU ms, then wall-clock ms. */
  readonly p50: number;
  readonly p95: number;
  readonly wallP50: number;
  readonly wallP95: number;
  /** Peak resident set of the whole process (corpus included), MB. */
  readonly peakMb: number;
  /** Resident set once the corpus was generated or loaded, before any engine ran, MB. */
  readonly corpusMb: number;
  /** bm25 only: CPU-time query latency with each pruning setting, over the same index. */
  readonly pruning?: Readonly<Record<Pruning, { readonly p50: number; readonly p95: number }>>;
  /** bm25 only: mean postings of a query's terms, the work of exhaustive scoring. */
  readonly postingsPerQuery?: number;
  /** Per check query: how many documents match any term, and a digest of their sorted ids. */
  readonly checks: readonly { readonly matched: number; readonly digest: string }[];
}

function quantile(sorted: readonly number[], q: number): number {
  // Nearest rank: the smallest value with at least q of the sample at or below it.
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** CPU time of this process (user + system, all threads) in ms, at microsecond resolution. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const ctx = (): ArmContext => ({ cache: new ContentStore(tmpdir()), log: stderrLogger({ quiet: true }), workDir: tmpdir(), env: process.env });

function createArm(engine: Engine): Arm | Bm25Arm {
  return engine === 'bm25'
    ? createBm25('bench', bm25Arm.params.parse({}))
    : sqliteFts5Arm.create('bench', sqliteFts5Arm.params.parse({ tokenizer: 'porter' }), ctx());
}

/** The query as the engine is given it: FTS5 has no stop-word filter, so Lucene's are removed up front. */
function queryFor(engine: Engine, q: Query): Query {
  if (engine === 'bm25') return q;
  const words = q.text.split(/\s+/).filter((w) => w !== '' && !LUCENE_ENGLISH_STOP_WORDS.has(w.toLowerCase()));
  return { ...q, text: words.join(' ') };
}

async function loadCorpus(name: CorpusName, size: number): Promise<{ docs: readonly Document[]; queries: readonly Query[] }> {
  if (name === 'nfcorpus') {
    const set = await loadBeir(nfcorpusDir(), { split: 'test' });
    return { docs: set.documents, queries: set.queries };
  }
  return syntheticCorpus({ documents: size, queries: QUERIES });
}

/** English suffixes, one or more for each rule of Porter's steps 1-5. */
const SUFFIXES = [
  's',
  'es',
  'ies',
  'ss',
  'ed',
  'ing',
  'eed',
  'y',
  'ational',
  'tional',
  'enci',
  'anci',
  'izer',
  'abli',
  'alli',
  'entli',
  'eli',
  'ousli',
  'ization',
  'ation',
  'ator',
  'alism',
  'iveness',
  'fulness',
  'ousness',
  'aliti',
  'iviti',
  'biliti',
  'icate',
  'ative',
  'alize',
  'iciti',
  'ical',
  'ful',
  'ness',
  'al',
  'ance',
  'ence',
  'er',
  'ic',
  'able',
  'ible',
  'ant',
  'ement',
  'ment',
  'ent',
  'ion',
  'sion',
  'tion',
  'ou',
  'ism',
  'ate',
  'iti',
  'ous',
  'ive',
  'ize',
  'e',
  'ly',
  'll',
  'ated',
  'ating',
  'izing',
  'ities',
  'ations',
  'ically',
  'ness',
  'lessly',
];

/**
 * What both engines index before the timed run, the same documents for each: a synthetic corpus (seed 1, apart
 * from every timed corpus) with a title per document and its words dressed as abstracts are written, so that
 * the code paths real text takes are compiled before the clock starts, in either engine (FTS5's are compiled C,
 * and its tokenizer meets the same characters). Sentences start with a capital; numbers with a decimal point
 * or thousands comma, possessives, abbreviations, hyphens, parentheses, Greek letters, accents, `±` and `©`
 * appear at NFCorpus-like rates. Lower-case words alone left most of the ~0.2 s between a first and a second
 * NFCorpus index in the same process to the first (ADR 0012, 2026-11-23 evening).
 */
function warmupCorpus(): { docs: Document[]; queries: Query[] } {
  const base = syntheticCorpus({ documents: WARMUP_DOCS, queries: WARMUP_QUERIES, seed: 1 });
  const rng = createRng(1, 3);
  const pick = <T>(xs: readonly T[]): T => xs[rng.nextInt(xs.length)]!;
  const number = (): string =>
    pick([
      () => `0.${rng.nextInt(100).toString().padStart(2, '0')}`,
      () => `${rng.nextInt(10)}.${rng.nextInt(10)}`,
      () => `${1 + rng.nextInt(99)},${rng.nextInt(1000).toString().padStart(3, '0')}`,
      () => `${rng.nextInt(1000)}`,
      () => `${rng.nextInt(100)}%`,
    ])();
  const dress = (w: string): string => {
    // The invented words end in syllables no stemmer rule touches; real words end in the suffixes of every
    // step of Porter's algorithm.
    if (rng.nextFloat() < 0.3) w += pick(SUFFIXES);
    const u = rng.nextFloat();
    if (u < 0.05) return number();
    if (u < 0.06) return `(${w}`;
    if (u < 0.07) return `${w})`;
    if (u < 0.08) return `${w},`;
    if (u < 0.085) return `${w}${pick(["'s", '’s', "s'", "'t"])}`;
    if (u < 0.09) return `${w}-${pick(['related', 'based', 'induced', 'β', '3'])}`;
    if (u < 0.1) return pick(['U.S.', 'e.g.', 'i.e.,', 'vs.', 'CO2', 'IL-6', 'mg/kg', 'p < 0.05', 'n = 12', '4,5-', 'a:b', 'x_y']);
    if (u < 0.11) return `${pick(['', 'β', 'α', 'μ', '±', '≥', '©', '–', '“', '‘'])}${w}${pick(['', 'é', 'ï', 'ö', 'ü', '\u0301', '’', '”', '·1', '−2'])}`;
    if (u < 0.12) return w.toUpperCase();
    return w;
  };
  const docs = base.docs.map((d): Document => {
    const words = d.text.split(' ');
    for (let i = 0; i < words.length; i++) {
      words[i] = dress(words[i]!);
      if (i === 0 || words[i - 1]!.endsWith('.')) words[i] = words[i]!.charAt(0).toUpperCase() + words[i]!.slice(1);
      else if (rng.nextFloat() < 0.07) words[i] += '.';
    }
    const title = words.slice(0, 3 + rng.nextInt(8)).join(' ');
    return { id: d.id, title, text: words.join(' ') };
  });
  return { docs, queries: base.queries };
}

/** Runs in the child process: one engine, one corpus. */
async function measureOne(engine: Engine, name: CorpusName, size: number): Promise<Measurement> {
  const { docs, queries } = await loadCorpus(name, size);
  const corpusMb = process.memoryUsage().rss / 2 ** 20;
  const engineQueries = queries.map((q) => queryFor(engine, q));

  const warm = warmupCorpus();
  const warmArm = createArm(engine);
  await warmArm.index(warm.docs);
  for (const q of warm.queries) await warmArm.search(queryFor(engine, q), TOP_K);
  await warmArm.close?.();

  const arm = createArm(engine);
  const t0 = performance.now();
  const c0 = cpuMs();
  await arm.index(docs);
  const indexSeconds = (cpuMs() - c0) / 1000;
  const indexWallSeconds = (performance.now() - t0) / 1000;
  for (const q of engineQueries.slice(0, 20)) await arm.search(q, TOP_K);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (const q of engineQueries) {
    const t = performance.now();
    const c = cpuMs();
    await arm.search(q, TOP_K);
    cpu.push(cpuMs() - c);
    wall.push(performance.now() - t);
  }
  cpu.sort((a, b) => a - b);
  wall.sort((a, b) => a - b);
  const checks: { matched: number; digest: string }[] = [];
  if (name === 'synthetic') {
    for (const q of engineQueries.slice(0, CHECK_QUERIES)) {
      const ids = (await arm.search(q, docs.length)).map((h) => h.docId).sort();
      checks.push({ matched: ids.length, digest: createHash('sha256').update(ids.join('\n')).digest('hex') });
    }
  }
  let reindexSeconds: number | undefined;
  if (name === 'nfcorpus') {
    const again = createArm(engine);
    const c = cpuMs();
    await again.index(docs);
    reindexSeconds = (cpuMs() - c) / 1000;
    await again.close?.();
  }
  let postingsPerQuery: number | undefined;
  let pruning: Record<Pruning, { p50: number; p95: number }> | undefined;
  if ('postingsRead' in arm) {
    postingsPerQuery = queries.reduce((s, q) => s + arm.postingsRead(q), 0) / queries.length;
    pruning = { none: { p50: 0, p95: 0 }, wand: { p50: 0, p95: 0 }, 'block-max-wand': { p50: 0, p95: 0 } };
    for (const mode of Object.keys(pruning) as Pruning[]) {
      for (const q of queries.slice(0, 20)) await arm.search(q, TOP_K, mode);
      const t: number[] = [];
      for (const q of queries) {
        const c = cpuMs();
        await arm.search(q, TOP_K, mode);
        t.push(cpuMs() - c);
      }
      t.sort((a, b) => a - b);
      pruning[mode] = { p50: quantile(t, 0.5), p95: quantile(t, 0.95) };
    }
  }
  await arm.close?.();
  return {
    engine,
    documents: docs.length,
    queries: queries.length,
    indexSeconds,
    indexWallSeconds,
    p50: quantile(cpu, 0.5),
    p95: quantile(cpu, 0.95),
    wallP50: quantile(wall, 0.5),
    wallP95: quantile(wall, 0.95),
    peakMb: process.resourceUsage().maxRSS / 1024,
    corpusMb,
    ...(reindexSeconds !== undefined && { reindexSeconds }),
    ...(postingsPerQuery !== undefined && { postingsPerQuery }),
    ...(pruning !== undefined && { pruning }),
    checks,
  };
}

/** Runs one engine over one corpus in a fresh Node process and returns what it measured. */
function spawnMeasure(engine: Engine, name: CorpusName, size: number): Measurement {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, ['--max-old-space-size=8192', self, '--child', engine, name, String(size)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new HarnessError(`bench lexical: the ${engine} process over ${name} ${size} failed (exit ${child.status ?? child.signal})`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Measurement;
}

const fmtMs = (x: number) => `${x.toFixed(3)} ms`;
const fmtRate = (docsPerSecond: number) => `${Math.round(docsPerSecond).toLocaleString('en-US')} docs/s`;
const fmtMb = (x: number) => `${Math.round(x).toLocaleString('en-US')} MB`;
const fmtX = (x: number) => `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}x`;

function table(title: string, rows: readonly [string, Measurement][]): void {
  process.stdout.write(`\n${title}\n`);
  const head = ['index (CPU)', 'p50', 'p95', 'wall: index', 'p50', 'p95', 'peak RSS', 'corpus RSS'];
  process.stdout.write(`${'arm'.padEnd(22)}${head.map((h, i) => h.padStart(i === 0 ? 18 : 12)).join('')}\n`);
  for (const [name, m] of rows) {
    const cells = [
      fmtRate(m.documents / m.indexSeconds),
      fmtMs(m.p50),
      fmtMs(m.p95),
      `${m.indexWallSeconds.toFixed(2)} s`,
      fmtMs(m.wallP50),
      fmtMs(m.wallP95),
      fmtMb(m.peakMb),
      fmtMb(m.corpusMb),
    ];
    process.stdout.write(`${name.padEnd(22)}${cells.map((c, i) => c.padStart(i === 0 ? 18 : 12)).join('')}\n`);
  }
}

function compareTo(bm25: Measurement, fts: Measurement): void {
  if (bm25.pruning !== undefined) {
    const modes = Object.entries(bm25.pruning).map(([mode, t]) => `${mode} ${fmtMs(t.p50)} / ${fmtMs(t.p95)}`);
    process.stdout.write(`bm25 query p50 / p95 (CPU) by pruning, same index and hits: ${modes.join('; ')}\n`);
  }
  process.stdout.write(
    `ratio bm25 / sqlite-fts5 porter (CPU time): indexing ${fmtX(fts.indexSeconds / bm25.indexSeconds)} as fast; queries ${fmtX(fts.p50 / bm25.p50)} faster at p50, ` +
      `${fmtX(fts.p95 / bm25.p95)} at p95 (wall clock: ${fmtX(fts.indexWallSeconds / bm25.indexWallSeconds)}, ${fmtX(fts.wallP50 / bm25.wallP50)}, ` +
      `${fmtX(fts.wallP95 / bm25.wallP95)}); peak memory ${fmtX(bm25.peakMb / fts.peakMb)} of FTS5's\n`,
  );
  if (bm25.reindexSeconds !== undefined && fts.reindexSeconds !== undefined) {
    process.stdout.write(
      `indexing the same corpus again in the same process (CPU time): bm25 ${fmtRate(bm25.documents / bm25.reindexSeconds)}, FTS5 ${fmtRate(fts.documents / fts.reindexSeconds)}: ` +
        `${fmtX(fts.reindexSeconds / bm25.reindexSeconds)} as fast\n`,
    );
  }
  if (bm25.checks.length === 0) return;
  const equal = bm25.checks.filter((c, i) => c.digest === fts.checks[i]?.digest).length;
  const counts = bm25.checks.map((c) => c.matched).join(', ');
  process.stdout.write(
    `output check: matching documents ${equal === bm25.checks.length ? 'EQUAL' : 'DIFFERENT'} for ${equal}/${bm25.checks.length} queries (bm25 matched ${counts}; ` +
      `FTS5 ${fts.checks.map((c) => c.matched).join(', ')})\n`,
  );
}

function growth(rows: readonly { size: number; bm25: Measurement; fts: Measurement }[]): void {
  const a = rows[0]!;
  const z = rows.at(-1)!;
  const n = (x: number) => x.toLocaleString('en-US');
  const g = (x: number, y: number) => fmtX(y / x);
  process.stdout.write(`\ngrowth from ${n(a.size)} to ${n(z.size)} documents (${fmtX(z.size / a.size)} the documents):\n`);
  if (a.bm25.postingsPerQuery !== undefined && z.bm25.postingsPerQuery !== undefined) {
    process.stdout.write(
      `  postings per query (exhaustive work)  ${g(a.bm25.postingsPerQuery, z.bm25.postingsPerQuery)} (${n(Math.round(a.bm25.postingsPerQuery))} -> ${n(Math.round(z.bm25.postingsPerQuery))})\n`,
    );
  }
  for (const [name, x, y] of [
    ['bm25', a.bm25, z.bm25],
    ['sqlite-fts5 porter', a.fts, z.fts],
  ] as const) {
    process.stdout.write(
      `  ${name.padEnd(20)} query p50 ${g(x.p50, y.p50)}, p95 ${g(x.p95, y.p95)}; index time ${g(x.indexSeconds, y.indexSeconds)} (CPU time); peak RSS ${g(x.peakMb, y.peakMb)}\n`,
    );
  }
}

const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');

/** Issue 16/17's indexing goal at one corpus: bm25 indexes at least as fast as FTS5 (CPU time). */
function indexGoal(corpus: string, bm25: Measurement, fts: Measurement): string {
  const index = fts.indexSeconds / bm25.indexSeconds;
  return `  ${corpus.padEnd(28)} indexing at least as fast as FTS5: ${verdict(index >= 1)} (${fmtX(index)}, ${fmtRate(bm25.documents / bm25.indexSeconds)} vs ${fmtRate(fts.documents / fts.indexSeconds)})\n`;
}

/** Issue 30's goal 6, the same comparison as {@link indexGoal} in the line format a summary of `npm run bench` collects. */
function issue30Goal(corpus: string, bm25Seconds: number, ftsSeconds: number): string {
  const index = ftsSeconds / bm25Seconds;
  return `goal 30.6 (bm25 indexing, ${corpus}): ${index.toFixed(2)}x against FTS5 CPU time; goal >= 1x: ${verdict(index >= 1)}\n`;
}

/** ADR 0012's goals at the largest size: query p50 at least 50x faster, indexing at least as fast, peak memory no worse. */
function goal(size: number, bm25: Measurement, fts: Measurement): string {
  const p50 = fts.p50 / bm25.p50;
  return (
    `  at ${size.toLocaleString('en-US')} documents: query p50 >= 50x faster than FTS5: ${verdict(p50 >= 50)} (${fmtX(p50)}); ` +
    `peak RSS no worse than FTS5's: ${verdict(bm25.peakMb <= fts.peakMb)} (${fmtMb(bm25.peakMb)} vs ${fmtMb(fts.peakMb)}, ${fmtX(bm25.peakMb / fts.peakMb)})\n`
  );
}

function sizes(): number[] {
  const raw = process.env[SIZES_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_SIZES;
  const out = raw.split(',').map((s) => Number(s.trim().replaceAll('_', '')));
  if (out.some((x) => !Number.isSafeInteger(x) || x < 1_000)) {
    throw new UsageError(`${SIZES_ENV}="${raw}": expected comma-separated document counts of at least 1000, e.g. 100000,300000,1000000`);
  }
  return [...new Set(out)].sort((a, b) => a - b);
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
  const synthetic = sizes();
  const goals: string[] = [];
  const issue30: string[] = [];
  if (existsSync(nfcorpusDir())) {
    const bm25 = spawnMeasure('bm25', 'nfcorpus', 0);
    const fts = spawnMeasure('fts5', 'nfcorpus', 0);
    table(`NFCorpus (${bm25.documents} documents, ${bm25.queries} test queries, top-${TOP_K}; analyzers differ, so no output check)`, [
      ['bm25 (lucene preset)', bm25],
      ['sqlite-fts5 (porter)', fts],
    ]);
    compareTo(bm25, fts);
    goals.push(indexGoal('NFCorpus', bm25, fts));
    issue30.push(issue30Goal('NFCorpus, first index', bm25.indexSeconds, fts.indexSeconds));
    if (bm25.reindexSeconds !== undefined && fts.reindexSeconds !== undefined) {
      goals.push(indexGoal('NFCorpus, indexed again', { ...bm25, indexSeconds: bm25.reindexSeconds }, { ...fts, indexSeconds: fts.reindexSeconds }));
      issue30.push(issue30Goal('NFCorpus, indexed again', bm25.reindexSeconds, fts.reindexSeconds));
    }
  } else {
    process.stdout.write(`NFCorpus: skipped (${nfcorpusDir()} not present)\n`);
    issue30.push(`goal 30.6 (bm25 indexing, NFCorpus): not measured (${nfcorpusDir()} not present): MISSED\n`);
  }
  const rows: { size: number; bm25: Measurement; fts: Measurement }[] = [];
  for (const size of synthetic) {
    const bm25 = spawnMeasure('bm25', 'synthetic', size);
    const fts = spawnMeasure('fts5', 'synthetic', size);
    table(`synthetic (${size.toLocaleString('en-US')} documents, ${QUERIES} queries of 2-5 words, top-${TOP_K})`, [
      ['bm25 (lucene preset)', bm25],
      ['sqlite-fts5 (porter)', fts],
    ]);
    compareTo(bm25, fts);
    rows.push({ size, bm25, fts });
    goals.push(indexGoal(`synthetic ${size.toLocaleString('en-US')}`, bm25, fts));
    issue30.push(issue30Goal(`synthetic ${size.toLocaleString('en-US')}`, bm25.indexSeconds, fts.indexSeconds));
  }
  if (rows.length > 1) growth(rows);
  const largest = rows.at(-1);
  if (largest !== undefined) goals.push(goal(largest.size, largest.bm25, largest.fts));
  process.stdout.write(`\ngoals (issues 16 and 17, ADR 0012; CPU time of each process, peak RSS corpus included):\n${goals.join('')}`);
  process.stdout.write(`\n${issue30.join('')}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [flag, engine, name, size] = process.argv.slice(2);
  if (flag === '--child') {
    const m = await measureOne(engine as Engine, name as CorpusName, Number(size));
    process.stdout.write(`${JSON.stringify(m)}\n`);
  } else {
    await main();
  }
}
