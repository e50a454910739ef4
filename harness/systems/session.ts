import { z } from 'zod';
import type { Document, JsonValue, Query } from '../../evalset/types.js';
import { HarnessError } from '../errors.js';
import { blendScores, contentTokens, documentTimeMs, GARBANZO_BLEND, queryTimeMs, tokenOverlap } from '../recipes/blend.js';
import { buildSessions, extractiveSummary, queryHeader, type Session, sessionHeader, summaryText } from '../recipes/session.js';
import { parseNodeParams, shownParams } from './node-params.js';
import type { NodeKind, ScopeData, ScopeResults, ScopeRun, SystemInstance } from './types.js';
import { bindWrappedArm, derivedScope, wrappedArmSchema } from './wrapped.js';

/** Bump when sessions, summaries, the blend or the mapping to messages change for the same params. */
const SESSION_VERSION = 1;

/**
 * Orders the messages of a retrieved session among themselves without moving the session: each gets the
 * session's score plus this much times its query-word overlap (in [0, 1]).
 */
const MEMBER_TIEBREAK = 1e-3;

const blendSchema = z
  .object({
    base: z.number().min(0).default(GARBANZO_BLEND.base),
    recency: z.number().min(0).default(GARBANZO_BLEND.recency),
    overlap: z.number().min(0).default(GARBANZO_BLEND.overlap),
    halfLifeHours: z.number().positive().default(GARBANZO_BLEND.halfLifeHours),
    sessionBonus: z.number().positive().default(1.25),
    windowPenalty: z.number().min(0).default(0.5),
  })
  .strict();

const sessionParams = z
  .object({
    /** The arm that indexes the messages and the session summaries together. */
    arm: wrappedArmSchema,
    gapMinutes: z.number().positive().default(30),
    /** Sessions with fewer messages get no summary (their messages stay searchable). */
    minMessages: z.number().int().min(1).default(4),
    /** Session hits kept per query, best first; null: all. */
    maxSessions: z.number().int().min(0).nullable().default(3),
    /**
     * `joint`: one index over messages and summaries, one search per query (worlddb's lanes over Turn and Summary
     * nodes). `separate`: message search and session search on their own indexes, merged by the blend (garbanzo:
     * its message vectors and session vectors are two tables).
     */
    search: z.enum(['joint', 'separate']).default('joint'),
    /** Prefix the context header to each summary (write time) and to each query of the session search (query time). */
    header: z.boolean().default(true),
    /** `search: separate`: prefix the query's header to the message search too (garbanzo puts it on session search only). */
    messageHeader: z.boolean().default(false),
    /** The garbanzo reranking blend, or false for the wrapped arm's scores as they are. */
    blend: z.union([blendSchema, z.literal(false)]).default(blendSchema.parse({})),
    /** The blend's recency weight, overriding `blend.recency`; top-level so a grid can vary it. */
    recency: z.number().min(0).optional(),
    /** Hits the wrapped arm returns per query (per search) before merging; default 4 x topK. */
    fetch: z.number().int().positive().optional(),
  })
  .strict()
  .refine((p) => p.search === 'separate' || !p.messageHeader, {
    path: ['messageHeader'],
    message: 'a joint search has one query for messages and summaries; set search: separate to head message search apart',
  })
  .refine((p) => p.recency === undefined || p.blend !== false, { path: ['recency'], message: 'recency weights the blend; remove it or the blend: false' })
  .transform(({ recency, ...p }) => (recency === undefined || p.blend === false ? p : { ...p, blend: { ...p.blend, recency } }));

interface SummaryDoc {
  readonly session: Session;
  readonly doc: Document;
}

/**
 * `session`: garbanzo's session memory as a corpus transform (docs/adr/0024-reference-recipes.md). Messages are
 * split into sessions per chat at 30 minutes of inactivity; each session of 4+ messages gets an extractive
 * summary (topics, decisions, entities, key points) headed by its context header; the wrapped arm indexes
 * messages and summaries together. Per query, message and session hits are merged by the garbanzo blend (base
 * relevance, 72 h recency decay, query-word overlap; x1.25 for a session hit, at most 3 sessions, x0.5 for a
 * message inside a kept session), and each kept session stands for its messages, so the run is over the eval
 * set's own documents.
 */
