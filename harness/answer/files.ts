/**
 * Answers files: the answers (and, where recorded, the grades) another tool produced, read as rows (AnswerRow,
 * in types.ts) that the answer stage maps onto an eval set's questions (map-rows.ts) instead of asking a reader
 * (docs/answers-files.md).
 *
 * - `mem0`: mem0's LoCoMo evaluation JSON, keyed by conversation index (mem0.ts);
 * - `longmemeval`: LongMemEval's hypothesis JSONL, with its judged `.eval-results-*` log (longmemeval-hypotheses.ts);
 * - `jsonl`: the workbench's own, one answer per line (below).
 */
import { type JsonObject, Problems, readJsonl, stringField } from '../../evalset/lines.js';
import { InputError, UsageError } from '../errors.js';
import { readLongMemEvalHypotheses } from './longmemeval-hypotheses.js';
import { readMem0File } from './mem0.js';
import type { AnswerRow, AnswersFileFormat, RecordedGrade } from './types.js';

export { type Hypothesis, writeHypotheses } from './longmemeval-hypotheses.js';
export type { AnswerRow, AnswersFileFormat, RecordedGrade } from './types.js';

/** The formats readAnswersFile reads, for messages and config checks. */
export const ANSWERS_FILE_FORMATS: readonly AnswersFileFormat[] = ['mem0', 'longmemeval', 'jsonl'];

export interface ReadAnswersOptions {
  /** LongMemEval only: the judged log (`<hypotheses>.eval-results-<model>`) whose labels are recorded grades. */
  readonly labels?: string;
}

/**
 * Every row of an answers file, in file order. A malformed file is an InputError (several, as InputProblems)
 * naming the file and the line or key; a format that does not exist, or `labels` with a format that has none,
 * is a UsageError.
 */
export async function readAnswersFile(path: string, format: AnswersFileFormat, opts: ReadAnswersOptions = {}): Promise<readonly AnswerRow[]> {
  if (opts.labels !== undefined && format !== 'longmemeval') {
    throw new UsageError(`answers file ${path}: labels are read for format longmemeval only, not ${format}`, {
      hint: format === 'mem0' ? "mem0's file records its grades in llm_score itself" : 'put recorded grades in the `correct` field of each line',
    });
  }
  switch (format) {
    case 'mem0':
      return readMem0File(path);
    case 'longmemeval':
      return readLongMemEvalHypotheses(path, opts.labels);
    case 'jsonl':
      return readAnswersJsonl(path);
    default:
      throw new UsageError(`answers file ${path}: unknown format ${JSON.stringify(format)}`, { hint: `format is one of ${ANSWERS_FILE_FORMATS.join(', ')}` });
  }
}

/** The fields of our own JSONL format (docs/answers-files.md, "jsonl"). */
const JSONL_HINT =
  'each line is {"question_id": ..., "response": ...} or {"conversation": <0-based index>, "question": ..., "response": ...} (docs/answers-files.md)';

/** Our own answers JSONL, streamed line by line (a full LongMemEval-M run is large). */
export async function readAnswersJsonl(file: string): Promise<AnswerRow[]> {
  const problems = new Problems();
  const rows: AnswerRow[] = [];
  for await (const { obj, line } of readJsonl(file, problems)) {
    const row = problems.attempt(() => jsonlRow(file, line, obj));
    if (row !== undefined) rows.push(row);
  }
  problems.throwIfAny();
  return rows;
}

/** One line of our JSONL as a row. */
function jsonlRow(file: string, line: number, obj: JsonObject): AnswerRow {
  const questionId = optionalId(file, line, obj);
  const conversationIndex = optionalInteger(file, line, obj, 'conversation', 0);
  const question = stringField(file, line, obj, 'question', false);
  if (questionId === undefined && (conversationIndex === undefined || question === undefined)) {
    throw new InputError(file, line, 'the line names no question: give "question_id", or both "conversation" and "question"', { hint: JSONL_HINT });
  }
  const response = stringField(file, line, obj, 'response', false);
  if (response === undefined) throw new InputError(file, line, 'missing field "response"', { hint: JSONL_HINT });
  const gold = stringField(file, line, obj, 'gold', false);
  const category = optionalInteger(file, line, obj, 'category', 1);
  const recorded = jsonlRecorded(file, line, obj);
  return {
    where: `${file}:${line}`,
    ...(conversationIndex === undefined ? {} : { conversationIndex }),
    ...(questionId === undefined ? {} : { questionId }),
    ...(question === undefined ? {} : { question }),
    response,
    ...(gold === undefined ? {} : { gold }),
    ...(category === undefined ? {} : { category }),
    ...(recorded === undefined ? {} : { recorded }),
  };
}

/** `question_id`, a string or an integer (written as its decimal text); absent or null is undefined. */
function optionalId(file: string, line: number, obj: JsonObject): string | undefined {
  const v = obj['question_id'];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  if (typeof v !== 'string' || v === '') throw new InputError(file, line, `field "question_id" must be a non-empty string, got ${JSON.stringify(v)}`);
  return v;
}

/** An integer field at least `min`; absent or null is undefined. */
function optionalInteger(file: string, line: number, obj: JsonObject, field: string, min: number): number | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
    throw new InputError(file, line, `field "${field}" must be an integer of at least ${min}, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** The grade a line records: `correct` (boolean), `f1` (0..1) and `judge` (who graded), each optional. */
function jsonlRecorded(file: string, line: number, obj: JsonObject): RecordedGrade | undefined {
  const correct = obj['correct'];
  if (correct !== undefined && correct !== null && typeof correct !== 'boolean') {
    throw new InputError(file, line, `field "correct" must be true or false, got ${JSON.stringify(correct)}`);
  }
  const f1 = obj['f1'];
  if (f1 !== undefined && f1 !== null && (typeof f1 !== 'number' || !(f1 >= 0 && f1 <= 1))) {
    throw new InputError(file, line, `field "f1" must be a number from 0 to 1, got ${JSON.stringify(f1)}`);
  }
  const judge = stringField(file, line, obj, 'judge', false);
  const grade: RecordedGrade = {
    ...(typeof correct === 'boolean' ? { correct } : {}),
    ...(typeof f1 === 'number' ? { f1 } : {}),
    ...(judge === undefined ? {} : { judge }),
  };
  return Object.keys(grade).length === 0 ? undefined : grade;
}
