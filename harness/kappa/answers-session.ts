import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../cache/index.js';
import { InputError, InputProblems, UsageError } from '../errors.js';
import { type AnswerKappaItem, answerKey, type GradedAnswer } from './answers-source.js';
import { arrayElementLines, type LabelIo, progressLine, runLabelLoop } from './session.js';

/** A hand label of one answer: 1 correct, 0 wrong, `skip`, or null (not reached yet). */
export type AnswerHumanLabel = 0 | 1 | 'skip' | null;

/**
 * The saved state of an answer kappa session (`harness kappa --answers`): written after every key that changes it
 * (atomically: a kill -9 leaves the last state whole), so it resumes where it stopped.
 */
export interface AnswerSessionState {
  readonly sessionVersion: 1;
  /** Tells an answer session from a relevance one (which has none). */
  readonly kind: 'answers';
  /** The labelled report's grades version ({@link AnsweredReport.gradesVersion}): a session checks one judge's grades. */
  readonly gradesVersion: string;
  readonly seed: number;
  readonly items: readonly AnswerKappaItem[];
  readonly labels: AnswerHumanLabel[];
  /** The item shown next; `items.length` when every item has a label or a skip. */
  position: number;
}

export function newAnswerSession(gradesVersion: string, seed: number, items: readonly AnswerKappaItem[]): AnswerSessionState {
  return { sessionVersion: 1, kind: 'answers', gradesVersion, seed, items, labels: items.map(() => null), position: 0 };
}

/** The session as JSON with one item and one label per line, so a hand edit is easy and a problem has a line. */
export function answerSessionText(s: AnswerSessionState): string {
  const head = JSON.stringify({ sessionVersion: s.sessionVersion, kind: s.kind, gradesVersion: s.gradesVersion, seed: s.seed, position: s.position });
  const list = (xs: readonly unknown[]) => (xs.length === 0 ? '[]' : `[\n${xs.map((x) => JSON.stringify(x)).join(',\n')}\n]`);
  return `${head.slice(0, -1)},\n"items":${list(s.items)},\n"labels":${list(s.labels)}\n}\n`;
}

export async function saveAnswerSession(file: string, s: AnswerSessionState): Promise<void> {
  await writeFileAtomic(file, answerSessionText(s));
}

const isItem = (it: unknown): it is AnswerKappaItem =>
  it !== null &&
  typeof it === 'object' &&
  ['questionId', 'system', 'stratum', 'answerSha'].every((k) => typeof (it as Record<string, unknown>)[k] === 'string');

/** Every item and label of a session that is not what this harness writes, at its `file:line`; a repeat included. */
function structureProblems(file: string, text: string, s: AnswerSessionState): InputError[] {
  const problems: InputError[] = [];
  const itemLines = arrayElementLines(text, 'items');
  const labelLines = arrayElementLines(text, 'labels');
  const first = new Map<string, number>();
  s.items.forEach((it, i) => {
    if (!isItem(it)) return void problems.push(new InputError(file, itemLines[i], `items[${i}]: not an answer { questionId, system, stratum, answerSha }`));
    const key = answerKey(it.system, it.questionId);
    const seen = first.get(key);
    if (seen === undefined) return void first.set(key, i);
    // A repeat would count its label twice in kappa and in the PPI correction; which label holds cannot be guessed.
    problems.push(
      new InputError(
        file,
        itemLines[i],
        `items[${i}]: system ${it.system}, question ${it.questionId} is listed twice (first as items[${seen}]${itemLines[seen] === undefined ? '' : `, line ${itemLines[seen]}`}): remove one, with its label`,
      ),
    );
  });
  s.labels.forEach((l, i) => {
    if (l === null || l === 'skip' || l === 0 || l === 1) return;
    problems.push(new InputError(file, labelLines[i], `labels[${i}]: ${JSON.stringify(l)} is not a label: write 1 (correct), 0 (wrong), "skip", or null`));
  });
  if (!Number.isInteger(s.position) || s.position < 0 || s.position > s.items.length)
    problems.push(new InputError(file, 1, `position ${JSON.stringify(s.position)} is not an answer number 0-${s.items.length}`));
  return problems;
}

function throwAll(problems: readonly InputError[]): void {
  if (problems.length === 1) throw problems[0] as InputError;
  if (problems.length > 1) throw new InputProblems(problems.slice(0, 50), { truncated: problems.length > 50 });
}

/**
 * An answer session's text read and checked as this harness writes it: a relevance session or anything else is
 * refused, every bad item or label reported at its line (exit 2), never dropped.
 */
