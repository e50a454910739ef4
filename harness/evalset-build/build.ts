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
import type { ChatFn, Decoding } from '../judge/llm.js';
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
  readonly decoding: Decoding;
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
  readonly generator: { readonly model: string; readonly baseURL: string; readonly local: boolean; readonly decoding: Decoding };
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
  readonly tokens: { readonly prompt: number; readonly completion: number };
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

  const zero = () => Object.fromEntries(QUERY_KINDS.map((k) => [k, 0])) as Record<QueryKind, number>;
  const requested = zero();
  const accepted = zero();
  const rejected = zero();
  const dropped = zero();
  let requests = 0;
  let cachedReplies = 0;
  const tokens = { prompt: 0, completion: 0 };
  const generate = async (prompt: string, keyInputs: Record<string, JsonValue>): Promise<string> => {
    const key = cacheKey('judge', GENERATE_CACHE_VERSION, {
      task: 'evalset-build',
      model: o.generator.model,
      temperature: o.decoding.temperature,
      maxTokens: o.decoding.maxTokens,
      ...keyInputs,
    });
    const hit = await o.store.get('judge', key);
    if (hit !== undefined) {
      cachedReplies++;
      return (JSON.parse(hit.toString('utf8')) as { content: string }).content;
    }
    const r = await o.chat(prompt, o.decoding);
    requests++;
    tokens.prompt += r.promptTokens;
    tokens.completion += r.completionTokens;
    await o.store.put('judge', key, JSON.stringify(r));
    return r.content;
  };

  const results: ({ kind: QueryKind; text: string; seeds: readonly Document[]; attempts: number } | undefined)[] = new Array(jobs.length);
  const progress = o.log.progress('generate', jobs.length);
  const limit = pLimit(o.concurrency);
  // After a failure no new query starts (the command reports it; finished replies are safe in the cache).
  let failed = false;
  await Promise.all(
    jobs.map((job, index) =>
      limit(async () => {
        if (failed) return;
        requested[job.kind]++;
        const t = prompts[job.kind];
        const seedTexts = job.seeds.map((d) => d.text);
        let feedback = '';
        for (let attempt = 0; attempt < o.maxAttempts; attempt++) {
          const prompt = renderPrompt(t, {
            memory: seedTexts[0] as string,
            memories: job.seeds.map((d, i) => `Memory ${i + 1}: ${d.text}`).join('\n'),
            feedback,
          });
          const reply = (
            await generate(prompt, { promptSha256: t.sha256, prompt, attempt }).catch((err: unknown) => {
              failed = true;
              throw err;
            })
          ).trim();
          if (job.kind === 'multi-hop' && /^NONE\.?$/i.test(reply)) break;
          const why = rejection(job.kind, reply, seedTexts);
          if (why === undefined) {
            accepted[job.kind]++;
            results[index] = { kind: job.kind, text: reply, seeds: job.seeds, attempts: attempt + 1 };
            break;
          }
          rejected[job.kind]++;
          feedback = `\nYour previous question was rejected because ${why}:\n${reply.split('\n')[0]}\nWrite a different one.\n`;
        }
        if (results[index] === undefined) dropped[job.kind]++;
        progress.tick();
      }),
    ),
  );
  progress.done();

  const lines: string[] = [];
  const ids = new Set<string>();
  const counters = zero();
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
  let hand = 0;
  if (o.hand !== undefined) {
    const docIds = new Set(documents.map((d) => d.id));
    const text = await readFile(o.hand, 'utf8').catch(() => {
      throw new InputError(o.hand as string, undefined, 'cannot read the hand-authored queries');
    });
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let q: { id?: unknown; qrels?: unknown };
      try {
        q = JSON.parse(line) as typeof q;
      } catch (err) {
        throw new InputError(o.hand as string, i + 1, `not valid JSON: ${(err as Error).message}`);
      }
      if (typeof q.id !== 'string' || ids.has(q.id)) throw new InputError(o.hand as string, i + 1, `query id ${JSON.stringify(q.id)} is missing or taken`);
      const missing = Object.keys((q.qrels ?? {}) as object).filter((d) => !docIds.has(d));
      if (missing.length > 0) throw new InputError(o.hand as string, i + 1, `query ${q.id} names memories not in the corpus: ${missing.join(', ')}`);
      ids.add(q.id);
      lines.push(line.trim());
      hand++;
    });
  }

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
    counts: { sensitiveExcluded: documents.length - usable.length, requested, accepted, rejected, dropped, hand, requests, cachedReplies },
    tokens,
  };
  const files = new Map<string, string | Uint8Array>([
    [basename(file), await readFile(file)],
    ['queries.jsonl', lines.map((l) => `${l}\n`).join('')],
    [BUILD_MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`],
  ]);
  // The result must load as a memory eval set (a hand line with a typo fails here), before it replaces anything.
  const check = await mkdtemp(join(tmpdir(), 'harness-build-'));
  try {
    for (const [name, data] of files) await writeFile(join(check, name), data);
    await loadMemory(check);
  } finally {
    await rm(check, { recursive: true, force: true });
  }
  await writeFolderAtomic(o.out, files);
  return manifest;
}
