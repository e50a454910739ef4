import { open } from 'node:fs/promises';
import { assertFile, type JsonObject, Problems, readJsonArray, readJsonl, stringField } from '../../evalset/lines.js';
import { writeFileAtomic } from '../cache/index.js';
import { HarnessError, InputError } from '../errors.js';
import type { AnswerRow, RecordedGrade } from './types.js';

/**
 * LongMemEval's answer files (xiaowu0162/LongMemEval, src/evaluation/): the hypothesis file a system writes, one
 * `{question_id, hypothesis}` per line, and the log evaluate_qa.py judges it into, `<hypotheses>.eval-results-<model>`:
 * the same lines, each with `autoeval_label: {model, label}` added (label true when the judge said yes).
 * print_qa_metrics.py reads that log. Like evaluate_qa.py, a hypothesis file that is one JSON array is read too.
 */

const HYPOTHESIS_HINT = 'each line is {"question_id": "...", "hypothesis": "..."}, as LongMemEval\'s evaluate_qa.py reads it';
const LABEL_HINT = 'a judged line carries "autoeval_label": {"model": "<judge model>", "label": true|false}, as evaluate_qa.py writes it';

/**
 * The rows of a hypothesis file, in file order. A line's own `autoeval_label` is its recorded grade (the judged
 * log is itself a hypothesis file); `labels`, a judged log of the same hypotheses, supplies the grades of the
 * lines without one. A question id twice, a label for a question the file lacks, or a label made for another
 * hypothesis is an InputError: the official metrics would count such a pair wrongly without a word.
 */
export async function readLongMemEvalHypotheses(file: string, labels?: string): Promise<AnswerRow[]> {
  const rows = await readHypothesisRows(file);
  return labels === undefined ? rows : withLabels(rows, labels, await readLabels(labels));
}

/** A hypothesis line as the reader keeps it until the labels are joined. */
interface HypothesisLine {
  readonly questionId: string;
  readonly hypothesis: string;
  readonly recorded?: RecordedGrade;
}

async function readHypothesisRows(file: string): Promise<AnswerRow[]> {
  const problems = new Problems();
  const rows: AnswerRow[] = [];
  const seen = new Map<string, string>();
  const take = (where: string, fail: Fail, value: unknown) => {
    const h = problems.attempt(() => hypothesisLine(value, fail));
    if (h === undefined) return;
    const first = seen.get(h.questionId);
    if (first !== undefined) {
      problems.add(fail(`question_id ${h.questionId} again (first at ${first})`, DUPLICATE_HINT));
      return;
    }
    seen.set(h.questionId, where);
    rows.push({ where, questionId: h.questionId, response: h.hypothesis, ...(h.recorded === undefined ? {} : { recorded: h.recorded }) });
  };
  if ((await firstCharacter(file)) === '[') {
    for await (const { value, index } of readJsonArray(file)) take(`${file}:[${index}]`, failAt(file, undefined, index), value);
  } else {
    for await (const { obj, line } of readJsonl(file, problems)) take(`${file}:${line}`, failAt(file, line), obj);
  }
  problems.throwIfAny();
  return rows;
}

const DUPLICATE_HINT = 'a question answered twice would be judged and counted twice by the official scripts: keep one line per question_id';

/** The first character that is not whitespace (or a byte-order mark): `[` for a JSON array, `{` for JSONL. */
async function firstCharacter(file: string): Promise<string | undefined> {
  await assertFile(file);
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return /[^\s\uFEFF]/.exec(buf.subarray(0, bytesRead).toString('utf8'))?.[0];
  } finally {
    await handle.close();
  }
}

/** Makes the InputError of one record: `line` in JSONL, `element` (its index) in a JSON array. */
type Fail = (message: string, hint?: string) => InputError;

function failAt(file: string, line: number | undefined, element?: number): Fail {
  const prefix = element === undefined ? '' : `[${element}]: `;
  return (message, hint) => new InputError(file, line, `${prefix}${message}`, hint === undefined ? {} : { hint });
}

/** One hypothesis record. */
function hypothesisLine(value: unknown, fail: Fail): HypothesisLine {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail('expected an object', HYPOTHESIS_HINT);
  const obj = value as JsonObject;
  const questionId = questionIdOf(obj, fail);
  const hypothesis = obj['hypothesis'];
  if (typeof hypothesis !== 'string')
    throw fail(hypothesis === undefined ? 'missing field "hypothesis"' : `field "hypothesis" must be a string, got ${kindOf(hypothesis)}`, HYPOTHESIS_HINT);
  const recorded = obj['autoeval_label'] === undefined ? undefined : labelOf(obj, fail);
  return { questionId, hypothesis, ...(recorded === undefined ? {} : { recorded }) };
}

/** `question_id`: a string without whitespace, or an integer written as its decimal text. */
function questionIdOf(obj: JsonObject, fail: Fail): string {
  const v = obj['question_id'];
  if (v === undefined) throw fail('missing field "question_id"', HYPOTHESIS_HINT);
  const id = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
  if (typeof id !== 'string' || id === '' || /\s/.test(id))
    throw fail(`field "question_id" must be a non-empty string without whitespace, got ${JSON.stringify(v)}`);
  return id;
}

