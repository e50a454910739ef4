import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../cache/index.js';
import { InputError, InputProblems, UsageError } from '../errors.js';
import type { KappaItem } from './sample.js';

/** A hand label: a grade 0-3, `skip`, or null (not reached yet). */
export type HumanLabel = number | 'skip' | null;

/** The saved state of a labelling session: written after every key that changes it, so a crash loses nothing. */
export interface SessionState {
  readonly sessionVersion: 1;
  /** The judgments' qrels version: a session belongs to one judge, prompt and pool. */
  readonly qrelsVersion: string;
  readonly seed: number;
  /**
   * `query`: labels by query (every judged pair of each sampled query, query by query), so the labels also give
   * per-query measures; absent: a sample of pairs.
   */
  readonly by?: 'query';
  readonly items: readonly KappaItem[];
  readonly labels: HumanLabel[];
  /** The item shown next. `items.length` when every item has a label or a skip. */
  position: number;
}

export function newSession(qrelsVersion: string, seed: number, items: readonly KappaItem[], by?: 'query'): SessionState {
  return { sessionVersion: 1, qrelsVersion, seed, ...(by === undefined ? {} : { by }), items, labels: items.map(() => null), position: 0 };
}

/**
 * The session as JSON with one item and one label per line, so a hand edit is easy to make and a problem in
 * one can be reported at its line.
 */
export function sessionText(s: SessionState): string {
  const head = JSON.stringify({
    sessionVersion: s.sessionVersion,
    qrelsVersion: s.qrelsVersion,
    seed: s.seed,
    ...(s.by === undefined ? {} : { by: s.by }),
    position: s.position,
  });
  const list = (xs: readonly unknown[]) => (xs.length === 0 ? '[]' : `[\n${xs.map((x) => JSON.stringify(x)).join(',\n')}\n]`);
  return `${head.slice(0, -1)},\n"items":${list(s.items)},\n"labels":${list(s.labels)}\n}\n`;
}

export async function saveSession(file: string, s: SessionState): Promise<void> {
  await writeFileAtomic(file, sessionText(s));
}

/**
 * The 1-based line where each element of the top-level array `key` of a JSON object text starts, in order (a
 * session written on one line puts them all on line 1). Strings are skipped whole, so brackets in ids are fine.
 */
export function arrayElementLines(text: string, key: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let lastString = '';
  let keyOfValue = '';
  // 0: not reached yet; 1: inside the array, an element may start; 2: inside, after an element began; 3: done.
  let state = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\n') line++;
    if (/\s/.test(c)) continue;
    if (state === 1 && depth === 2 && c !== ']') {
      lines.push(line);
      state = 2;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) if (text[j] === '\\') j++;
      lastString = text.slice(i + 1, j);
      i = j;
    } else if (c === ':') keyOfValue = depth === 1 ? lastString : '';
    else if (c === '[' || c === '{') {
      depth++;
      if (c === '[' && depth === 2 && state === 0 && keyOfValue === key) state = 1;
      keyOfValue = '';
    } else if (c === ']' || c === '}') {
      if (depth === 2 && state !== 0 && state !== 3) state = 3;
      depth--;
    } else if (c === ',' && depth === 2 && state === 2) state = 1;
  }
  return lines;
}

/** What the session is checked against: its judgments' version and the stratum of every pair the judge graded. */
export interface SessionJudgments {
  readonly qrelsVersion: string;
  /** `queryId\tdocId` -> stratum, for every judged pair. */
  readonly judged: ReadonlyMap<string, string>;
}

/**
 * Every item and label of a session that is not what this harness writes, each at its `file:line`: a label
 * that is not a grade 0-3, `"skip"` or null, an item that is not a pair the judge graded, one whose stratum
 * differs from the judgments', or a pair listed twice (a sample never repeats a pair; a repeat would count its
 * label twice in kappa and in the PPI correction, so it is refused as a labels file refuses one). A hand edit is
 * reported, never dropped.
 */
