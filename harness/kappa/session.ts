import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../cache/index.js';
import { InputError, UsageError } from '../errors.js';
import type { KappaItem } from './sample.js';

/** A hand label: a grade 0-3, `skip`, or null (not reached yet). */
export type HumanLabel = number | 'skip' | null;

/** The saved state of a labelling session: written after every key that changes it, so a crash loses nothing. */
export interface SessionState {
  readonly sessionVersion: 1;
  /** The judgments' qrels version: a session belongs to one judge, prompt and pool. */
  readonly qrelsVersion: string;
  readonly seed: number;
  readonly items: readonly KappaItem[];
  readonly labels: HumanLabel[];
  /** The item shown next. `items.length` when every item has a label or a skip. */
  position: number;
}

export function newSession(qrelsVersion: string, seed: number, items: readonly KappaItem[]): SessionState {
  return { sessionVersion: 1, qrelsVersion, seed, items, labels: items.map(() => null), position: 0 };
}

export async function saveSession(file: string, s: SessionState): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(s)}\n`);
}

/** The saved session, or undefined when there is none; one of other judgments is refused. */
export async function loadSession(file: string, qrelsVersion: string): Promise<SessionState | undefined> {
  if (!existsSync(file)) return undefined;
  let s: SessionState;
  try {
    s = JSON.parse(await readFile(file, 'utf8')) as SessionState;
  } catch (err) {
    throw new InputError(file, undefined, `not a kappa session (${(err as Error).message})`);
  }
  if (s.sessionVersion !== 1 || !Array.isArray(s.items) || !Array.isArray(s.labels) || s.labels.length !== s.items.length) {
    throw new InputError(file, undefined, 'not a kappa session written by this harness');
  }
  if (s.qrelsVersion !== qrelsVersion) {
    throw new UsageError(`${file} labels judgments of qrels version ${s.qrelsVersion}, not ${qrelsVersion}`, {
      hint: 'the judgments changed since this session started; label them in a new session (--session NEW_FILE)',
    });
  }
  return s;
}

/** What a session shows for one item: query and document text, never the judge's grade. */
export interface ItemView {
  readonly queryText: string;
  readonly docText: string;
}

export interface SessionIo {
  /** Single keys, in order: a TTY in raw mode, or any stream (a test, a pipe). */
  readonly keys: AsyncIterable<string>;
  readonly write: (text: string) => void;
  readonly view: (item: KappaItem) => ItemView;
  readonly save: (s: SessionState) => Promise<void>;
}

const HELP = 'keys: 0-3 grade, s skip, b back, q quit (progress is saved after every key)';
const SCALE = '0 nothing to do with the query | 1 related, does not answer | 2 part of the answer, or one hop of several | 3 the answer';

function show(s: SessionState, io: SessionIo): void {
  const item = s.items[s.position] as KappaItem;
  const v = io.view(item);
  const done = s.labels.filter((l) => l !== null).length;
  const current = s.labels[s.position];
  io.write(
    [
      '',
      `[${s.position + 1}/${s.items.length}] stratum ${item.stratum}; ${done} labelled or skipped${current === null || current === undefined ? '' : `; your label: ${current}`}`,
      `query ${item.queryId}: ${v.queryText}`,
      `memory ${item.docId}: ${v.docText}`,
      SCALE,
      '> ',
    ].join('\n'),
  );
}

/**
 * Runs the labelling loop from `s.position`: each grade or skip is stored and the next item shown, `b` goes
 * back one item (its label can be changed), `q` (or Ctrl-C, Ctrl-D) stops. The state is saved after every
 * change. Returns true when every item has a label or a skip, false when stopped before. Other keys (newlines
 * of a piped input among them) are ignored.
 */
export async function runSession(s: SessionState, io: SessionIo): Promise<boolean> {
  if (s.position >= s.items.length) return true;
  io.write(`${HELP}\n`);
  show(s, io);
  for await (const key of io.keys) {
    if (key === 'q' || key === '\u0003' || key === '\u0004') {
      io.write('\nstopped; run the same command again to resume\n');
      return false;
    }
    if (key === 'b') {
      if (s.position > 0) s.position--;
      await io.save(s);
      show(s, io);
      continue;
    }
    if (key === 's' || /^[0-3]$/.test(key)) {
      s.labels[s.position] = key === 's' ? 'skip' : Number(key);
      s.position++;
      await io.save(s);
      if (s.position >= s.items.length) {
        io.write('\nevery pair labelled or skipped\n');
        return true;
      }
      show(s, io);
      continue;
    }
    if (key.trim() !== '') io.write(`\n${HELP}\n> `);
  }
  io.write('\ninput ended; run the same command again to resume\n');
  return false;
}

/** Single characters from a stream; on a TTY the caller puts it in raw mode first, so each key arrives alone. */
export async function* keysOf(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  for await (const chunk of stream) for (const ch of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) yield ch;
}
