import pLimit from 'p-limit';
import type { Document, EvalSet, Query } from '../../evalset/types.js';
import { type ContentStore, cacheKey } from '../cache/index.js';
import type { Logger } from '../log.js';
import { majorityGrade, parseGrade } from './grade.js';
import type { ChatFn, ChatReply, Decoding } from './llm.js';
import type { Pool } from './pool.js';
import { type PromptTemplate, renderPrompt } from './prompt.js';
import type { JudgeCounts, JudgeIdentity, JudgeTokens, JudgmentRecord } from './store.js';

/** Bumped when the meaning of a cached judge reply changes. */
const JUDGE_CACHE_VERSION = 1;

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
}

export interface JudgeOutcome {
  /** One record per judged-or-attempted pair, in pool order (earlier records first). */
  readonly records: JudgmentRecord[];
  readonly counts: JudgeCounts;
  readonly tokens: JudgeTokens;
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

/** The passage a judge reads: title and text, as an arm indexes them. */
function passage(d: Document): string {
  return d.title === undefined || d.title === '' ? d.text : `${d.title}\n${d.text}`;
}

/**
 * Judges every pair of `pool` that has no grade yet (not in gold unless `all`, not in `previous`), with
 * `samples` replies per pair and up to `parseRetries` new requests per unparsable reply.
 *
 * Each reply is cached under a key of the judge model, the prompt's sha256, the decoding params, the query
 * text, the document text, the sample index and the attempt index (no key, no URL): a rerun reads every reply
 * from the cache and sends nothing, and an interrupted run resumes where it stopped. A sample whose every
 * attempt is unparsable is a counted parse failure, never a grade.
 */
export async function judgePool(pool: Pool, es: EvalSet, opts: JudgeOptions): Promise<JudgeOutcome> {
  const { identity, store, log } = opts;
  const queries = new Map<string, Query>(es.queries.map((q) => [q.id, q] as const));
  const docs = new Map<string, Document>(es.documents.map((d) => [d.id, d] as const));
  const previous = new Map<string, JudgmentRecord>((opts.previous ?? []).map((r) => [`${r.queryId}\t${r.docId}`, r] as const));
  const decoding: Decoding = identity.decoding;
  let gold = 0;
  let requests = 0;
  let cachedReplies = 0;
  const tokens = { prompt: 0, completion: 0 };
  const todo: { index: number; query: Query; doc: Document }[] = [];
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

  const reply = async (prompt: string, keyInputs: Record<string, string | number | null>): Promise<ChatReply> => {
    const key = cacheKey('judge', JUDGE_CACHE_VERSION, {
      model: identity.model,
      promptSha256: identity.prompt.sha256,
      temperature: decoding.temperature,
      maxTokens: decoding.maxTokens,
      ...keyInputs,
    });
    const hit = await store.get('judge', key);
    if (hit !== undefined) {
      const cached = JSON.parse(hit.toString('utf8')) as ChatReply;
      if (typeof cached.content === 'string') {
        cachedReplies++;
        return cached;
      }
    }
    const fresh = await opts.chat(prompt, decoding);
    requests++;
    tokens.prompt += fresh.promptTokens;
    tokens.completion += fresh.completionTokens;
    await store.put('judge', key, JSON.stringify(fresh));
    return fresh;
  };

  const [main, reask] = splitReask(opts.prompt);
  const progress = log.progress('judge', todo.length);
  const limit = pLimit(opts.concurrency);
  // After a failure no new pair starts (the command reports it; finished replies are safe in the cache).
  let failed = false;
  await Promise.all(
    todo.map(({ index, query, doc }) =>
      limit(async () => {
        if (failed) return;
        const text = passage(doc);
        const prompt = renderPrompt(main, { query: query.text, passage: text });
        const samples: number[] = [];
        let failures = 0;
        for (let s = 0; s < identity.samples; s++) {
          let grade: number | undefined;
          let previous: string | undefined;
          for (let attempt = 0; attempt <= identity.parseRetries && grade === undefined; attempt++) {
            // A re-ask quotes the unparsable reply and asks for the answer line alone: the same prompt again would
            // get the same reply from a deterministic (temperature 0) server.
            const asked = previous === undefined ? prompt : `${prompt}\n\n${renderPrompt(reask, { reply: previous })}`;
            const r = await reply(asked, { query: query.text, document: text, sample: s, attempt, previous: previous ?? null }).catch((err: unknown) => {
              failed = true;
              throw err;
            });
            grade = parseGrade(r.content);
            previous = r.content;
          }
          if (grade === undefined) failures++;
          else samples.push(grade);
        }
        const grade = majorityGrade(samples);
        slots[index] = {
          queryId: query.id,
          docId: doc.id,
          stratum: query.stratum,
          status: grade === undefined ? 'parse-failure' : 'judged',
          grade: grade ?? null,
          samples,
          parseFailures: failures,
        };
        progress.tick();
      }),
    ),
  );
  progress.done();
  const records = slots as JudgmentRecord[];
  return {
    records,
    counts: {
      pooled: pool.pairs.length,
      gold,
      judged: records.filter((r) => r.status === 'judged').length,
      parseFailures: records.filter((r) => r.status === 'parse-failure').length,
      skippedSensitive: records.filter((r) => r.status === 'skipped-sensitive').length,
      requests,
      cachedReplies,
    },
    tokens,
  };
}