function sessionProblems(file: string, text: string, s: SessionState, j: SessionJudgments): InputError[] {
  const problems: InputError[] = [];
  const itemLines = arrayElementLines(text, 'items');
  const labelLines = arrayElementLines(text, 'labels');
  const first = new Map<string, number>();
  s.items.forEach((it, i) => {
    const at = `items[${i}]`;
    if (it === null || typeof it !== 'object' || typeof it.queryId !== 'string' || typeof it.docId !== 'string' || typeof it.stratum !== 'string') {
      problems.push(new InputError(file, itemLines[i], `${at}: not a pair { queryId, docId, stratum }`));
      return;
    }
    const key = `${it.queryId}\t${it.docId}`;
    const stratum = j.judged.get(key);
    const seen = first.get(key);
    if (seen === undefined) first.set(key, i);
    if (seen !== undefined)
      problems.push(
        new InputError(
          file,
          itemLines[i],
          `${at}: query ${it.queryId}, document ${it.docId} is listed twice (first as items[${seen}]${itemLines[seen] === undefined ? '' : `, line ${itemLines[seen]}`}): remove one, with its label`,
        ),
      );
    else if (stratum === undefined)
      problems.push(new InputError(file, itemLines[i], `${at}: query ${it.queryId}, document ${it.docId} is not a pair the judge graded (edited?)`));
    else if (stratum !== it.stratum)
      problems.push(
        new InputError(
          file,
          itemLines[i],
          `${at}: query ${it.queryId}, document ${it.docId}: stratum "${it.stratum}", the judgments say "${stratum}" (edited?)`,
        ),
      );
  });
  s.labels.forEach((l, i) => {
    if (l === null || l === 'skip' || (typeof l === 'number' && Number.isInteger(l) && l >= 0 && l <= 3)) return;
    const it = s.items[i];
    const pair = it && typeof it === 'object' ? ` (query ${String(it.queryId)}, document ${String(it.docId)})` : '';
    problems.push(
      new InputError(file, labelLines[i], `labels[${i}]${pair}: ${JSON.stringify(l)} is not a label: write a grade 0-3, "skip", or null (not labelled yet)`),
    );
  });
  if (s.by !== undefined && s.by !== 'query')
    problems.push(new InputError(file, 1, `by ${JSON.stringify(s.by)}: write "query", or leave it out (a sample of pairs)`));
  if (!Number.isInteger(s.position) || s.position < 0 || s.position > s.items.length)
    problems.push(new InputError(file, 1, `position ${JSON.stringify(s.position)} is not a pair number 0-${s.items.length}`));
  return problems;
}

/** The saved session, or undefined when there is none; one of other judgments, or hand-edited wrong, is refused. */
export async function loadSession(file: string, j: SessionJudgments): Promise<SessionState | undefined> {
  if (!existsSync(file)) return undefined;
  const text = await readFile(file, 'utf8');
  let s: SessionState;
  try {
    s = JSON.parse(text) as SessionState;
  } catch (err) {
    throw new InputError(file, undefined, `not a kappa session (${(err as Error).message})`);
  }
  if (s === null || s.sessionVersion !== 1 || !Array.isArray(s.items) || !Array.isArray(s.labels) || s.labels.length !== s.items.length) {
    throw new InputError(file, undefined, 'not a kappa session written by this harness (sessionVersion 1, items and labels of one length)');
  }
  if (s.qrelsVersion !== j.qrelsVersion) {
    throw new UsageError(`${file} labels judgments of qrels version ${s.qrelsVersion}, not ${j.qrelsVersion}`, {
      hint: 'the judgments changed since this session started; label them in a new session (--session NEW_FILE)',
    });
  }
  const problems = sessionProblems(file, text, s, j);
  if (problems.length === 1) throw problems[0] as InputError;
  if (problems.length > 1) throw new InputProblems(problems.slice(0, 50), { truncated: problems.length > 50 });
  return s;
}

/** What a session shows for one item: query and document text, never the judge's grade. */
export interface ItemView {
  readonly queryText: string;
  readonly docText: string;
}

/**
 * What a labelling session talks to, for either kind of session: `Item` is what one label is of, `View` what is
 * shown of it, `State` what is saved.
 */
export interface LabelIo<Item, View, State> {
  /** Single keys, in order: a TTY in raw mode, or any stream (a test, a pipe). */
  readonly keys: AsyncIterable<string>;
  readonly write: (text: string) => void;
  readonly view: (item: Item) => View;
  readonly save: (s: State) => Promise<void>;
}

