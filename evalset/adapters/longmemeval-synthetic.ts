import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { failWrite } from '../../harness/cache/index.js';
import { createRng, type Rng } from '../../harness/stats/rng.js';

/**
 * Synthetic LongMemEval files: the official schema (`question_id` ... `answer_session_ids`, `has_answer` turns,
 * `_abs` questions, filler sessions shared between haystacks as longmemeval_s/_m share theirs) with invented text,
 * of a chosen size, the same bytes for the same seed and options. They stand in for LongMemEval-M (2.7 GB) in
 * the tests (a few MB) and the bench (600 MB); nothing in them is LongMemEval's data.
 */
export interface SyntheticLongMemEvalOptions {
  /** Questions are added until the file reaches this many bytes (the last one may pass it). */
  readonly bytes: number;
  readonly seed: number;
  /** Sessions in each haystack (LongMemEval-M has about 500; default 40). */
  readonly sessionsPerQuestion?: number;
  /** How many distinct filler sessions the haystacks share (default 200; 0: none shared). */
  readonly sharedPool?: number;
}

/** What a generator wrote, to check a loader against. */
export interface SyntheticLongMemEvalCounts {
  readonly bytes: number;
  readonly questions: number;
  /** Questions whose id ends in `_abs`. */
  readonly abstention: number;
  /** Haystack entries over all questions (a shared session counts once per haystack it is in). */
  readonly haystackSessions: number;
  /** Turns over all haystack entries. */
  readonly turns: number;
  /** User turns over the haystack entries of the questions that are not `_abs`. */
  readonly userTurnsKept: number;
  /** Distinct session ids in the haystacks of the questions that are not `_abs`. */
  readonly distinctSessionsKept: number;
}

const TYPES = ['single-session-user', 'single-session-assistant', 'single-session-preference', 'temporal-reasoning', 'knowledge-update', 'multi-session'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'shi', 'pe', 'da', 'gu', 'zen', 'bo', 'fi', 'lan', 'tor'];
/** Text JSON must escape or that is outside one UTF-16 unit, so a streamed parse is tested on it: quotes, backslashes, controls, accents, emoji. */
const ODD = ['"quoted"', 'back\\slash', 'tab\there', 'line\nbreak', 'café', 'naïve', '😀', '日本語', '\u2028'];

function word(rng: Rng): string {
  const n = 1 + rng.nextInt(3);
  let w = '';
  for (let i = 0; i < n; i++) w += SYLLABLES[rng.nextInt(SYLLABLES.length)];
  return w;
}

function sentence(rng: Rng, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rng.nextInt(40) === 0 ? ODD[rng.nextInt(ODD.length)]! : word(rng));
  return `${out.join(' ')}.`;
}

type Turn = { role: 'user' | 'assistant'; content: string; has_answer?: boolean };

/** A session of 4-14 turns alternating user/assistant; with `answerAt`, that user turn carries `has_answer`. */
function session(rng: Rng, answerAt?: number): Turn[] {
  const n = 4 + rng.nextInt(11);
  const turns: Turn[] = [];
  for (let j = 0; j < n; j++) {
    const role = j % 2 === 0 ? 'user' : 'assistant';
    const t: Turn = { role, content: sentence(rng, role === 'user' ? 8 + rng.nextInt(30) : 20 + rng.nextInt(60)) };
    if (answerAt !== undefined) t.has_answer = j === answerAt;
    turns.push(t);
  }
  return turns;
}