/** `autoeval_label: {model, label}` as a recorded grade. */
function labelOf(obj: JsonObject, fail: Fail): RecordedGrade {
  const label = obj['autoeval_label'];
  if (label === null || typeof label !== 'object' || Array.isArray(label))
    throw fail(`field "autoeval_label" must be an object {model, label}, got ${kindOf(label)}`, LABEL_HINT);
  const { model, label: correct } = label as JsonObject;
  if (typeof correct !== 'boolean') throw fail(`autoeval_label.label must be true or false, got ${JSON.stringify(correct) ?? 'nothing'}`, LABEL_HINT);
  if (model !== undefined && typeof model !== 'string') throw fail(`autoeval_label.model must be a string, got ${kindOf(model)}`, LABEL_HINT);
  return { correct, ...(model === undefined ? {} : { judge: model }) };
}

/** A value's kind for a message, never a string's text (a hypothesis may be Sensitive). */
function kindOf(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return 'a string';
  return Array.isArray(v) ? 'an array' : 'an object';
}

/** One line of a judged log: its question, grade, the hypothesis it judged (when written) and where it is. */
interface LabelLine {
  readonly grade: RecordedGrade;
  readonly hypothesis?: string;
  readonly line: number;
}

async function readLabels(file: string): Promise<ReadonlyMap<string, LabelLine>> {
  const problems = new Problems();
  const labels = new Map<string, LabelLine>();
  for await (const { obj, line } of readJsonl(file, problems)) {
    problems.attempt(() => {
      const fail = failAt(file, line);
      const questionId = questionIdOf(obj, fail);
      if (obj['autoeval_label'] === undefined) throw fail('missing field "autoeval_label"', LABEL_HINT);
      const grade = labelOf(obj, fail);
      const hypothesis = stringField(file, line, obj, 'hypothesis', false);
      const first = labels.get(questionId);
      if (first !== undefined) throw new InputError(file, line, `question_id ${questionId} again (first on line ${first.line})`, { hint: DUPLICATE_HINT });
      labels.set(questionId, { grade, line, ...(hypothesis === undefined ? {} : { hypothesis }) });
    });
  }
  problems.throwIfAny();
  return labels;
}

/** The rows with the log's labels joined on question_id; a label that belongs to no row, or to another answer, is an error. */
function withLabels(rows: readonly AnswerRow[], file: string, labels: ReadonlyMap<string, LabelLine>): AnswerRow[] {
  const problems = new Problems();
  const byId = new Map(rows.map((r) => [r.questionId as string, r]));
  for (const [id, label] of labels) {
    const row = byId.get(id);
    if (row === undefined) {
      problems.add(new InputError(file, label.line, `a label for question_id ${id}, which the hypothesis file does not have`, { hint: MISMATCH_HINT }));
    } else if (label.hypothesis !== undefined && label.hypothesis !== row.response) {
      problems.add(
        new InputError(file, label.line, `the label judged another hypothesis for question_id ${id} than ${row.where} holds`, { hint: MISMATCH_HINT }),
      );
    } else if (row.recorded?.correct !== undefined && row.recorded.correct !== label.grade.correct) {
      problems.add(new InputError(file, label.line, `the label for question_id ${id} disagrees with the one ${row.where} records`, { hint: MISMATCH_HINT }));
    }
  }
  problems.throwIfAny();
  return rows.map((r) => {
    const label = labels.get(r.questionId as string);
    return label === undefined || r.recorded?.correct !== undefined ? r : { ...r, recorded: label.grade };
  });
}

const MISMATCH_HINT = 'the labels must be the .eval-results-* log that evaluate_qa.py wrote for this hypothesis file';

/** One hypothesis to write: the eval-set query id (LongMemEval's question_id) and the answer text. */
export interface Hypothesis {
  readonly questionId: string;
  readonly hypothesis: string;
}

/**
 * Writes `rows` as LongMemEval hypothesis JSONL, so the official evaluate_qa.py can judge what the workbench
 * answered. Written whole or not at all (a temp file renamed into place). A question id twice is refused: the
 * official scripts would judge and count it twice.
 */
export async function writeHypotheses(path: string, rows: readonly Hypothesis[]): Promise<void> {
  await writeFileAtomic(path, formatHypotheses(path, rows));
}

/** The JSONL text of {@link writeHypotheses}; `path` only names the file in an error. */
export function formatHypotheses(path: string, rows: readonly Hypothesis[]): string {
  const seen = new Set<string>();
  let text = '';
  for (const r of rows) {
    if (seen.has(r.questionId)) throw new HarnessError(`${path}: question_id ${r.questionId} is written twice; ${DUPLICATE_HINT}`);
    seen.add(r.questionId);
    text += `${JSON.stringify({ question_id: r.questionId, hypothesis: r.hypothesis })}\n`;
  }
  return text;
}
