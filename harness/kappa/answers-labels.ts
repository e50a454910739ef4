import { readFile } from 'node:fs/promises';
import { InputError, InputProblems } from '../errors.js';
import { type AnswerSessionState, parseAnswerSession } from './answers-session.js';
import { answerKey } from './answers-source.js';
import { arrayElementLines } from './session.js';

/**
 * Hand labels of answers as files hold them: an answer kappa session (JSON) or an **answer labels file**, one
 * `system questionId correct` line per answer (whitespace-separated, `correct` 1 or 0, `#` comments), for labels
 * made elsewhere. Both `harness kappa --answers` and `answer.humanLabels:` read them through here.
 */

/** One answer's hand label, with the line it was read at. */
export interface AnswerLabelRow {
  readonly system: string;
  readonly questionId: string;
  readonly correct: 0 | 1;
  /** 1-based line in the file (a session: the item's line). */
  readonly line?: number;
  /** The labelled answer's identity, which a session records and a labels file does not. */
  readonly answerSha?: string;
  /** The question's stratum as the session recorded it. */
  readonly stratum?: string;
}

/** The labels of one file: a session's or a labels file's. */
export interface AnswerLabelRows {
  readonly kind: 'session' | 'file';
  readonly rows: readonly AnswerLabelRow[];
  /** Answers labelled in part: a session's skips and answers not reached yet. */
  readonly unlabelled: number;
  /**
   * A labels file's bad lines, each at its line, for the caller to report with its own checks of the good ones (so
   * one run names every mistake); a session's are thrown when it is read.
   */
  readonly problems: readonly InputError[];
}

export function throwProblems(problems: readonly InputError[]): void {
  if (problems.length === 1) throw problems[0] as InputError;
  if (problems.length > 1) throw new InputProblems(problems.slice(0, 50), { truncated: problems.length > 50 });
}

/** The lines of an answer labels file, every one checked: three fields, a label 1 or 0, each answer once; the bad ones as problems. */
export function parseAnswerLabelLines(file: string, text: string): { rows: AnswerLabelRow[]; problems: InputError[] } {
  const rows: AnswerLabelRow[] = [];
  const problems: InputError[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const n = i + 1;
    const f = line.split(/\s+/);
    if (f.length !== 3) return void problems.push(new InputError(file, n, 'not an answer label line: write system questionId correct (1 or 0)'));
    const [system, questionId, label] = f as [string, string, string];
    const key = answerKey(system, questionId);
    if (label !== '0' && label !== '1')
      problems.push(new InputError(file, n, `system ${system}, question ${questionId}: label ${JSON.stringify(label)} is not 1 (correct) or 0 (wrong)`));
    else if (seen.has(key)) problems.push(new InputError(file, n, `system ${system}, question ${questionId}: labelled twice (first at line ${seen.get(key)})`));
    else rows.push({ system, questionId, correct: label === '1' ? 1 : 0, line: n });
    if (!seen.has(key)) seen.set(key, n);
  });
  if (rows.length === 0 && problems.length === 0) throw new InputError(file, undefined, 'no labels');
  return { rows, problems };
}

/** A session's labelled answers (1 or 0; skips and answers not reached left out), each at its item's line. */
export function sessionRows(text: string, s: AnswerSessionState): AnswerLabelRow[] {
  const lines = arrayElementLines(text, 'items');
  return s.items.flatMap((it, i) => {
    const l = s.labels[i];
    if (l !== 0 && l !== 1) return [];
    const line = lines[i];
    return [
      { system: it.system, questionId: it.questionId, correct: l, answerSha: it.answerSha, stratum: it.stratum, ...(line === undefined ? {} : { line }) },
    ];
  });
}

/** The labels of a session or a labels file, told apart by their first character (a session is a JSON object). */
export async function readAnswerLabelRows(file: string, hint: string): Promise<AnswerLabelRows> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(file, undefined, `cannot be read (${err.code ?? err.message})`, { hint });
  });
  if (!text.trimStart().startsWith('{')) return { kind: 'file', ...parseAnswerLabelLines(file, text), unlabelled: 0 };
  const s = parseAnswerSession(file, text);
  const rows = sessionRows(text, s);
  return { kind: 'session', rows, unlabelled: s.items.length - rows.length, problems: [] };
}