/** "2023/05/25 (Thu) 20:21", the official form, from minutes after 2023-01-01 00:00 UTC. */
function lmeDate(minutes: number): string {
  const d = new Date(Date.UTC(2023, 0, 1) + minutes * 60_000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} (${DAYS[d.getUTCDay()]}) ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

interface Haystack {
  ids: string[];
  dates: string[];
  sessions: Turn[][];
  answers: string[];
}

/** One question's haystack: unique filler, shared filler (one slot in five when there is a pool) and 1-3 evidence sessions. */
function haystack(rng: Rng, qi: number, size: number, pool: readonly Turn[][]): Haystack {
  const answerCount = 1 + rng.nextInt(3);
  const answerSlots = new Set<number>();
  while (answerSlots.size < Math.min(answerCount, size)) answerSlots.add(rng.nextInt(size));
  const h: Haystack = { ids: [], dates: [], sessions: [], answers: [] };
  let minute = rng.nextInt(60 * 24 * 30);
  const usedShared = new Set<number>();
  for (let si = 0; si < size; si++) {
    minute += 30 + rng.nextInt(60 * 24 * 3);
    h.dates.push(lmeDate(minute));
    if (answerSlots.has(si)) {
      const id = `answer_${qi.toString(16).padStart(8, '0')}_${h.answers.length + 1}`;
      h.answers.push(id);
      h.ids.push(id);
      const turns = session(rng, 0);
      h.sessions.push(turns);
      continue;
    }
    const k = pool.length > 0 && rng.nextInt(5) === 0 ? rng.nextInt(pool.length) : -1;
    if (k >= 0 && !usedShared.has(k)) {
      usedShared.add(k);
      h.ids.push(`shared_${k}`);
      h.sessions.push(pool[k]!);
    } else {
      h.ids.push(`filler_${qi}_${si}`);
      h.sessions.push(session(rng));
    }
  }
  return h;
}

/**
 * Writes a synthetic LongMemEval file to `path` (see {@link SyntheticLongMemEvalOptions}), one question at a time
 * so a 600 MB file never sits in memory, and returns what it wrote.
 */
export async function writeSyntheticLongMemEval(path: string, opts: SyntheticLongMemEvalOptions): Promise<SyntheticLongMemEvalCounts> {
  const rng = createRng(opts.seed);
  const size = opts.sessionsPerQuestion ?? 40;
  const pool = Array.from({ length: opts.sharedPool ?? 200 }, () => session(rng));
  const out = createWriteStream(path);
  const closed = once(out, 'close');
  let error: unknown;
  out.on('error', (e) => {
    error = e;
  });
  const write = async (text: string) => {
    if (error !== undefined) failWrite(path, error);
    if (!out.write(text)) await Promise.race([once(out, 'drain'), closed]);
  };
  const counts = { bytes: 0, questions: 0, abstention: 0, haystackSessions: 0, turns: 0, userTurnsKept: 0, distinctSessionsKept: 0 };
  const distinct = new Set<string>();
  await write('[');
  counts.bytes = 1;
  while (counts.bytes < opts.bytes || counts.questions === 0) {
    const item = question(rng, counts.questions, size, pool);
    const abs = item.question_id.endsWith('_abs');
    counts.abstention += abs ? 1 : 0;
    counts.haystackSessions += item.haystack_session_ids.length;
    for (const [si, s] of item.haystack_sessions.entries()) {
      counts.turns += s.length;
      if (abs) continue;
      counts.userTurnsKept += s.filter((t) => t.role === 'user').length;
      distinct.add(item.haystack_session_ids[si]!);
    }
    const text = `${counts.questions === 0 ? '' : ', '}${JSON.stringify(item)}`;
    counts.questions += 1;
    counts.bytes += Buffer.byteLength(text);
    await write(text);
  }
  await write(']\n');
  counts.bytes += 2;
  out.end();
  await closed;
  if (error !== undefined) failWrite(path, error);
  return { ...counts, distinctSessionsKept: distinct.size };
}

function question(rng: Rng, qi: number, size: number, pool: readonly Turn[][]) {
  const type = TYPES[qi % TYPES.length]!;
  const h = haystack(rng, qi, size, pool);
  return {
    question_id: `${qi.toString(16).padStart(8, '0')}${qi % 17 === 16 ? '_abs' : ''}`,
    question_type: type,
    question: sentence(rng, 6 + rng.nextInt(10)).replace(/\.$/, '?'),
    answer: rng.nextInt(4) === 0 ? 3 + rng.nextInt(20) : sentence(rng, 3),
    question_date: lmeDate(60 * 24 * 400 + qi),
    haystack_dates: h.dates,
    haystack_session_ids: h.ids,
    haystack_sessions: h.sessions,
    answer_session_ids: h.answers,
  };
}
