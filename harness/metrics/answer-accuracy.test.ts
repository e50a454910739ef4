import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import {
  isLoCoMoCategory,
  LOCOMO_CATEGORIES,
  locomoAccuracy,
  LONGMEMEVAL_QUESTION_TYPES,
  longMemEvalAccuracy,
  type LongMemEvalGradedRow,
} from './answer-accuracy.js';

const row = (questionId: string, questionType: string, correct: 0 | 1): LongMemEvalGradedRow => ({ questionId, questionType, correct: correct === 1 });

/**
 * Fourteen graded questions over the six types, two of them `_abs`, listed out of order. LongMemEval's
 * src/evaluation/print_qa_metrics.py, run on the same labels (a hypothesis log with `autoeval_label`s and a
 * reference file of question types), prints: single-session-user 0.5 (2), single-session-preference 1.0 (1),
 * single-session-assistant 0.3333 (3), multi-session 1.0 (2), temporal-reasoning 0.0 (2), knowledge-update
 * 0.75 (4); task-averaged 0.5972, overall 0.5714, abstention 0.5 (2).
 */
const LME_ROWS: readonly LongMemEvalGradedRow[] = [
  row('q14', 'knowledge-update', 1),
  row('q1', 'single-session-user', 1),
  row('q2', 'single-session-user', 0),
  row('q3', 'single-session-preference', 1),
  row('q4', 'single-session-assistant', 0),
  row('q5', 'single-session-assistant', 0),
  row('q6', 'single-session-assistant', 1),
  row('q7', 'multi-session', 1),
  row('q8_abs', 'multi-session', 1),
  row('q9', 'temporal-reasoning', 0),
  row('q10_abs', 'temporal-reasoning', 0),
  row('q11', 'knowledge-update', 1),
  row('q12', 'knowledge-update', 1),
  row('q13', 'knowledge-update', 0),
];

describe("longMemEvalAccuracy: LongMemEval's print_qa_metrics.py", () => {
  it('gives per-type, task-averaged, overall and abstention accuracy as the official script prints them', () => {
    const acc = longMemEvalAccuracy(LME_ROWS);
    expect(Object.keys(acc.perType)).toEqual([...LONGMEMEVAL_QUESTION_TYPES]);
    expect(Object.values(acc.perType).map((c) => [c.correct, c.n])).toEqual([
      [1, 2],
      [1, 1],
      [1, 3],
      [2, 2],
      [0, 2],
      [3, 4],
    ]);
    // The mean of the six type means, summed in the script's order: 0.5972222222222222 (numpy gives the same double).
    expect(acc.taskAveraged).toBe((0.5 + 1 + 1 / 3 + 1 + 0 + 0.75) / 6);
    expect(acc.taskAveraged.toFixed(4)).toBe('0.5972');
    // Micro: 8 of 14, a different number from the task average.
    expect(acc.overall).toEqual({ n: 14, correct: 8, accuracy: 8 / 14 });
    // The `_abs` questions count in their own type (multi-session 2 of 2, temporal 0 of 2) and in abstention.
    expect(acc.abstention).toEqual({ n: 2, correct: 1, accuracy: 0.5 });
  });

  it("counts an id as abstention wherever `_abs` stands in it, as the script's `'_abs' in question_id` does", () => {
    expect(longMemEvalAccuracy([row('x_abs_2', 'multi-session', 1), row('abs', 'multi-session', 0)]).abstention).toEqual({ n: 1, correct: 1, accuracy: 1 });
  });

  it('averages over the types present, and puts types of its own after the official six', () => {
    const acc = longMemEvalAccuracy([row('a', 'my-type', 1), row('b', 'temporal-reasoning', 0), row('c', 'temporal-reasoning', 1)]);
    expect(Object.keys(acc.perType)).toEqual(['temporal-reasoning', 'my-type']);
    expect(acc.taskAveraged).toBe(0.75);
    expect(acc.abstention.n).toBe(0);
    expect(acc.abstention.accuracy).toBeNaN();
  });

  it('gives NaN, not 0, for nothing graded, and refuses a row without a question type', () => {
    const none = longMemEvalAccuracy([]);
    expect(none.overall.accuracy).toBeNaN();
    expect(none.taskAveraged).toBeNaN();
    expect(() => longMemEvalAccuracy([row('q', '', 1)])).toThrow(HarnessError);
    expect(() => longMemEvalAccuracy([row('q', '', 1)])).toThrow(/rows\[0\] \(q\) has no question type/);
  });
});

describe("locomoAccuracy: LoCoMo's categories, with and without adversarial", () => {
  it('is the mapping of the official scoring code: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial', () => {
    expect(LOCOMO_CATEGORIES).toEqual({ 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' });
    expect([0, 1, 5, 6, 2.5, '1'].map(isLoCoMoCategory)).toEqual([false, true, true, false, false, false]);
  });

  it('counts per category, overall on 1-4 (mem0’s denominator) and with category 5', () => {
    const grades: [number, boolean][] = [
      [4, true],
      [1, false],
      [4, true],
      [5, true],
      [2, true],
      [5, true],
      [3, false],
      [4, false],
    ];
    const acc = locomoAccuracy(grades.map(([category, correct]) => ({ category, correct })));
    expect(Object.keys(acc.perCategory)).toEqual(['1', '2', '3', '4', '5']);
    expect(acc.perCategory[4]).toEqual({ n: 3, correct: 2, accuracy: 2 / 3 });
    expect(acc.perCategory[1]).toEqual({ n: 1, correct: 0, accuracy: 0 });
    expect(acc.overall).toEqual({ n: 6, correct: 3, accuracy: 0.5 });
    expect(acc.withAdversarial).toEqual({ n: 8, correct: 5, accuracy: 5 / 8 });
  });

  it('keeps the denominator honest: 1,157 correct of 1,540 graded questions is 0.7513, not 1,157 / 1,986', () => {
    const rows = Array.from({ length: 1540 }, (_, i) => ({ category: 1 + (i % 4), correct: i < 1157 }));
    expect(locomoAccuracy(rows).overall.accuracy.toFixed(4)).toBe('0.7513');
    expect(locomoAccuracy(rows).overall.n).toBe(1540);
    expect(locomoAccuracy(rows).perCategory[5]).toBeUndefined();
  });

  it('refuses a category LoCoMo does not have', () => {
    expect(() => locomoAccuracy([{ category: 6, correct: true }])).toThrow(/rows\[0\] has category 6; LoCoMo's categories are 1 to 5/);
    expect(() => locomoAccuracy([{ category: 0, correct: true }])).toThrow(HarnessError);
  });
});
