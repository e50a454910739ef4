import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import pLimit from 'p-limit';
import { porterStem } from '../../arms/bm25/porter-stemmer.js';
import { contentTokens } from '../../evalset/adapters/overlap.js';
import { loadMemory } from '../../evalset/memory.js';
import type { Document, JsonValue } from '../../evalset/types.js';
import { type ContentStore, cacheKey, writeFolderAtomic } from '../cache/index.js';
import { ConfigError, InputError } from '../errors.js';
import { addTokens, type TokenCount, tokensOf } from '../llm/price.js';
import type { ChatFn, Decoding } from '../llm/types.js';
import { loadPrompt, type PromptTemplate, renderPrompt } from '../judge/prompt.js';
import { BUILD_MANIFEST } from '../judge/store.js';
import type { Logger } from '../log.js';
import { createRng } from '../stats/rng.js';

export type QueryKind = 'exact' | 'paraphrase' | 'multi-hop';
export const QUERY_KINDS: readonly QueryKind[] = ['exact', 'paraphrase', 'multi-hop'];

/** Bumped when the meaning of a cached generator reply changes. */
const GENERATE_CACHE_VERSION = 1;

export interface BuildOptions {
  /** A memory corpus: `corpus.jsonl` / `corpus.csv`, or a folder holding one. */
  readonly corpus: string;
  readonly out: string;
  readonly generator: { readonly model: string; readonly baseURL: string; readonly local: boolean };
  /** The model that will judge this eval set: recorded, and refused when it is the generator. */
  readonly judgeModel: string;
  readonly chat: ChatFn;
  readonly decoding: Required<Decoding>;
  /** Metadata fields to stratify seeds by (`category`, `importance`, any `metadata` key). */
  readonly strataBy: readonly string[];
  /** Seed memories drawn per seed group. */
  readonly perStratum: number;
  readonly kinds: readonly QueryKind[];
  /** Memories per multi-hop question. */
  readonly hops: number;
  /** Generations per query before it is dropped (the first plus regenerations after a rejection). */
  readonly maxAttempts: number;
  readonly seed: number;
  readonly concurrency: number;
  /** Hand-authored queries (memory `queries.jsonl` lines) appended to the generated ones. */
  readonly hand?: string;
  readonly store: ContentStore;
  readonly log: Logger;
}

/** The provenance and counts written beside the eval set as `build-manifest.json`. */
export interface BuildManifest {
  readonly buildVersion: 1;
  readonly generator: { readonly model: string; readonly baseURL: string; readonly local: boolean; readonly decoding: Required<Decoding> };
  readonly judgeModel: string;
  readonly prompts: Readonly<Record<string, { readonly name: string; readonly sha256: string }>>;
  readonly seed: number;
  readonly strataBy: readonly string[];
  readonly perStratum: number;
  readonly hops: number;
  readonly maxAttempts: number;
  /** Seed group -> the seed memory ids drawn from it. */
  readonly seeds: Readonly<Record<string, readonly string[]>>;
  readonly counts: {
    readonly sensitiveExcluded: number;
    readonly requested: Readonly<Record<string, number>>;
    readonly accepted: Readonly<Record<string, number>>;
    /** Generations rejected by the kind's rule (then regenerated). */
    readonly rejected: Readonly<Record<string, number>>;
    /** Queries given up after maxAttempts, or answered NONE (multi-hop). */
    readonly dropped: Readonly<Record<string, number>>;
    readonly hand: number;
    readonly requests: number;
    readonly cachedReplies: number;
  };
  readonly tokens: TokenCount;
}

/**
 * Content terms for the overlap rules: the content tokens of evalset/adapters/overlap.ts (lower case, split on
 * non-alphanumerics, one-letter tokens and stop words dropped), each Porter-stemmed, so "running" and "run" are
 * one term.
 */
export function contentTerms(text: string): Set<string> {
  return new Set([...contentTokens(text)].map(porterStem));
}

/** The terms a question shares with its seed memories. */
export function sharedTerms(question: string, seeds: readonly string[]): string[] {
  const seedTerms = new Set(seeds.flatMap((s) => [...contentTerms(s)]));
  return [...contentTerms(question)].filter((t) => seedTerms.has(t)).sort();
}

/**
 * Why a generated question is rejected, or undefined when it is accepted:
 * - every kind: an empty reply, or more than one line;
 * - `exact`: it shares no content term with its seed (then it is not lexical at all);
 * - `paraphrase`: it shares any content term with its seed, after stop-word removal and stemming.
 * A multi-hop reply of `NONE` is not a rejection: the seeds cannot be combined, so the query is dropped.
 */
