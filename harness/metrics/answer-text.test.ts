import { describe, expect, it } from 'vitest';
import { HarnessError, UsageError } from '../errors.js';
import { exactMatch, lexicalScores, locomoF1, setF1 } from './answer-text.js';
import {
  ANSWER_MEASURE_NAMES,
  describeMeasures,
  formatMeasure,
  isAnswerMeasure,
  isTested,
  MEASURE_NAMES,
  parseMeasure,
  trecEvalMeasures,
  trecEvalSpelling,
} from './measure.js';
import { evaluate } from './public.js';

/**
 * Each expected value is what the official code returns, worked out by hand from it: LoCoMo's
 * task_eval/evaluation.py (normalize_answer, f1_score, f1, eval_question_answering) and mem0's
 * evaluation/metrics/utils.py (simple_tokenize, calculate_metrics). `F1 = 2PR / (P + R)` written as they write
 * it, so the doubles are the same. The same code, run on 6,558 LoCoMo-derived and random cases with NLTK's
 * stemmer in MARTIN_EXTENSIONS mode, gave these functions' values bit for bit (ADR 0046).
 */
const f1 = (precision: number, recall: number) => (2 * precision * recall) / (precision + recall);

describe("locomoF1: LoCoMo's official F1", () => {
  it('lower-cases, drops punctuation and a/an/the/and, stems, then counts shared tokens', () => {
    // 'The dogs, and a cat!' -> 'the dogs and a cat' -> [dogs, cat] -> stems [dog, cat]; gold [dog, cat].
    expect(locomoF1('The dogs, and a cat!', 'dog and cat', 4)).toBe(1);
    // [she, move, to, pari, in, 2022] against [2022]: P = 1/6, R = 1.
    expect(locomoF1('She moved to Paris in 2022', '2022', 2)).toBe(f1(1 / 6, 1));
    // A multiset: 'yoga yoga' shares one token with 'yoga' (Counter & takes the minimum), P = 1/2.
    expect(locomoF1('yoga yoga', 'yoga', 4)).toBe(f1(1 / 2, 1));
    expect(locomoF1('nothing alike', 'yoga', 4)).toBe(0);
    // A numeric gold is read as str(answer) writes it; the answer's full stop goes with the punctuation.
    expect(locomoF1('2022.', String(2022), 2)).toBe(1);
  });

  it('category 1 (multi-hop): every comma-separated gold part takes its best prediction part, averaged', () => {
    // Parts ['Paris', 'London and Rome'] and ['rome', 'paris']: rome scores 2/3 against [london, rome], paris 1.
    expect(locomoF1('Paris, London and Rome', 'rome, paris', 1)).toBe((f1(1 / 2, 1) + 1) / 2);
    // One prediction part against two gold parts: 1 for 'Paris', 0 for 'London'.
    expect(locomoF1('Paris', 'Paris, London', 1)).toBe(0.5);
  });

  it('category 3 (open-domain): the gold ends at its first semicolon', () => {
    expect(locomoF1('hiking', 'hiking; camping with kids', 3)).toBe(1);
    // The same pair under the plain rule: [hike] against [hike, camp, with, kid], R = 1/4.
    expect(locomoF1('hiking', 'hiking; camping with kids', 4)).toBe(f1(1, 1 / 4));
  });

  it('category 5 (adversarial): 1 when the answer says the information is not mentioned or available, whatever the gold', () => {
    expect(locomoF1('That is not mentioned in the conversation.', 'Portugal', 5)).toBe(1);
    expect(locomoF1('NO INFORMATION AVAILABLE', '', 5)).toBe(1);
    expect(locomoF1("I don't know", 'not mentioned', 5)).toBe(0);
    expect(locomoF1('Portugal', 'Portugal', 5)).toBe(0);
  });

  it("drops a word only between non-word characters as the regex module's \\b sees them, and splits on Python's whitespace", () => {
    // 'é' is a word character: 'éa' stays whole, so it shares nothing with 'é' (JavaScript's \b would drop the 'a').
    expect(locomoF1('éa', 'é', 4)).toBe(0);
    // '’' is neither ASCII punctuation nor a word character: the 'a' before it goes, leaving [café, ’s].
    expect(locomoF1('café a’s', 'café', 4)).toBe(f1(1 / 2, 1));
    // U+0085 separates words in Python's split; U+FEFF does not.
    expect(locomoF1('red\u0085car', 'car', 4)).toBe(f1(1 / 2, 1));
    expect(locomoF1('red\ufeffcar', 'car', 4)).toBe(0);
  });

  it("stems as Porter's revised algorithm does (the `stemmer` package), not as NLTK's default mode", () => {
    // 'one' stems to 'on' here (NLTK's extensions keep 'one'), so [no, on, wa, hurt] shares 'on' with
    // [on, fridai]: 1/3, where LoCoMo's code run with NLTK's default stemmer gives 0.
    expect(locomoF1('no one was hurt', 'on Friday', 4)).toBe(f1(1 / 4, 1 / 2));
    // Inflections still meet: 'Enjoying' and 'enjoys' share the stem 'enjoi'.
    expect(locomoF1('Enjoying hikes', 'enjoys hiking', 4)).toBe(1);
  });

  it('refuses a category LoCoMo does not have', () => {
    for (const c of [0, 6, 2.5, Number.NaN]) expect(() => locomoF1('a', 'b', c)).toThrow(HarnessError);
    expect(() => locomoF1('a', 'b', 7)).toThrow(/category 7 is not a LoCoMo category/);
  });
});