export function parseAnswerSession(file: string, text: string): AnswerSessionState {
  let s: AnswerSessionState;
  try {
    s = JSON.parse(text) as AnswerSessionState;
  } catch (err) {
    throw new InputError(file, undefined, `not a kappa session (${(err as Error).message})`);
  }
  if (
    s === null ||
    typeof s !== 'object' ||
    s.sessionVersion !== 1 ||
    !Array.isArray(s.items) ||
    !Array.isArray(s.labels) ||
    s.labels.length !== s.items.length
  )
    throw new InputError(file, undefined, 'not a kappa session written by this harness (sessionVersion 1, items and labels of one length)');
  if (s.kind !== 'answers')
    throw new InputError(file, undefined, 'a kappa session of relevance grades (judged pairs), not of answers', {
      hint: 'answer labels come from harness kappa --answers REPORT_DIR --session FILE',
    });
  throwAll(structureProblems(file, text, s));
  return s;
}

/** Items that are not a labellable answer of the report, or whose answer or stratum differs from it (edited?). */
function reportProblems(file: string, text: string, s: AnswerSessionState, answers: ReadonlyMap<string, GradedAnswer>): InputError[] {
  const lines = arrayElementLines(text, 'items');
  return s.items.flatMap((it, i) => {
    const a = answers.get(answerKey(it.system, it.questionId));
    const at = `items[${i}]: system ${it.system}, question ${it.questionId}`;
    if (a === undefined) return [new InputError(file, lines[i], `${at} is not a graded answer of the report (edited?)`)];
    if (a.answerSha !== it.answerSha) return [new InputError(file, lines[i], `${at}: the report's answer is not the one labelled (edited?)`)];
    if (a.stratum !== it.stratum) return [new InputError(file, lines[i], `${at}: stratum "${it.stratum}", the report says "${a.stratum}" (edited?)`)];
    return [];
  });
}

/**
 * The saved session of a report, or undefined when there is none. One made on other grades (another report, or the
 * same study graded by another judge, prompt or answers) is refused, as a relevance session of another Qrels
 * version is: its labels would be compared with grades they never saw.
 */
export async function loadAnswerSession(
  file: string,
  report: { readonly gradesVersion: string; readonly answers: readonly GradedAnswer[] },
): Promise<AnswerSessionState | undefined> {
  if (!existsSync(file)) return undefined;
  const text = await readFile(file, 'utf8');
  const s = parseAnswerSession(file, text);
  if (s.gradesVersion !== report.gradesVersion)
    throw new UsageError(`${file} labels answers of grades version ${s.gradesVersion}, not ${report.gradesVersion} (this report's)`, {
      hint: 'the report was made again with other answers or another judge since this session started; label it in a new session (--session NEW_FILE)',
    });
  throwAll(reportProblems(file, text, s, new Map(report.answers.map((a) => [answerKey(a.system, a.questionId), a] as const))));
  return s;
}

/** What a session shows of one answer: the question, its gold answer and the answer; never the grade or the system. */
export interface AnswerView {
  readonly question: string;
  readonly gold: string;
  readonly answer: string;
}

export type AnswerSessionIo = LabelIo<AnswerKappaItem, AnswerView, AnswerSessionState>;

const HELP = 'keys: 1 or c correct, 0 or w wrong, s skip, b back, q quit (progress is saved after every key)';
const RULE = 'correct: the answer says what the gold answer says (other words are fine); wrong: it does not, or hedges between candidates';

function show(s: AnswerSessionState, io: AnswerSessionIo): void {
  const item = s.items[s.position] as AnswerKappaItem;
  const v = io.view(item);
  const said = (l: Exclude<AnswerHumanLabel, null>) => (l === 'skip' ? 'skip' : l === 1 ? 'correct' : 'wrong');
  io.write(['', progressLine(s, said), `question ${item.questionId}: ${v.question}`, `gold answer: ${v.gold}`, `answer: ${v.answer}`, RULE, '> '].join('\n'));
}

/** The label a key gives, or undefined for a key that labels nothing. */
function labelOf(key: string): Exclude<AnswerHumanLabel, null> | undefined {
  if (key === '1' || key === 'c') return 1;
  if (key === '0' || key === 'w') return 0;
  return key === 's' ? 'skip' : undefined;
}

/**
 * The answer labelling loop ({@link runLabelLoop}): each label or skip is saved before the next answer shows. True
 * when every answer has a label or a skip, false when stopped before.
 */
export function runAnswerSession(s: AnswerSessionState, io: AnswerSessionIo): Promise<boolean> {
  return runLabelLoop(s, io, { help: HELP, labelOf, show: () => show(s, io), finished: 'every answer labelled or skipped' });
}