export function rejection(kind: QueryKind, question: string, seeds: readonly string[]): string | undefined {
  if (question === '') return 'the reply was empty';
  if (question.includes('\n')) return 'the reply was more than one line';
  const shared = sharedTerms(question, seeds);
  if (kind === 'exact' && shared.length === 0) return 'it shares no key word with the memory';
  if (kind === 'paraphrase' && shared.length > 0) return `it shares words with the memory (${shared.join(', ')})`;
  return undefined;
}

/** The seed group of a memory: its values of `fields`, numbers in [0, 1] bucketed low / mid / high. */
export function seedGroup(d: Document, fields: readonly string[]): string {
  if (fields.length === 0) return 'all';
  return fields
    .map((f) => {
      const v = d.metadata?.[f];
      if (v === undefined || v === null) return `${f}=(none)`;
      if (typeof v === 'number') return `${f}=${v < 1 / 3 ? 'low' : v < 2 / 3 ? 'mid' : 'high'}`;
      return `${f}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
    })
    .join(',');
}

/** Reads a memory corpus alone (the memory reader wants a queries file beside it: an empty one is made). */
async function readCorpus(path: string): Promise<{ documents: Document[]; file: string }> {
  const name = basename(path);
  const file = name === 'corpus.jsonl' || name === 'corpus.csv' ? path : join(path, 'corpus.jsonl');
  const fallback = join(path, 'corpus.csv');
  let chosen = file;
  try {
    await readFile(file);
  } catch {
    chosen = fallback;
    await readFile(fallback).catch(() => {
      throw new InputError(path, undefined, 'no memory corpus here: give corpus.jsonl, corpus.csv or a folder holding one');
    });
  }
  const tmp = await mkdtemp(join(tmpdir(), 'harness-corpus-'));
  try {
    await copyFile(chosen, join(tmp, basename(chosen)));
    await writeFile(join(tmp, 'queries.jsonl'), '');
    const es = await loadMemory(tmp);
    return { documents: [...es.documents], file: chosen };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

interface Job {
  readonly kind: QueryKind;
  readonly seeds: readonly Document[];
}

/** An accepted question, with its seeds and how many generations it took. */
interface Generated {
  readonly kind: QueryKind;
  readonly text: string;
  readonly seeds: readonly Document[];
  readonly attempts: number;
}

type KindCounts = Record<QueryKind, number>;

function zeroCounts(): KindCounts {
  return Object.fromEntries(QUERY_KINDS.map((k) => [k, 0])) as KindCounts;
}

/** Per kind: generations requested, accepted, rejected (then regenerated) and dropped. */
interface Tally {
  readonly requested: KindCounts;
  readonly accepted: KindCounts;
  readonly rejected: KindCounts;
  readonly dropped: KindCounts;
}

/**
 * Seed memories drawn per seed group (a seeded partial shuffle, groups in sorted order) and the generation jobs:
 * one per seed and single-memory kind, and multi-hop jobs over consecutive seeds of one group, `hops` at a time.
 */
function drawJobs(usable: readonly Document[], o: BuildOptions): { seeds: Record<string, string[]>; jobs: Job[] } {
  const byStratum = new Map<string, Document[]>();
  for (const d of usable) {
    const s = seedGroup(d, o.strataBy);
    const list = byStratum.get(s);
    if (list) list.push(d);
    else byStratum.set(s, [d]);
  }
  const rng = createRng(o.seed, 13);
  const seeds: Record<string, string[]> = {};
  const jobs: Job[] = [];
  for (const s of [...byStratum.keys()].sort()) {
    const pool = [...(byStratum.get(s) as Document[])];
    const n = Math.min(o.perStratum, pool.length);
    for (let i = 0; i < n; i++) {
      const j = i + rng.nextInt(pool.length - i);
      [pool[i], pool[j]] = [pool[j] as Document, pool[i] as Document];
    }
    const drawn = pool.slice(0, n);
    seeds[s] = drawn.map((d) => d.id);
    for (const d of drawn) for (const kind of o.kinds) if (kind !== 'multi-hop') jobs.push({ kind, seeds: [d] });
    // Multi-hop: consecutive drawn seeds of one seed group, `hops` at a time (they share its category or bucket).
    if (o.kinds.includes('multi-hop'))
      for (let i = 0; i + o.hops <= drawn.length; i += o.hops) jobs.push({ kind: 'multi-hop', seeds: drawn.slice(i, i + o.hops) });
  }
  return { seeds, jobs };
}

/** The generator's replies through the cache, counting requests sent, replies read from the cache and tokens. */
class CachedGenerator {
  requests = 0;
  cachedReplies = 0;
  tokens: TokenCount = { prompt: 0, completion: 0 };

  constructor(private readonly o: BuildOptions) {}

  async generate(prompt: string, keyInputs: Record<string, JsonValue>): Promise<string> {
    const { o } = this;
    const key = cacheKey('judge', GENERATE_CACHE_VERSION, {
      task: 'evalset-build',
      model: o.generator.model,
      temperature: o.decoding.temperature,
      maxTokens: o.decoding.maxTokens,
      ...keyInputs,
    });
    const hit = await o.store.get('judge', key);
    if (hit !== undefined) {
      this.cachedReplies++;
      return (JSON.parse(hit.toString('utf8')) as { content: string }).content;
    }
    const r = await o.chat(prompt, o.decoding);
    this.requests++;
    this.tokens = addTokens(this.tokens, tokensOf(r));
    await o.store.put('judge', key, JSON.stringify(r));
    return r.content;
  }
}

/**
 * One job's question: generated, checked against its kind's rule and regenerated with the reason while rejected,
 * up to `maxAttempts`; undefined when dropped (given up, or a multi-hop NONE).
 */
async function generateOne(
  job: Job,
  t: PromptTemplate,
  generate: (prompt: string, keyInputs: Record<string, JsonValue>) => Promise<string>,
  maxAttempts: number,
  tally: Tally,
): Promise<Generated | undefined> {
  const seedTexts = job.seeds.map((d) => d.text);
  let feedback = '';
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const prompt = renderPrompt(t, {
      memory: seedTexts[0] as string,
      memories: job.seeds.map((d, i) => `Memory ${i + 1}: ${d.text}`).join('\n'),
      feedback,
    });
    const reply = (await generate(prompt, { promptSha256: t.sha256, prompt, attempt })).trim();
    if (job.kind === 'multi-hop' && /^NONE\.?$/i.test(reply)) return undefined;
    const why = rejection(job.kind, reply, seedTexts);
    if (why === undefined) {
      tally.accepted[job.kind]++;
      return { kind: job.kind, text: reply, seeds: job.seeds, attempts: attempt + 1 };
    }
    tally.rejected[job.kind]++;
    feedback = `\nYour previous question was rejected because ${why}:\n${reply.split('\n')[0]}\nWrite a different one.\n`;
  }
  return undefined;
}

/** Every job's question, in job order, `concurrency` at a time; after a failure no new job starts. */
async function generateAll(
  jobs: readonly Job[],
  prompts: Readonly<Record<QueryKind, PromptTemplate>>,
  gen: CachedGenerator,
  o: BuildOptions,
  tally: Tally,
): Promise<(Generated | undefined)[]> {
  const results: (Generated | undefined)[] = new Array(jobs.length);
  const progress = o.log.progress('generate', jobs.length);
  // A batched client asks for a batch's worth in flight; one by one, its rate limiter's ceiling.
  const limit = pLimit(o.chat.inFlight ?? o.concurrency);
  // After a failure no new query starts (the command reports it; finished replies are safe in the cache).
  let failed = false;
  const generate = (prompt: string, keyInputs: Record<string, JsonValue>): Promise<string> =>
    gen.generate(prompt, keyInputs).catch((err: unknown) => {
      failed = true;
      throw err;
    });
  await Promise.all(
    jobs.map((job, index) =>
      limit(async () => {
        if (failed) return;
        tally.requested[job.kind]++;
        results[index] = await generateOne(job, prompts[job.kind], generate, o.maxAttempts, tally);
        if (results[index] === undefined) tally.dropped[job.kind]++;
        progress.tick();
      }),
    ),
  );
  progress.done();
  return results;
}

/** The accepted questions as memory `queries.jsonl` lines, ids `gen-<kind>-NNNN`, seeds graded 3 (multi-hop 2). */
function generatedLines(results: readonly (Generated | undefined)[]): { lines: string[]; ids: Set<string> } {
  const lines: string[] = [];
  const ids = new Set<string>();
  const counters = zeroCounts();
  for (const r of results) {
    if (r === undefined) continue;
    counters[r.kind]++;
    const id = `gen-${r.kind}-${String(counters[r.kind]).padStart(4, '0')}`;
    ids.add(id);
    const grade = r.kind === 'multi-hop' ? 2 : 3;
    lines.push(
      JSON.stringify({
        id,
        text: r.text,
        stratum: r.kind,
        qrels: Object.fromEntries(r.seeds.map((d) => [d.id, grade])),
        metadata: { generated: true, seeds: r.seeds.map((d) => d.id), attempts: r.attempts },
      }),
    );
  }
  return { lines, ids };
}

/** The hand-authored query lines, each with a free id and qrels naming memories of the corpus. */
async function handLines(file: string, documents: readonly Document[], ids: Set<string>): Promise<string[]> {
  const docIds = new Set(documents.map((d) => d.id));
  const text = await readFile(file, 'utf8').catch(() => {
    throw new InputError(file, undefined, 'cannot read the hand-authored queries');
  });
  const lines: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let q: { id?: unknown; qrels?: unknown };
    try {
      q = JSON.parse(line) as typeof q;
    } catch (err) {
      throw new InputError(file, i + 1, `not valid JSON: ${(err as Error).message}`);
    }
    if (typeof q.id !== 'string' || ids.has(q.id)) throw new InputError(file, i + 1, `query id ${JSON.stringify(q.id)} is missing or taken`);
    const missing = Object.keys((q.qrels ?? {}) as object).filter((d) => !docIds.has(d));
    if (missing.length > 0) throw new InputError(file, i + 1, `query ${q.id} names memories not in the corpus: ${missing.join(', ')}`);
    ids.add(q.id);
    lines.push(line.trim());
  });
  return lines;
}

/** Writes the eval set's folder once it loads as a memory eval set (a hand line with a typo fails here). */
async function writeChecked(out: string, files: ReadonlyMap<string, string | Uint8Array>): Promise<void> {
  const check = await mkdtemp(join(tmpdir(), 'harness-build-'));
  try {
    for (const [name, data] of files) await writeFile(join(check, name), data);
    await loadMemory(check);
  } finally {
    await rm(check, { recursive: true, force: true });
  }
  await writeFolderAtomic(out, files);
}

/**
 * `harness evalset build`: sample seed memories stratified by metadata, have the generator write exact,
 * paraphrase and multi-hop questions from versioned prompts, check each against its kind's rule (a rejected
 * question is regenerated with the reason in the prompt, up to maxAttempts, then dropped and counted), and write
 * a `memory` eval set (the corpus as given, the queries, the build manifest). Sensitive memories are never
 * seeds for a generator not declared local.
 */
export async function buildEvalSet(o: BuildOptions): Promise<BuildManifest> {
  if (o.generator.model === o.judgeModel) {
    throw new ConfigError('harness evalset build', [
      `--judge-model: "${o.judgeModel}" is also the generator; a model grading its own questions favours them: use two different models`,
    ]);
  }
  const { documents, file } = await readCorpus(o.corpus);
  const prompts: Record<QueryKind, PromptTemplate> = {
    exact: loadPrompt('evalset-build', 'exact-v1'),
    paraphrase: loadPrompt('evalset-build', 'paraphrase-v1'),
    'multi-hop': loadPrompt('evalset-build', 'multi-hop-v1'),
  };
  const usable = documents.filter((d) => o.generator.local || d.sensitive !== true);
  const { seeds, jobs } = drawJobs(usable, o);
  const tally: Tally = { requested: zeroCounts(), accepted: zeroCounts(), rejected: zeroCounts(), dropped: zeroCounts() };
  const gen = new CachedGenerator(o);
  const generated = generatedLines(await generateAll(jobs, prompts, gen, o, tally));
  const hand = o.hand === undefined ? [] : await handLines(o.hand, documents, generated.ids);
  const manifest: BuildManifest = {
    buildVersion: 1,
    generator: { ...o.generator, decoding: o.decoding },
    judgeModel: o.judgeModel,
    prompts: Object.fromEntries(QUERY_KINDS.map((k) => [k, { name: prompts[k].name, sha256: prompts[k].sha256 }])),
    seed: o.seed,
    strataBy: o.strataBy,
    perStratum: o.perStratum,
    hops: o.hops,
    maxAttempts: o.maxAttempts,
    seeds,
    counts: { sensitiveExcluded: documents.length - usable.length, ...tally, hand: hand.length, requests: gen.requests, cachedReplies: gen.cachedReplies },
    tokens: gen.tokens,
  };
  const lines = [...generated.lines, ...hand];
  const files = new Map<string, string | Uint8Array>([
    [basename(file), await readFile(file)],
    ['queries.jsonl', lines.map((l) => `${l}\n`).join('')],
    [BUILD_MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`],
  ]);
  await writeChecked(o.out, files);
  return manifest;
}
