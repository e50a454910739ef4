import { type ContentStore, cacheKey, canonicalJson, sha256Hex } from '../cache/index.js';
import { addTokens } from '../llm/price.js';
import type { ChatFn } from '../llm/types.js';
import type { Logger } from '../log.js';
import { type GradeOptions, gradeAnswer, majority } from './grade.js';
import type { AnswerJudgeProfile } from './judges.js';
import type { Reader } from './reader.js';
import type { AnswerGrade, AnswerQuestion, ContextItem, GradeSample, ReaderOutcome, TokenCount } from './types.js';

/**
 * The answer stage's two caches, in the store's `judge` namespace (where every LLM reply of the workbench is
 * kept): a reader's answer per (reader, question, context), and an answer judge's reading per sample. Only
 * successes are stored, so a failed request, an empty answer or an unreadable verdict is asked again on the
 * next run; a cached entry keeps the tokens it cost, so a rerun's report shows the same cost as the first.
 */

/** Bumped when the meaning of a cached answer or grade changes. */
const ANSWER_CACHE_VERSION = 1;

/** Requests this run sent and entries it read from the cache, per stage. */
export interface CacheCounts {
  readonly requests: number;
  readonly cached: number;
}

/** Everything of a context that reaches a reader: ids, texts, dates and titles, in order. */
export function contextHash(items: readonly ContextItem[]): string {
  return sha256Hex(canonicalJson(items.map((i) => ({ id: i.id, text: i.text, timestamp: i.timestamp ?? null, title: i.title ?? null }))));
}

/** What an answered outcome must be to be served: text, tokens, model and context ids. */
function answerProblem(v: unknown): string | undefined {
  const o = v as Partial<Extract<ReaderOutcome, { status: 'answered' }>> | null;
  if (o === null || typeof o !== 'object' || o.status !== 'answered' || typeof o.text !== 'string' || o.text === '') return 'not an answer';
  if (typeof o.model !== 'string' || !Array.isArray(o.context)) return 'no model or context';
  return tokensProblem(o.tokens);
}

function tokensProblem(t: unknown): string | undefined {
  const tokens = t as Partial<TokenCount> | null;
  return tokens !== null && typeof tokens === 'object' && Number.isFinite(tokens.prompt) && Number.isFinite(tokens.completion) ? undefined : 'no token counts';
}

/**
 * Whether an answer or grade may be kept in the cache: not when its context or question holds a Sensitive
 * memory, whose text an answer (or a judge's reply quoting it) may restate; the cache never holds such text.
 */
export interface CacheUse {
  readonly store?: boolean;
}

/** A reader whose answers are read from and written to the store; `counts` says how many were asked and how many served. */
export interface CachedReader extends Reader {
  answer(q: AnswerQuestion, context: readonly ContextItem[], use?: CacheUse): Promise<ReaderOutcome>;
  counts(): CacheCounts;
}

/**
 * `reader` through the cache. The key holds the reader's identity (id, fingerprint: model, decoding, budget,
 * prompt), the server without credentials, the question (id, text, date) and the hash of the context it is
 * given; never a key or a header.
 */
export function cachedReader(reader: Reader, store: ContentStore, log: Logger, opts: { readonly server?: string } = {}): CachedReader {
  let requests = 0;
  let cached = 0;
  const keyOf = (q: AnswerQuestion, context: readonly ContextItem[]) =>
    cacheKey('judge', ANSWER_CACHE_VERSION, {
      use: 'answer-reader',
      reader: reader.id,
      fingerprint: reader.fingerprint ?? reader.id,
      server: opts.server ?? null,
      question: { id: q.id, text: q.text, date: q.date ?? null },
      context: contextHash(context),
    });
  return {
    id: reader.id,
    local: reader.local,
    model: reader.model,
    ...(reader.fingerprint === undefined ? {} : { fingerprint: reader.fingerprint }),
    counts: () => ({ requests, cached }),
    async answer(q, context, use = {}) {
      if (use.store === false) {
        requests++;
        return reader.answer(q, context);
      }
      const key = keyOf(q, context);
      const hit = await readJson(store, key, answerProblem, log);
      if (hit !== undefined) {
        cached++;
        return hit as ReaderOutcome;
      }
      requests++;
      const fresh = await reader.answer(q, context);
      if (fresh.status === 'answered') await store.put('judge', key, JSON.stringify(fresh));
      return fresh;
    },
  };
}

/**
 * `reader` without a cache, counting its requests: for a reader that computes its answer on this machine in
 * less time than reading a cache entry takes (the extractive reader).
 */
