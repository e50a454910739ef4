import { LOCOMO_CATEGORIES } from '../../evalset/adapters/locomo.js';
import { HarnessError } from '../errors.js';

/**
 * The protocols' own aggregates of per-question judge grades: LongMemEval's (per question type, task-averaged,
 * overall, abstention, as its src/evaluation/print_qa_metrics.py prints them) and LoCoMo's (per category, with
 * and without category 5). The rows are graded questions only: a question whose answer or grade failed is
 * counted apart by the caller, never passed here as wrong.
 */

/** One group of graded questions. `accuracy` is `correct / n`, NaN when `n` is 0 (numpy's mean of nothing). */
export interface AccuracyCell {
  readonly n: number;
  readonly correct: number;
  readonly accuracy: number;
}

/** One graded LongMemEval question. */
export interface LongMemEvalGradedRow {
  readonly questionId: string;
  readonly questionType: string;
  readonly correct: boolean;
}

/** LongMemEval's accuracy figures. */
export interface LongMemEvalAccuracy {
  /** Per question type, the official script's six types first in its order, then any other in order of appearance. */
  readonly perType: Readonly<Record<string, AccuracyCell>>;
  /** The mean of the per-type accuracies (each type weighs the same, whatever its n). */
  readonly taskAveraged: number;
  /** Every question (micro accuracy: correct over all questions). */
  readonly overall: AccuracyCell;
  /** The abstention questions (`_abs` in the id), which also count in their question type. */
  readonly abstention: AccuracyCell;
}

/** LongMemEval's question types in the order its metrics script prints (and averages) them. */
export const LONGMEMEVAL_QUESTION_TYPES = [
  'single-session-user',
  'single-session-preference',
  'single-session-assistant',
  'multi-session',
  'temporal-reasoning',
  'knowledge-update',
] as const;

/**
 * LoCoMo's categories as its official scoring code (task_eval/evaluation.py) and dataset use them, the one
 * mapping the workbench shows (its LoCoMo loader's table; several tools label 1 to 4 otherwise).
 */
export { LOCOMO_CATEGORIES };

/** A LoCoMo category number. */
export type LoCoMoCategory = keyof typeof LOCOMO_CATEGORIES;

/** One graded LoCoMo question. */
export interface LoCoMoGradedRow {
  readonly category: number;
  readonly correct: boolean;
}

/** LoCoMo's accuracy figures. */
export interface LoCoMoAccuracy {
  /** Per category present in the rows, in category order. */
  readonly perCategory: Readonly<Partial<Record<LoCoMoCategory, AccuracyCell>>>;
  /** Categories 1-4: the denominator of mem0's protocol (1,540 questions on the full set), category 5 left out. */
  readonly overall: AccuracyCell;
  /** Every row, category 5 (adversarial) included. */
  readonly withAdversarial: AccuracyCell;
}

/** Is `c` one of LoCoMo's categories 1-5? */
export function isLoCoMoCategory(c: unknown): c is LoCoMoCategory {
  return typeof c === 'number' && Number.isInteger(c) && c >= 1 && c <= 5;
}

function cell(n: number, correct: number): AccuracyCell {
  return { n, correct, accuracy: correct / n };
}

/** Counts per key, keys in the order given first, then in order of appearance. */
function countBy<R extends { readonly correct: boolean }, K>(rows: readonly R[], key: (r: R) => K, order: readonly K[]): Map<K, [number, number]> {
  const counts = new Map<K, [number, number]>();
  for (const r of rows) {
    const c = counts.get(key(r)) ?? [0, 0];
    c[0]++;
    if (r.correct) c[1]++;
    counts.set(key(r), c);
  }
  const ordered = new Map<K, [number, number]>();
  for (const k of order) if (counts.has(k)) ordered.set(k, counts.get(k)!);
  for (const [k, c] of counts) ordered.set(k, c);
  return ordered;
}

function total(rows: readonly { readonly correct: boolean }[]): AccuracyCell {
  return cell(rows.length, rows.filter((r) => r.correct).length);
}

/**
 * LongMemEval's accuracy figures as its metrics script computes them: a question counts in its type and, when
 * its id contains `_abs`, in abstention too; the task average is the mean of the type accuracies, summed in the
 * script's type order. The script averages over its six types and prints NaN when one is missing; here the
 * average is over the types present, the same number whenever all six are.
 */
export function longMemEvalAccuracy(rows: readonly LongMemEvalGradedRow[]): LongMemEvalAccuracy {
  rows.forEach((r, i) => {
    if (typeof r.questionType !== 'string' || r.questionType === '') {
      throw new HarnessError(`longMemEvalAccuracy: rows[${i}] (${r.questionId}) has no question type; every LongMemEval question has one`);
    }
  });
  const counts = countBy<LongMemEvalGradedRow, string>(rows, (r) => r.questionType, LONGMEMEVAL_QUESTION_TYPES);
  const perType: Record<string, AccuracyCell> = {};
  let sum = 0;
  for (const [type, [n, correct]] of counts) {
    perType[type] = cell(n, correct);
    sum += perType[type].accuracy;
  }
  return {
    perType,
    taskAveraged: sum / counts.size,
    overall: total(rows),
    abstention: total(rows.filter((r) => r.questionId.includes('_abs'))),
  };
}

/** LoCoMo's accuracy per category, over categories 1-4 (`overall`), and over every row (`withAdversarial`). */
export function locomoAccuracy(rows: readonly LoCoMoGradedRow[]): LoCoMoAccuracy {
  rows.forEach((r, i) => {
    if (!isLoCoMoCategory(r.category)) {
      throw new HarnessError(`locomoAccuracy: rows[${i}] has category ${String(r.category)}; LoCoMo's categories are 1 to 5`);
    }
  });
  const counts = countBy(rows, (r) => r.category as LoCoMoCategory, [1, 2, 3, 4, 5]);
  const perCategory: Partial<Record<LoCoMoCategory, AccuracyCell>> = {};
  for (const [category, [n, correct]] of counts) perCategory[category as LoCoMoCategory] = cell(n, correct);
  return { perCategory, overall: total(rows.filter((r) => r.category !== 5)), withAdversarial: total(rows) };
}