export const sessionNode: NodeKind = {
  summary: 'sessions at 30 min of inactivity with extractive summaries, indexed with the messages by a wrapped arm; garbanzo blend',
  arity: { min: 0, max: 0 },
  params: sessionParams,
  bind({ params, topK }) {
    const r = parseNodeParams(sessionParams, params);
    if ('problems' in r) return r;
    const p = r.data;
    const inner = bindWrappedArm(p.arm, topK);
    if ('problems' in inner) return inner;
    const own = {
      node: 'session',
      v: SESSION_VERSION,
      gapMinutes: p.gapMinutes,
      minMessages: p.minMessages,
      maxSessions: p.maxSessions,
      header: p.header,
      blend: p.blend,
      // Joint searches without a message header keep the identity they had before these params.
      ...(p.search === 'joint' ? {} : { search: p.search, messageHeader: p.messageHeader }),
    };
    return {
      node: {
        kind: `session(${inner.node.kind})`,
        params: shownParams({ ...p, arm: { kind: p.arm.kind, params: inner.node.params } }),
        fingerprint: { ...own, fetch: p.fetch ?? null, arm: inner.node.fingerprint } as JsonValue,
        // The blend's terms are all >= 0; without it, scores are the wrapped arm's (plus a tie-break >= 0).
        theoreticalMinScore: p.blend === false ? inner.node.theoreticalMinScore : 0,
        sendsTextOffMachine: inner.node.sendsTextOffMachine,
        create: (ctx) => sessionInstance(p, own, inner.node.create(ctx)),
      },
    };
  },
};

type SessionParams = z.output<typeof sessionParams>;
type Blend = Exclude<SessionParams['blend'], false>;

function sessionInstance(p: SessionParams, own: JsonValue, wrapped: SystemInstance): SystemInstance {
  return {
    async runScope(scope, _inputs, k) {
      const chat = scope.scope ?? 'all';
      const sessions = buildSessions(scope.documents, p.gapMinutes, chat);
      const summaries = sessionSummaries(sessions, scope.documents, p);
      const participants = [...new Set(sessions.flatMap((s) => s.participants))];
      const prefix = queryHeader(chat, participants);
      const headed = scope.queries.map((q) => ({ ...q, text: `${prefix}\n${q.text}` }));
      const summaryDocs = [...summaries.values()].map((s) => s.doc);
      const corpus = [...scope.documents, ...summaryDocs];
      const fetch = p.fetch ?? 4 * k;
      const run =
        p.search === 'joint'
          ? await wrapped.runScope(derivedScope(scope, corpus, own, p.header ? headed : scope.queries), [], fetch)
          : await separateSearch(wrapped, { scope, own, fetch, summaryDocs }, p.messageHeader ? headed : scope.queries, p.header ? headed : scope.queries);
      const rank = queryRanker(p, scope.documents, corpus, sessions, summaries);
      const results: ScopeResults = {};
      for (const q of scope.queries) results[q.id] = rank(q, run.results[q.id] ?? [], k);
      return { ...run, indexStats: { ...run.indexStats, sessions: sessions.length, summaries: summaries.size }, results };
    },
    close: async () => wrapped.close?.(),
  };
}

/**
 * garbanzo's two retrievals: the messages searched with `messageQueries`, the summaries on an index of their own
 * with `sessionQueries`; each query's hits of both, best first, as one run the blend then merges. The wrapped
 * arm's scores must be comparable across the two (a cosine is; BM25's depend on each index's statistics).
 */
async function separateSearch(
  wrapped: SystemInstance,
  s: { readonly scope: ScopeData; readonly own: JsonValue; readonly fetch: number; readonly summaryDocs: readonly Document[] },
  messageQueries: readonly Query[],
  sessionQueries: readonly Query[],
): Promise<ScopeRun> {
  const messages = await wrapped.runScope(derivedScope(s.scope, s.scope.documents, { ...(s.own as object), part: 'messages' }, messageQueries), [], s.fetch);
  if (s.summaryDocs.length === 0) return messages;
  const sessions = await wrapped.runScope(derivedScope(s.scope, s.summaryDocs, { ...(s.own as object), part: 'sessions' }, sessionQueries), [], s.fetch);
  const results: ScopeResults = {};
  for (const q of s.scope.queries)
    results[q.id] = [...(messages.results[q.id] ?? []), ...(sessions.results[q.id] ?? [])].sort(
      (a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0),
    );
  const queryMs: Record<string, number> = {};
  for (const q of s.scope.queries) queryMs[q.id] = (messages.queryMs[q.id] ?? 0) + (sessions.queryMs[q.id] ?? 0);
  return {
    indexStats: { ...messages.indexStats, sessionIndexDocuments: s.summaryDocs.length },
    indexMs: messages.indexMs + sessions.indexMs,
    searchMs: messages.searchMs + sessions.searchMs,
    queryMs,
    results,
  };
}

