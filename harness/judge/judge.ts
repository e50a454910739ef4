import pLimit from 'p-limit';
import { passageOf } from '../../evalset/passage.js';
import type { Document, EvalSet, Query } from '../../evalset/types.js';
import { type ContentStore, cacheKey } from '../cache/index.js';
import type { Logger } from '../log.js';
import { majorityGrade, parseGrade } from './grade.js';
import { addTokens, tokensOf } from '../llm/price.js';
import type { ChatFn, ChatReply } from '../llm/types.js';
import type { Pool } from './pool.js';
import { type PromptTemplate, renderPrompt } from './prompt.js';
import type { JudgeCounts, JudgeIdentity, JudgeTokens, JudgmentRecord } from './store.js';

/**
 * Bumped when the meaning of a cached judge entry changes. v2: one entry per sample, holding its parsed grade
 * only (v1 cached every reply, so an empty or unparsable one was served again on every rerun).
 */
const JUDGE_CACHE_VERSION = 2;

export interface JudgeOptions {
  readonly identity: JudgeIdentity;
  readonly prompt: PromptTemplate;
  readonly chat: ChatFn;
  /** Sensitive documents go to the judge only when its endpoint is declared local. */
  readonly local: boolean;
  readonly concurrency: number;
  readonly store: ContentStore;
  readonly log: Logger;
  /** Judge pairs gold already grades too (to measure the judge against gold); default: only the holes. */
  readonly all?: boolean;
  /** Records of an earlier run by the same judge: their pairs are not judged again. */
  readonly previous?: readonly JudgmentRecord[];
  /**
   * The server (base URL without credentials) to key cached grades by too, so another server is asked afresh:
   * set by the audit, which tests a server's behaviour; judging leaves it out, so a moved server keeps its grades.
   */
  readonly server?: string;
}

export interface JudgeOutcome {
  /** One record per judged-or-attempted pair, in pool order (earlier records first). */
  readonly records: JudgmentRecord[];
  readonly counts: JudgeCounts;
  readonly tokens: JudgeTokens;
  /** The models the server named in the replies whose grades were used (fresh or cached), sorted. */
  readonly servedModels: readonly string[];
  /** Pairs this run asked the judge about, and how many of them got no grade from any sample. */
  readonly asked: { readonly pairs: number; readonly noGrade: number };
}

/** The line that separates a judge prompt from its re-ask (sent after an unparsable reply, with `{{reply}}`). */
const REASK_SEPARATOR = /\n=== re-ask ===\n/;

/** The prompt and its re-ask section; a prompt without one re-asks with the prompt alone. */
function splitReask(t: PromptTemplate): [PromptTemplate, PromptTemplate] {
  const [head, tail] = t.text.split(REASK_SEPARATOR);
  return [
    { ...t, text: head as string },
    { ...t, text: tail ?? 'Reply with the line ##final score: N only, N one of 0, 1, 2, 3. Your previous reply was:\n{{reply}}' },
  ];
}

/** A pair the judge still has to grade, and the slot of its record in pool order. */
interface Todo {
  readonly index: number;
  readonly query: Query;
  readonly doc: Document;
}

/**
 * Sorts the pool's pairs: gold grades them (unless `all`), an earlier run judged them, they are sensitive and
 * the judge is not local, or they are to do. `slots` holds a record per pair not left to gold, in pool order,
 * undefined where one is to do.
 */
function sortPairs(pool: Pool, es: EvalSet, opts: JudgeOptions): { gold: number; todo: Todo[]; slots: (JudgmentRecord | undefined)[] } {
  const queries = new Map<string, Query>(es.queries.map((q) => [q.id, q] as const));
  const docs = new Map<string, Document>(es.documents.map((d) => [d.id, d] as const));
  const previous = new Map<string, JudgmentRecord>((opts.previous ?? []).map((r) => [`${r.queryId}\t${r.docId}`, r] as const));
  let gold = 0;
  const todo: Todo[] = [];
  const slots: (JudgmentRecord | undefined)[] = [];
  for (const p of pool.pairs) {
    const query = queries.get(p.queryId);
    const doc = docs.get(p.docId);
    if (!query) throw new Error(`judgePool: pooled query ${p.queryId} is not in eval set ${es.name}`);
    if (!doc) throw new Error(`judgePool: pooled document ${p.docId} (query ${p.queryId}) is not in the corpus of ${es.name}`);
    if (!opts.all && es.qrels.get(p.queryId)?.has(p.docId) === true) {
      gold++;
      continue;
    }
    const earlier = previous.get(`${p.queryId}\t${p.docId}`);
    if (earlier && earlier.status === 'judged') {
      slots.push(earlier);
      continue;
    }
    if (doc.sensitive === true && !opts.local) {
      slots.push({ queryId: query.id, docId: doc.id, stratum: query.stratum, status: 'skipped-sensitive', grade: null, samples: [], parseFailures: 0 });
      continue;
    }
    todo.push({ index: slots.length, query, doc });
    slots.push(undefined);
  }
  return { gold, todo, slots };
}

