import { isPlainObject } from '../../evalset/input.js';
import { Problems, readJsonFile } from '../../evalset/lines.js';
import { InputError } from '../errors.js';
import type { AnswerRow, RecordedGrade } from './types.js';

/**
 * mem0's LoCoMo evaluation files (mem0ai/mem0, evaluation/: the search scripts, evals.py, generate_scores.py),
 * read as answer rows. The file is one JSON object keyed by the 0-based index of the conversation in
 * locomo10.json (`"0"`..`"9"`), each holding that conversation's questions in dataset order:
 * `{question, answer, response, category}`, plus, after evals.py, `llm_score` (the judge's 1 CORRECT / 0
 * WRONG), `f1_score` and `bleu_score`. Its types vary with the script that wrote it: the search scripts keep
 * LoCoMo's integer `category` and a numeric `answer` where the dataset has one (and no `answer` on adversarial
 * questions), evals.py writes both as strings. mem0's judge script (metrics/llm_judge.py) writes `gt_answer` and
 * `llm_label` for the same things; both spellings are read.
 *
 * Rows keep category 5 when the file has them (the search scripts write them; evals.py skips them): whether they
 * count is the eval set's choice, and a row no question takes is counted as unmapped, never dropped here.
 */
export async function readMem0File(file: string): Promise<AnswerRow[]> {
  const data = await readJsonFile(file);
  if (!isPlainObject(data)) {
    throw new InputError(file, undefined, 'expected a JSON object keyed by LoCoMo conversation index ("0", "1", ...)', { hint: MEM0_HINT });
  }
  const problems = new Problems();
  const rows: AnswerRow[] = [];
  // Object.keys lists integer keys in ascending order, so rows come out by conversation whatever the file's order.
  for (const key of Object.keys(data)) {
    const conversation = problems.attempt(() => conversationKey(file, key));
    const items = data[key];
    if (conversation === undefined) continue;
    if (!Array.isArray(items)) {
      problems.add(new InputError(file, undefined, `${key}: expected an array of question records`, { hint: MEM0_HINT }));
      continue;
    }
    items.forEach((item, i) => {
      const row = problems.attempt(() => mem0Row(file, key, conversation, i, item));
      if (row !== undefined) rows.push(row);
    });
  }
  problems.throwIfAny();
  return rows;
}

const MEM0_HINT = 'expected mem0\'s evaluation output: {"0": [{"question", "answer", "response", "category", "llm_score"?}, ...], ...} (docs/answers-files.md)';

/** A top-level key: the conversation's 0-based index, in decimal. */
function conversationKey(file: string, key: string): number {
  if (!/^(0|[1-9]\d*)$/.test(key)) {
    throw new InputError(file, undefined, `key ${JSON.stringify(key)} is not a conversation index`, {
      hint: 'mem0\'s files key each conversation by its 0-based position in locomo10.json: "0", "1", ...',
    });
  }
  return Number(key);
}

/** One record of conversation `key` as a row; `at` names it in messages (`"3"[17]`). */
function mem0Row(file: string, key: string, conversation: number, i: number, item: unknown): AnswerRow {
  const at = `${key}[${i}]`;
  const fail = (msg: string) => new InputError(file, undefined, `${at}: ${msg}`, { hint: MEM0_HINT });
  if (!isPlainObject(item)) throw fail('expected an object');
  const question = item['question'];
  if (typeof question !== 'string' || question.trim() === '') throw fail(`field "question" must be a non-empty string, got ${kind(question)}`);
  const response = textOf(item['response']);
  if (response === undefined) {
    throw fail(
      `field "response" must be a string, got ${kind(item['response'])}; a question the system did not answer still needs one ("" counts as no answer)`,
    );
  }
  const goldValue = item['answer'] ?? item['gt_answer'];
  const gold = textOf(goldValue);
  if (goldValue !== undefined && goldValue !== null && gold === undefined) throw fail(`field "answer" must be a string or a number, got ${kind(goldValue)}`);
  const category = categoryOf(item['category']);
  if (category === undefined) throw fail(`field "category" must be a LoCoMo category 1-5 (a number or its text), got ${kind(item['category'])}`);
  const recorded = mem0Recorded(item, fail);
  return {
    where: `${file}:${at}`,
    conversationIndex: conversation,
    question,
    response,
    ...(gold === undefined ? {} : { gold }),
    category,
    ...(recorded === undefined ? {} : { recorded }),
  };
}

/** A string as it is, a number as Python's str() writes an int (mem0 converts both with str()). */
function textOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** 1..5 from 3 or "3" (evals.py writes str(category)); anything else is undefined. */
function categoryOf(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
  return Number.isInteger(n) && n >= 1 && n <= 5 ? n : undefined;
}

/** `llm_score` (or `llm_label`): 1/0 or true/false; `f1_score`: 0..1. Absent or null: not recorded. */
function mem0Recorded(item: Readonly<Record<string, unknown>>, fail: (msg: string) => InputError): RecordedGrade | undefined {
  const score = item['llm_score'] ?? item['llm_label'];
  let correct: boolean | undefined;
  if (score === 1 || score === true) correct = true;
  else if (score === 0 || score === false) correct = false;
  else if (score !== undefined && score !== null) throw fail(`field "llm_score" must be 1 (CORRECT) or 0 (WRONG), got ${kind(score)}`);
  const f1 = item['f1_score'];
  if (f1 !== undefined && f1 !== null && (typeof f1 !== 'number' || !(f1 >= 0 && f1 <= 1)))
    throw fail(`field "f1_score" must be a number from 0 to 1, got ${kind(f1)}`);
  if (correct === undefined && typeof f1 !== 'number') return undefined;
  return { ...(correct === undefined ? {} : { correct }), ...(typeof f1 === 'number' ? { f1 } : {}) };
}

/** A value for a message: numbers, booleans and null as written; strings and containers by kind (answers may be Sensitive). */
function kind(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return v.trim() === '' ? 'an empty string' : 'a string';
  return Array.isArray(v) ? 'an array' : 'an object';
}