export function uncachedReader(reader: Reader): CachedReader {
  let requests = 0;
  return {
    ...reader,
    counts: () => ({ requests, cached: 0 }),
    answer(q, context) {
      requests++;
      return reader.answer(q, context);
    },
  };
}

/** A cached entry that passes `check`, else undefined (a damaged one is evicted and asked again). */
async function readJson(store: ContentStore, key: ReturnType<typeof cacheKey>, check: (v: unknown) => string | undefined, log: Logger): Promise<unknown> {
  const hit = await store.get('judge', key);
  if (hit === undefined) return undefined;
  let problem: string | undefined;
  try {
    const value = JSON.parse(hit.toString('utf8')) as unknown;
    problem = check(value);
    if (problem === undefined) return value;
  } catch {
    problem = 'payload is not valid JSON';
  }
  log.warn(`cache judge/${key}: ${problem}; evicted, asking again`);
  await store.delete('judge', key);
  return undefined;
}

/** One graded sample as the cache holds it: the verdict, the reply it was read from, and the tokens it took. */
interface CachedSample {
  readonly sample: Extract<GradeSample, { status: 'graded' }>;
  readonly tokens: TokenCount;
}

function sampleProblem(v: unknown): string | undefined {
  const c = v as Partial<CachedSample> | null;
  const s = c?.sample as Partial<Extract<GradeSample, { status: 'graded' }>> | undefined;
  if (s === undefined || s.status !== 'graded' || typeof s.correct !== 'boolean' || typeof s.reply !== 'string') return 'not a graded sample';
  return tokensProblem(c?.tokens);
}

/** Who grades, as the grade cache keys it: the model, the server without credentials, the decoding. */
export interface AnswerJudgeIdentity {
  readonly model: string;
  readonly server?: string;
  readonly temperature: number;
}

/** An answer judge through the cache, sample by sample; `counts` says how many samples were asked and how many served. */
export interface CachedGrader {
  grade(q: AnswerQuestion, answer: string, use?: CacheUse): Promise<AnswerGrade>;
  counts(): CacheCounts;
}

/**
 * Grades through the cache, one entry per sample: the key holds the judge's identity, the profile's fingerprint
 * (its routing, prompts, decoding and parse rule), the prompt as rendered for this question and answer (so the
 * question, its gold and the answer text), and the sample's index. Samples are asked one by one with
 * `samples: 1`; only a graded sample is stored. Their majority and flip rate are computed as `gradeAnswer` does.
 */
export function cachedGrader(
  profile: AnswerJudgeProfile,
  chat: ChatFn,
  identity: AnswerJudgeIdentity,
  opts: GradeOptions,
  store: ContentStore,
  log: Logger,
): CachedGrader {
  let requests = 0;
  let cached = 0;
  const one = { ...opts, samples: 1 };
  const sampleOf = async (
    q: AnswerQuestion,
    answer: string,
    index: number,
    use: CacheUse,
  ): Promise<CachedSample | { failed: GradeSample; tokens: TokenCount }> => {
    const key = cacheKey('judge', ANSWER_CACHE_VERSION, {
      use: 'answer-grade',
      judge: opts.judge,
      model: identity.model,
      server: identity.server ?? null,
      temperature: identity.temperature,
      profile: profile.fingerprint ?? profile.id,
      maxTokens: profile.maxTokens,
      prompt: sha256Hex(profile.prompt(q, answer)),
      question: { id: q.id, text: q.text, gold: q.gold },
      answer,
      sample: index,
    });
    const hit = use.store === false ? undefined : await readJson(store, key, sampleProblem, log);
    if (hit !== undefined) {
      cached++;
      return hit as CachedSample;
    }
    requests++;
    const g = await gradeAnswer(profile, chat, q, answer, { ...one, firstSample: index });
    const s = g.samples[0] as GradeSample;
    if (s.status !== 'graded') return { failed: s, tokens: g.tokens };
    const entry: CachedSample = { sample: s, tokens: g.tokens };
    if (use.store !== false) await store.put('judge', key, JSON.stringify(entry));
    return entry;
  };
  return {
    counts: () => ({ requests, cached }),
    async grade(q, answer, use = {}) {
      // Samples are asked at once: through a batch API they travel in one batch, not one batch each.
      const got = await Promise.all(Array.from({ length: opts.samples }, (_, i) => sampleOf(q, answer, i, use)));
      const samples: GradeSample[] = got.map((g) => ('sample' in g ? g.sample : g.failed));
      const tokens = got.reduce<TokenCount>((sum, g) => addTokens(sum, g.tokens), { prompt: 0, completion: 0 });
      const { correct, flipRate } = majority(samples);
      return { ...(correct === undefined ? {} : { correct }), samples, flipRate, tokens, judge: opts.judge };
    },
  };
}