export type SessionIo = LabelIo<KappaItem, ItemView, SessionState>;

/** The part of a session's state the key loop moves through: relevance and answer sessions alike. */
export interface LabelProgress<L> {
  readonly items: readonly { readonly stratum: string }[];
  readonly labels: L[];
  position: number;
}

/** The line that heads the item shown: how far the session is, the item's stratum and a label already given. */
export function progressLine<L>(s: LabelProgress<L | null>, said: (label: L) => string): string {
  const item = s.items[s.position];
  const done = s.labels.filter((l) => l !== null).length;
  const current = s.labels[s.position];
  const yours = current === null || current === undefined ? '' : `; your label: ${said(current)}`;
  return `[${s.position + 1}/${s.items.length}] stratum ${item?.stratum}; ${done} labelled or skipped${yours}`;
}

/** What the key loop needs of one kind of session: its help line, the label a key gives, and how to show an item. */
export interface LabelKeys<L> {
  readonly help: string;
  /** The label a key gives, or undefined for a key that labels nothing (`b`, `q` among them). */
  readonly labelOf: (key: string) => L | undefined;
  readonly show: () => void;
  /** Said when the last item is labelled or skipped. */
  readonly finished: string;
}

/**
 * Runs a labelling loop from `s.position`: each label or skip is stored and saved before the next item shows, `b`
 * goes back one item (its label can be changed), `q` (or Ctrl-C, Ctrl-D) stops. Returns true when every item has
 * a label or a skip, false when stopped before. Other keys (newlines of a piped input among them) are ignored.
 */
export async function runLabelLoop<L, S extends LabelProgress<L | null>>(
  s: S,
  io: Pick<LabelIo<unknown, unknown, S>, 'keys' | 'write' | 'save'>,
  k: LabelKeys<L>,
): Promise<boolean> {
  if (s.position >= s.items.length) return true;
  io.write(`${k.help}\n`);
  k.show();
  for await (const key of io.keys) {
    if (key === 'q' || key === '\u0003' || key === '\u0004') {
      io.write('\nstopped; run the same command again to resume\n');
      return false;
    }
    const label = k.labelOf(key);
    if (key === 'b' || label !== undefined) {
      if (label === undefined) s.position = Math.max(0, s.position - 1);
      else s.labels[s.position++] = label;
      await io.save(s);
      if (s.position >= s.items.length) {
        io.write(`\n${k.finished}\n`);
        return true;
      }
      k.show();
    } else if (key.trim() !== '') io.write(`\n${k.help}\n> `);
  }
  io.write('\ninput ended; run the same command again to resume\n');
  return false;
}

const HELP = 'keys: 0-3 grade, s skip, b back, q quit (progress is saved after every key)';
const SCALE = '0 nothing to do with the query | 1 related, does not answer | 2 part of the answer, or one hop of several | 3 the answer';

function show(s: SessionState, io: SessionIo): void {
  const item = s.items[s.position] as KappaItem;
  const v = io.view(item);
  io.write(['', progressLine(s, String), `query ${item.queryId}: ${v.queryText}`, `memory ${item.docId}: ${v.docText}`, SCALE, '> '].join('\n'));
}

/** A grade 0-3 or `s` (skip); undefined for any other key. */
function gradeOf(key: string): Exclude<HumanLabel, null> | undefined {
  if (key === 's') return 'skip';
  return /^[0-3]$/.test(key) ? Number(key) : undefined;
}

/** The relevance labelling loop ({@link runLabelLoop}): grades 0-3 of judged pairs. */
export function runSession(s: SessionState, io: SessionIo): Promise<boolean> {
  return runLabelLoop(s, io, { help: HELP, labelOf: gradeOf, show: () => show(s, io), finished: 'every pair labelled or skipped' });
}

/** Single characters from a stream; on a TTY the caller puts it in raw mode first, so each key arrives alone. */
export async function* keysOf(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  for await (const chunk of stream) for (const ch of typeof chunk === 'string' ? chunk : chunk.toString('utf8')) yield ch;
}