/** A sample's grade as the cache holds it, with the model the server named in the reply that gave it. */
interface CachedGrade {
  readonly grade: number;
  readonly model: string | null;
}

/** What a cached judge entry must be: a grade 0-3 and the served model (null when the server named none). */
function cachedGradeProblem(v: unknown): string | undefined {
  const g = v as Partial<CachedGrade> | null;
  if (g === null || typeof g !== 'object' || !Number.isInteger(g.grade) || (g.grade as number) < 0 || (g.grade as number) > 3) return 'not a grade 0-3';
  return g.model === null || typeof g.model === 'string' ? undefined : 'no served model';
}

/**
 * The judge's grades through the cache, counting requests sent, samples read from the cache, tokens and the
 * models the server named. Only a parsed grade is ever stored: an empty, unparsable or failed reply is asked
 * again on the next run, never served from the cache.
 */
class CachedJudge {
  requests = 0;
  cachedReplies = 0;
  tokens: JudgeTokens = { prompt: 0, completion: 0 };
  readonly servedModels = new Set<string>();
  /** Cache writes under way; {@link flush} waits for them and fails on the first that failed. */
  private writes: Promise<void>[] = [];

  constructor(private readonly opts: JudgeOptions) {}

  async flush(): Promise<void> {
    const pending = this.writes;
    this.writes = [];
    await Promise.all(pending);
  }

  async sample(
    prompt: string,
    reask: PromptTemplate,
    at: { readonly query: string; readonly document: string; readonly sample: number; readonly parseRetries: number },
  ): Promise<number | undefined> {
    const { identity, store, log } = this.opts;
    const decoding = identity.decoding;
    const key = cacheKey('judge', JUDGE_CACHE_VERSION, {
      model: identity.model,
      promptSha256: identity.prompt.sha256,
      temperature: decoding.temperature,
      maxTokens: decoding.maxTokens,
      query: at.query,
      document: at.document,
      sample: at.sample,
      ...(this.opts.server === undefined ? {} : { server: this.opts.server }),
    });
    const hit = await store.get('judge', key);
    if (hit !== undefined) {
      let problem: string | undefined;
      try {
        const cached = JSON.parse(hit.toString('utf8')) as CachedGrade;
        problem = cachedGradeProblem(cached);
        if (problem === undefined) {
          this.cachedReplies++;
          if (cached.model !== null) this.servedModels.add(cached.model);
          return cached.grade;
        }
      } catch {
        problem = 'payload is not valid JSON';
      }
      log.warn(`cache judge/${key}: ${problem}; evicted, asking the judge again`);
      await store.delete('judge', key);
    }
    const got = await sampleGrade((asked) => this.ask(asked, `s${at.sample}`), prompt, reask, at.parseRetries);
    // Written in the background: the pair's slot goes to the next pair now, not after an fsync. Through a batch API
    // 50,000 grades land at once, and waiting for each write would trickle the next batch's calls in one by one.
    if (got !== undefined) {
      const write = store.put('judge', key, JSON.stringify(got));
      write.catch(() => {}); // handled: flush() rethrows it
      this.writes.push(write);
    }
    return got?.grade;
  }

  /** One request; `tag` (the sample) keeps equal prompts of different samples apart in a batch. */
  private async ask(prompt: string, tag: string): Promise<ChatReply> {
    const fresh = await this.opts.chat(prompt, this.opts.identity.decoding, tag);
    this.requests++;
    this.tokens = addTokens(this.tokens, tokensOf(fresh));
    if (fresh.model !== undefined) this.servedModels.add(fresh.model);
    return fresh;
  }
}

/**
 * One sample's grade: the prompt, then up to `parseRetries` re-asks while the reply has no grade. A re-ask quotes
 * the unparsable reply and asks for the answer line alone: the same prompt again would get the same reply from
 * a deterministic (temperature 0) server. Undefined when no reply held a grade.
 */
