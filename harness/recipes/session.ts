import { ENGLISH_V1_STOP_WORDS } from '../../arms/bm25/english-stopwords.js';
import type { Document } from '../../evalset/types.js';
import { documentTimeMs } from './blend.js';

const MINUTE_MS = 60_000;

/** A run of one chat's messages without a pause of `gapMinutes` or more between consecutive ones. */
export interface Session {
  /** `<chat>/session-<n>`, n from 1 in time order within the chat. */
  readonly id: string;
  readonly chat: string;
  readonly messages: readonly Document[];
  readonly startMs: number;
  readonly endMs: number;
  /** Speakers (`metadata.speaker`, else `metadata.role`) in order of first appearance. */
  readonly participants: readonly string[];
}

/**
 * Splits messages into sessions, garbanzo's rule: per chat (`metadata.chat`, else `defaultChat`), messages in
 * time order (ties in corpus order: LoCoMo's turns of one session share its date), a new session whenever a
 * message comes `gapMinutes` (30) or more after the previous one. A message without a timestamp cannot be
 * placed and forms a session of its own.
 */
export function buildSessions(messages: readonly Document[], gapMinutes: number, defaultChat: string): Session[] {
  const chats = new Map<string, { doc: Document; t: number; i: number }[]>();
  messages.forEach((doc, i) => {
    const chat = typeof doc.metadata?.['chat'] === 'string' ? (doc.metadata['chat'] as string) : defaultChat;
    let list = chats.get(chat);
    if (!list) chats.set(chat, (list = []));
    list.push({ doc, t: documentTimeMs(doc), i });
  });
  const out: Session[] = [];
  for (const [chat, list] of chats) {
    const dated = list.filter((m) => !Number.isNaN(m.t)).sort((a, b) => a.t - b.t || a.i - b.i);
    const groups: { doc: Document; t: number }[][] = [];
    for (const m of dated) {
      const last = groups.at(-1);
      if (last && m.t - (last.at(-1) as { t: number }).t < gapMinutes * MINUTE_MS) last.push(m);
      else groups.push([m]);
    }
    for (const m of list) if (Number.isNaN(m.t)) groups.push([m]);
    groups.forEach((g, n) => {
      const participants: string[] = [];
      for (const { doc } of g) {
        const who = doc.metadata?.['speaker'] ?? doc.metadata?.['role'];
        if (typeof who === 'string' && !participants.includes(who)) participants.push(who);
      }
      out.push({
        id: `${chat}/session-${n + 1}`,
        chat,
        messages: g.map((m) => m.doc),
        startMs: (g[0] as { t: number }).t,
        endMs: (g.at(-1) as { t: number }).t,
        participants,
      });
    });
  }
  return out;
}

/** An extractive session summary: what garbanzo asks its LLM for, picked from the text instead. */
export interface SessionSummary {
  /** The most frequent content words (3+ characters, not stop words, not participants), most frequent first. */
  readonly topics: readonly string[];
  /** Sentences stating a decision or plan ("decided", "will", "going to", "plan to", "agreed", "let's"). */
  readonly decisions: readonly string[];
  /** Capitalised words and phrases not opening a sentence, most frequent first (participants excluded). */
  readonly entities: readonly string[];
  /** The sentences carrying most topic words, in their order in the session. */
  readonly keyPoints: readonly string[];
}

const SENTENCE = /[^.!?\n]+[.!?]*/g;
const DECISION = /\b(decided|decide|will|going to|gonna|plan(?:ning|ned)? to|agreed|let's|let us)\b/i;
const CAPITALISED = /\b\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)*/gu;

function top<T>(counts: Map<T, number>, n: number): T[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (String(a[0]) < String(b[0]) ? -1 : 1))
    .slice(0, n)
    .map(([k]) => k);
}

/** A speaker prefix such as "Caroline: " is not part of the message's sentences. */
function body(doc: Document): string {
  return doc.text.replace(/^[^:\n]{1,40}:\s+/, '');
}

/** Picks topics (5), decisions (3), entities (8) and key points (3) from a session's messages; see {@link SessionSummary}. */
export function extractiveSummary(session: Session): SessionSummary {
  const people = new Set(session.participants.map((p) => p.toLowerCase()));
  const sentences = session.messages.flatMap((m) => (body(m).match(SENTENCE) ?? []).map((s) => s.trim()).filter((s) => s.length > 0));
  const words = new Map<string, number>();
  const entities = new Map<string, number>();
  for (const s of sentences) {
    for (const w of s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
      if (w.length >= 3 && !ENGLISH_V1_STOP_WORDS.has(w) && !people.has(w)) words.set(w, (words.get(w) ?? 0) + 1);
    for (const m of s.matchAll(CAPITALISED)) {
      const name = m.index === 0 ? m[0].split(/\s+/).slice(1).join(' ') : m[0];
      if (name === '' || people.has(name.toLowerCase()) || ENGLISH_V1_STOP_WORDS.has(name.toLowerCase())) continue;
      entities.set(name, (entities.get(name) ?? 0) + 1);
    }
  }
  const topics = top(words, 5);
  const weight = (s: string) => (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => topics.includes(w)).length;
  const ranked = sentences.map((s, i) => ({ s, i, w: weight(s) })).sort((a, b) => b.w - a.w || a.i - b.i);
  const keyPoints = ranked
    .filter((x) => x.w > 0)
    .slice(0, 3)
    .sort((a, b) => a.i - b.i)
    .map((x) => x.s);
  return { topics, decisions: sentences.filter((s) => DECISION.test(s)).slice(0, 3), entities: top(entities, 8), keyPoints };
}

function isoMinute(ms: number): string {
  return Number.isNaN(ms) ? 'undated' : new Date(ms - new Date(ms).getTimezoneOffset() * MINUTE_MS).toISOString().slice(0, 16).replace('T', ' ');
}

/** The context header garbanzo prefixes to a session at write time: chat, time range, participants, topic tags. */
export function sessionHeader(session: Session, topics: readonly string[]): string {
  return `[chat: ${session.chat} | ${isoMinute(session.startMs)} to ${isoMinute(session.endMs)} | participants: ${session.participants.join(', ')} | topics: ${topics.join(', ')}]`;
}

/** The header prefixed to a query at search time: what a live system knows, its chat and who takes part. */
export function queryHeader(chat: string, participants: readonly string[]): string {
  return `[chat: ${chat} | participants: ${participants.join(', ')}]`;
}

/** A summary as indexed text, after its header. */
export function summaryText(s: SessionSummary): string {
  const parts = [`Topics: ${s.topics.join(', ')}.`];
  if (s.decisions.length > 0) parts.push(`Decisions: ${s.decisions.join(' ')}`);
  if (s.entities.length > 0) parts.push(`Entities: ${s.entities.join(', ')}.`);
  if (s.keyPoints.length > 0) parts.push(`Key points: ${s.keyPoints.join(' ')}`);
  return parts.join('\n');
}
