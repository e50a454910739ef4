/**
 * The v1 hybrid provider's LLM extraction stage, as pure parts (docs/recipes/v1.md): per session, a prompt
 * asking for standalone facts dated `[YYYY-MM-DD]` (relative dates resolved against the session's date), entities
 * and relationships in three XML sections; a strict parser of the reply; and the memory block that the chunker
 * then cuts, with each fact's place in it so a chunk maps back to the messages its facts came from.
 */
import type { Document } from '../../evalset/types.js';
import type { Session } from './session.js';

/** Changes whenever the prompt's wording does: part of every cache key, so old replies are never reused. */
export const EXTRACT_PROMPT_VERSION = 'v1-extract/v1';

/** Characters of one message shown to the model; longer messages are cut (the cut is marked). */
export const MAX_MESSAGE_CHARS = 2000;

function day(timestamp: string | undefined): string {
  return (timestamp === undefined ? undefined : /^\d{4}-\d{2}-\d{2}/.exec(timestamp)?.[0]) ?? 'unknown';
}

/**
 * The extraction prompt of one session: its date, its messages numbered from 1, and v1's three sections. Each
 * memory line ends with the numbers of the messages it came from: v1's prompt does not ask for them, but the
 * eval set's qrels grade messages, so a fact must say which ones it stands for (an assumption, labelled).
 */
export function extractionPrompt(session: Session): string {
  const lines = session.messages.map((m, i) => {
    const who = m.metadata?.['speaker'] ?? m.metadata?.['role'];
    const text = m.text.length > MAX_MESSAGE_CHARS ? `${m.text.slice(0, MAX_MESSAGE_CHARS)} [...]` : m.text;
    return `[${i + 1}] ${typeof who === 'string' && !text.startsWith(`${who}:`) ? `${who}: ` : ''}${text.replace(/\s+/g, ' ')}`;
  });
  return [
    'You extract long-term memories from one conversation session.',
    `Session date: ${day(session.messages[0]?.timestamp)}`,
    'Messages:',
    ...lines,
    'Answer with exactly three sections:',
    '<memories>: one standalone fact per line, starting with its date as [YYYY-MM-DD]; resolve relative dates',
    '("yesterday", "last week") against the session date; end each line with (messages: n, m), the numbers of',
    'the messages it comes from.',
    '<entities>: one per line, name|type|summary, type one of person, organization, location, object.',
    '<relationships>: one per line, source|relation|target|date (e.g. married_to, works_at, lives_in).',
    'Close each section with its end tag, e.g. </memories>.',
  ].join('\n');
}

/** One extracted fact: its text (date prefix included) and the 0-based positions of the messages it cites. */
export interface Memory {
  readonly text: string;
  readonly cites: readonly number[];
}

export interface Extraction {
  readonly memories: readonly Memory[];
  readonly entities: number;
  readonly relationships: number;
}

function section(reply: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'i').exec(reply);
  return m?.[1];
}

const CITES = /\s*\(messages?:\s*([\d,\s]+)\)\s*$/i;
const DATED = /^\[\d{4}-\d{2}-\d{2}\]\s+\S/;

/**
 * Parses a reply, or undefined when it is unusable: the `<memories>` section must be present and hold at least
 * one line `[YYYY-MM-DD] fact`. A citation naming no message of the session is dropped (the fact then stands
 * for the whole session); `<entities>` and `<relationships>` lines are counted when present.
 */
export function parseExtraction(reply: string, messages: number): Extraction | undefined {
  const body = section(reply, 'memories');
  if (body === undefined) return undefined;
  const memories: Memory[] = [];
  for (const raw of body.split('\n')) {
    const line = raw.trim().replace(/^[-*]\s+/, '');
    if (line === '') continue;
    if (!DATED.test(line)) return undefined;
    const m = CITES.exec(line);
    const cites = (m?.[1] ?? '')
      .split(/[,\s]+/)
      .filter((x) => x !== '')
      .map((x) => Number(x) - 1)
      .filter((i) => Number.isInteger(i) && i >= 0 && i < messages);
    memories.push({ text: m === null ? line : line.slice(0, m.index).trimEnd(), cites: [...new Set(cites)].sort((a, b) => a - b) });
  }
  if (memories.length === 0) return undefined;
  const count = (tag: string) => (section(reply, tag) ?? '').split('\n').filter((l) => l.trim().includes('|')).length;
  return { memories, entities: count('entities'), relationships: count('relationships') };
}

/**
 * A session's memories as the document the chunker cuts (one fact a line, timestamp the session's first
 * message's, so chunks get v1's "# Memories from" header) and, per fact, its [start, end) in the text and the
 * ids of the messages it stands for (all of the session's when it cites none).
 */
export function memoryBlock(
  session: Session,
  extraction: Extraction,
): { readonly doc: Document; readonly spans: readonly { readonly start: number; readonly end: number; readonly sources: readonly string[] }[] } {
  const all = session.messages.map((m) => m.id);
  const spans: { start: number; end: number; sources: string[] }[] = [];
  let text = '';
  for (const f of extraction.memories) {
    if (text !== '') text += '\n';
    spans.push({ start: text.length, end: text.length + f.text.length, sources: f.cites.length === 0 ? all : f.cites.map((i) => all[i] as string) });
    text += f.text;
  }
  const first = session.messages[0];
  const timestamp = first?.timestamp;
  const doc: Document = { id: `memories:${session.id}`, text, ...(timestamp === undefined ? {} : { timestamp }) };
  return { doc, spans };
}

/** The ids a chunk [start, end) of a memory block stands for: the sources of every fact it overlaps, in order. */
export function chunkSources(
  spans: readonly { readonly start: number; readonly end: number; readonly sources: readonly string[] }[],
  start: number,
  end: number,
): string[] {
  const out = new Set<string>();
  for (const s of spans) if (s.start < end && s.end > start) for (const id of s.sources) out.add(id);
  return [...out];
}