async function sampleGrade(
  ask: (prompt: string) => Promise<ChatReply>,
  prompt: string,
  reask: PromptTemplate,
  parseRetries: number,
): Promise<CachedGrade | undefined> {
  let previous: string | undefined;
  for (let attempt = 0; attempt <= parseRetries; attempt++) {
    const r = await ask(previous === undefined ? prompt : `${prompt}\n\n${renderPrompt(reask, { reply: previous })}`);
    const grade = parseGrade(r.content);
    if (grade !== undefined) return { grade, model: r.model ?? null };
    previous = r.content;
  }
  return undefined;
}

/** One pair's record: `samples` grades, the majority of those that parsed; asked at once, so a batch holds them together. */
async function judgePair(
  { query, doc }: Todo,
  sample: CachedJudge['sample'],
  [main, reask]: readonly [PromptTemplate, PromptTemplate],
  identity: JudgeIdentity,
): Promise<JudgmentRecord> {
  const text = passageOf(doc);
  const prompt = renderPrompt(main, { query: query.text, passage: text });
  const grades = await Promise.all(
    Array.from({ length: identity.samples }, (_, s) =>
      sample(prompt, reask, { query: query.text, document: text, sample: s, parseRetries: identity.parseRetries }),
    ),
  );
  const samples = grades.filter((g): g is number => g !== undefined);
  const failures = grades.length - samples.length;
  const grade = majorityGrade(samples);
  return {
    queryId: query.id,
    docId: doc.id,
    stratum: query.stratum,
    status: grade === undefined ? 'parse-failure' : 'judged',
    grade: grade ?? null,
    samples,
    parseFailures: failures,
  };
}

/**
 * Judges every pair of `pool` that has no grade yet (not in gold unless `all`, not in `previous`), with
 * `samples` replies per pair and up to `parseRetries` new requests per unparsable reply.
 *
 * Each sample's parsed grade is cached under a key of the judge model, the prompt's sha256, the decoding
 * params, the query text, the document text and the sample index (no key; the server only under `server`): a rerun reads every grade
 * from the cache and sends nothing, and an interrupted run resumes where it stopped. A sample whose every
 * attempt is unparsable is a counted parse failure, never a grade, and is not cached: a rerun asks again.
 */
export async function judgePool(pool: Pool, es: EvalSet, opts: JudgeOptions): Promise<JudgeOutcome> {
  const { gold, todo, slots } = sortPairs(pool, es, opts);
  const judge = new CachedJudge(opts);
  const prompts = splitReask(opts.prompt);
  const progress = opts.log.progress('judge', todo.length);
  // A batched client asks for a batch's worth in flight; one by one, its rate limiter's ceiling.
  const limit = pLimit(opts.chat.inFlight ?? opts.concurrency);
  // After a failure no new pair starts (the command reports it; finished grades are safe in the cache).
  let failed = false;
  const sample: CachedJudge['sample'] = (prompt, reask, at) =>
    judge.sample(prompt, reask, at).catch((err: unknown) => {
      failed = true;
      throw err;
    });
  try {
    await Promise.all(
      todo.map((t) =>
        limit(async () => {
          if (failed) return;
          const record = await judgePair(t, sample, prompts, opts.identity);
          slots[t.index] = record;
          if (record.status === 'parse-failure') progress.fail?.();
          else progress.tick();
        }),
      ),
    );
  } catch (err) {
    // The grades that came back are cached before the failure is reported.
    await judge.flush().catch(() => {});
    throw err;
  }
  progress.done();
  await judge.flush();
  const served = [...judge.servedModels].sort();
  if (served.some((m) => m !== opts.identity.model))
    opts.log.info(`judge: asked for model ${opts.identity.model}, the server answered as ${served.join(', ')} (recorded in the manifest)`);
  const records = slots as JudgmentRecord[];
  const attempted = todo.filter((t) => slots[t.index] !== undefined);
  const noGrade = attempted.filter((t) => slots[t.index]?.status === 'parse-failure').length;
  return {
    records,
    counts: {
      pooled: pool.pairs.length,
      gold,
      judged: records.filter((r) => r.status === 'judged').length,
      parseFailures: records.filter((r) => r.status === 'parse-failure').length,
      skippedSensitive: records.filter((r) => r.status === 'skipped-sensitive').length,
      requests: judge.requests,
      cachedReplies: judge.cachedReplies,
    },
    tokens: judge.tokens,
    servedModels: served,
    asked: { pairs: attempted.length, noGrade },
  };
}