describe("setF1: mem0's token-set F1", () => {
  it('lower-cases, splits on whitespace after turning . , ! ? into spaces, and compares sets', () => {
    // {the, cat, hat} against {the, hat}: P = 2/3, R = 1 (articles stay: mem0 drops none).
    expect(setF1('The cat, the hat!', 'the hat')).toBe(f1(2 / 3, 1));
    expect(setF1('hat hat hat', 'hat')).toBe(1);
    // Other punctuation stays in the word, and nothing is stemmed.
    expect(setF1("don't", 'dont')).toBe(0);
    expect(setF1('(Paris)', 'paris')).toBe(0);
    expect(setF1('cats', 'cat')).toBe(0);
    expect(setF1('red\u0085car', 'car')).toBe(f1(1 / 2, 1));
  });

  it('is 0 when either side has no words', () => {
    expect(setF1('', 'x')).toBe(0);
    expect(setF1('x', '')).toBe(0);
    expect(setF1('  ?! ', 'x')).toBe(0);
  });
});

describe('exactMatch: SQuAD-normalised equality', () => {
  it('ignores case, punctuation, a/an/the and spacing, nothing else', () => {
    expect(exactMatch('The Eiffel Tower!', 'eiffel   tower')).toBe(1);
    expect(exactMatch('An apple.', 'apple')).toBe(1);
    // SQuAD keeps 'and' (LoCoMo's normalisation drops it).
    expect(exactMatch('cats and dogs', 'cats dogs')).toBe(0);
    expect(exactMatch('cat dog', 'dog cat')).toBe(0);
    expect(exactMatch('', 'the')).toBe(1);
  });
});

describe('lexicalScores', () => {
  it("gives the three measures under their canonical names, LoCoMo's F1 by the category when there is one", () => {
    expect(lexicalScores('Paris', 'Paris, London', 1)).toEqual({ 'F1-LoCoMo': 0.5, 'F1-set': f1(1, 1 / 2), EM: 0 });
    // Without a category, LoCoMo's single-answer rule: [pari] against [pari, london].
    expect(lexicalScores('Paris', 'Paris, London')).toEqual({ 'F1-LoCoMo': f1(1, 1 / 2), 'F1-set': f1(1, 1 / 2), EM: 0 });
    expect(Object.keys(lexicalScores('a', 'b'))).toEqual(ANSWER_MEASURE_NAMES.filter((m) => m !== 'Acc'));
  });
});

describe('answer measures in the measure registry', () => {
  it('parses each name to itself, flags it as an answer measure and as tested, with no cutoff and no parameters', () => {
    for (const name of ANSWER_MEASURE_NAMES) {
      const m = parseMeasure(name);
      expect(formatMeasure(m)).toBe(name);
      expect(isAnswerMeasure(m)).toBe(true);
      expect(isTested(m)).toBe(true);
      expect(() => parseMeasure(`${name}@10`)).toThrow(/takes no @cutoff/);
    }
    const flagged = describeMeasures().filter((d) => isAnswerMeasure(parseMeasure(d.examples[0]!)));
    expect(flagged.map((d) => d.name)).toEqual([...ANSWER_MEASURE_NAMES]);
    expect(MEASURE_NAMES).toEqual(expect.arrayContaining([...ANSWER_MEASURE_NAMES]));
    expect(formatMeasure(parseMeasure('accuracy'))).toBe('Acc');
    expect(formatMeasure(parseMeasure('f1-locomo'))).toBe('F1-LoCoMo');
    expect(isAnswerMeasure(parseMeasure('nDCG@10'))).toBe(false);
  });

  it('refuses a bare F1, which names two different numbers in the tools it would come from', () => {
    expect(() => parseMeasure('F1')).toThrow(/ambiguous.*F1-LoCoMo.*F1-set/);
    expect(() => parseMeasure('f1')).toThrow(UsageError);
  });

  it('is listed with a description and never offered as a trec_eval measure', () => {
    const listed = describeMeasures().filter((d) => (ANSWER_MEASURE_NAMES as readonly string[]).includes(d.name));
    expect(listed.map((d) => d.name)).toEqual([...ANSWER_MEASURE_NAMES]);
    for (const d of listed) expect(d.describe).toMatch(/answer stage/);
    const families = new Set(trecEvalMeasures().map((t) => t.family));
    for (const name of ANSWER_MEASURE_NAMES) {
      expect(families.has(name)).toBe(false);
      expect(trecEvalSpelling(parseMeasure(name))).toBeUndefined();
    }
  });

  it('cannot be computed from a ranking: evaluate() says where the value comes from', () => {
    const call = () => evaluate({ q1: { d1: 1 } }, { q1: { d1: 1 } }, ['Acc']);
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/Acc is an answer measure: its value per question comes from the answer stage, not from a ranking/);
  });
});