/** Summary id -> the summary document of each session with `minMessages` or more, headed when `header` is set. */
function sessionSummaries(sessions: readonly Session[], documents: readonly Document[], p: SessionParams): Map<string, SummaryDoc> {
  const ids = new Set(documents.map((d) => d.id));
  const summaries = new Map<string, SummaryDoc>();
  for (const s of sessions) {
    if (s.messages.length < p.minMessages) continue;
    const sum = extractiveSummary(s);
    const id = `summary:${s.id}`;
    if (ids.has(id)) throw new HarnessError(`session: a document of this eval set already has the id "${id}" a summary needs`);
    const text = p.header ? `${sessionHeader(s, sum.topics)}\n${summaryText(sum)}` : summaryText(sum);
    const last = s.messages.at(-1)?.timestamp;
    summaries.set(id, { session: s, doc: { id, text, ...(last === undefined ? {} : { timestamp: last }) } });
  }
  return summaries;
}

/**
 * One query's Run from the wrapped arm's message and summary hits: scores blended (a session hit with its bonus),
 * the best `maxSessions` session hits standing for their messages, a message hit inside a kept session penalised.
 */
function queryRanker(
  p: SessionParams,
  documents: readonly Document[],
  corpus: readonly Document[],
  sessions: readonly Session[],
  summaries: ReadonlyMap<string, SummaryDoc>,
): (q: Query, hits: readonly [string, number][], k: number) => [string, number][] {
  const sessionOf = new Map<string, string>();
  for (const s of sessions) for (const m of s.messages) sessionOf.set(m.id, s.id);
  const byId = new Map(corpus.map((d) => [d.id, d] as const));
  const tokensOf = new Map<string, Set<string>>();
  const tokens = (id: string) => {
    let t = tokensOf.get(id);
    if (!t) tokensOf.set(id, (t = contentTokens((byId.get(id) as Document).text)));
    return t;
  };
  return (q, hits, k) => {
    const qTokens = contentTokens(q.text);
    const blend = p.blend;
    const scores =
      blend === false ? Float64Array.from(hits, ([, s]) => s) : blendedScores(blend, hits, qTokens, queryTimeMs(q, documents), { byId, tokens, summaries });
    const sessionHits = hits
      .map(([id], i) => ({ id, score: scores[i] as number }))
      .filter((h) => summaries.has(h.id))
      .sort((a, b) => b.score - a.score)
      .slice(0, p.maxSessions ?? undefined);
    const kept = new Set(sessionHits.map((h) => (summaries.get(h.id) as SummaryDoc).session.id));
    const out = new Map<string, number>();
    const offer = (id: string, s: number) => {
      const prev = out.get(id);
      if (prev === undefined || s > prev) out.set(id, s);
    };
    hits.forEach(([id], i) => {
      if (summaries.has(id)) return;
      const inWindow = kept.has(sessionOf.get(id) ?? '');
      offer(id, blend !== false && inWindow ? (scores[i] as number) * blend.windowPenalty : (scores[i] as number));
    });
    for (const h of sessionHits)
      for (const m of (summaries.get(h.id) as SummaryDoc).session.messages) offer(m.id, h.score + MEMBER_TIEBREAK * tokenOverlap(qTokens, tokens(m.id)));
    return [...out].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0)).slice(0, k);
  };
}

/** The garbanzo blend of one query's hits, a session hit's multiplied by the session bonus. */
function blendedScores(
  blend: Blend,
  hits: readonly [string, number][],
  qTokens: ReadonlySet<string>,
  qMs: number,
  docs: {
    readonly byId: ReadonlyMap<string, Document>;
    readonly tokens: (id: string) => ReadonlySet<string>;
    readonly summaries: ReadonlyMap<string, SummaryDoc>;
  },
): Float64Array {
  const scores = blendScores(
    hits.map(([id, score]) => ({ score, timeMs: documentTimeMs(docs.byId.get(id) as Document), tokens: docs.tokens(id) })),
    qTokens,
    qMs,
    blend,
  );
  hits.forEach(([id], i) => {
    if (docs.summaries.has(id)) scores[i] = (scores[i] as number) * blend.sessionBonus;
  });
  return scores;
}
