import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../errors.js';
import { tempFolder } from '../testing/files.js';
import { ANSWER_JUDGE_PROFILE_IDS, judgeProfile, LONGMEMEVAL_QUESTION_TYPES, parseLabel, parseVerdict, parseYes } from './judges.js';
import type { AnswerQuestion } from './types.js';

const q = (over: Partial<AnswerQuestion> = {}): AnswerQuestion => ({
  id: 'q1',
  text: 'Where does my sister live?',
  gold: 'Denver',
  stratum: 'single-session-user',
  abstention: false,
  evidence: [],
  ...over,
});

describe('reading a judge reply', () => {
  it('longmemeval: correct when the lower-cased reply contains "yes"; an empty reply cannot be read', () => {
    expect(['yes', 'Yes.', 'YES, it is', 'no', 'No.', 'maybe', '  ', ''].map(parseYes)).toEqual([true, true, true, false, false, false, undefined, undefined]);
  });

  it('locomo: the JSON label, bare, fenced or inside prose; anything else cannot be read', () => {
    expect(parseLabel('{"label": "CORRECT"}')).toBe(true);
    expect(parseLabel('{"label":"wrong"}')).toBe(false);
    expect(parseLabel('```json\n{"label": "CORRECT"}\n```')).toBe(true);
    expect(parseLabel('```\n{"Label": "WRONG"}\n```')).toBe(false);
    expect(parseLabel('The answer names the same city. {"label": "CORRECT"}')).toBe(true);
    for (const bad of ['CORRECT', '{"label": "RIGHT"}', '{"verdict": "CORRECT"}', '{"label": "CORRECT"', '["CORRECT"]', '']) {
      expect(parseLabel(bad), bad).toBeUndefined();
    }
  });

  it('binary: the first word, after marks, case-free', () => {
    expect(['CORRECT', 'correct: same city', '**Correct**', '"WRONG"', 'Incorrect.', 'Yes', 'no'].map(parseVerdict)).toEqual([
      true,
      true,
      true,
      false,
      false,
      true,
      false,
    ]);
    expect(['The answer is CORRECT', 'Correctly answered', '', '42'].map(parseVerdict)).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('judgeProfile', () => {
  it('longmemeval routes abstention first, then by question type; 10 tokens', async () => {
    const p = await judgeProfile('longmemeval');
    expect(p.maxTokens).toBe(10);
    const marks: Record<string, RegExp> = {
      'single-session-user': /works through steps that arrive at it/,
      'single-session-assistant': /works through steps that arrive at it/,
      'multi-session': /works through steps that arrive at it/,
      'temporal-reasoning': /one more or one less than the reference/,
      'knowledge-update': /Mentioning an earlier state as well does no harm/,
      'single-session-preference': /What a good reply does: Denver/,
    };
    for (const type of LONGMEMEVAL_QUESTION_TYPES) expect(p.prompt(q({ questionType: type }), 'In Denver'), type).toMatch(marks[type] as RegExp);
    const plain = p.prompt(q({ questionType: 'multi-session' }), 'In Denver');
    expect(plain).toContain("Question: Where does my sister live?\nReference answer: Denver\nAssistant's answer: In Denver");
    expect(plain).not.toMatch(/one more or one less/);
    expect(p.prompt(q({ questionType: 'no-such-type' }), 'x')).toMatch(/works through steps/);
    const abs = p.prompt(q({ questionType: 'temporal-reasoning', abstention: true, gold: 'You never said where she lives.' }), 'x');
    expect(abs).toMatch(/does not hold the answer/);
    expect(abs).not.toMatch(/one more or one less/);
  });

  it('locomo asks for a JSON label (with an abstention prompt) and binary for a verdict word', async () => {
    const locomo = await judgeProfile('locomo');
    expect(locomo.maxTokens).toBe(200);
    expect(locomo.prompt(q({ category: 4 }), 'Denver, Colorado')).toMatch(
      /Gold answer: Denver\nAnswer to grade: Denver, Colorado[\s\S]*\{"label": "CORRECT"\}/,
    );
    expect(locomo.prompt(q({ category: 5, abstention: true, gold: '' }), 'x')).toMatch(/never say what the question asks[\s\S]*Note: \(none given\)/);
    const binary = await judgeProfile('binary');
    expect(binary.maxTokens).toBe(10);
    expect(binary.prompt(q(), 'Denver')).toMatch(/Begin your reply with the single word CORRECT or WRONG\.$/m);
    expect(binary.parse('WRONG')).toBe(false);
    expect(new Set(await Promise.all(ANSWER_JUDGE_PROFILE_IDS.map(async (id) => (await judgeProfile(id)).fingerprint))).size).toBe(3);
  });

  it("a user's prompt file replaces ours for its key; a default file stands for the fact-recall types only", async () => {
    const dir = await tempFolder('answer-judge-prompts', {
      'mine.md': 'MINE {{question}} / {{gold}} / {{answer}}',
      'temporal.md': 'TEMPORAL {{question}} {{gold}} {{answer}}',
    });
    const p = await judgeProfile('longmemeval', { default: join(dir, 'mine.md'), 'temporal-reasoning': join(dir, 'temporal.md') });
    expect(p.prompt(q({ questionType: 'multi-session' }), 'A {{gold}} B')).toBe('MINE Where does my sister live? / Denver / A {{gold}} B');
    expect(p.prompt(q({ questionType: 'temporal-reasoning' }), 'x')).toMatch(/^TEMPORAL /);
    expect(p.prompt(q({ questionType: 'knowledge-update' }), 'x')).toMatch(/latest state/);
    expect(p.prompt(q({ abstention: true }), 'x')).toMatch(/does not hold the answer/);
    expect(p.fingerprint).not.toBe((await judgeProfile('longmemeval')).fingerprint);
  });

  it('refuses an unknown key, an unreadable file and a file with missing or stray placeholders, naming the file', async () => {
    const dir = await tempFolder('answer-judge-bad', {
      'python.md': 'Question: {}\nAnswer: {}\nIs it right?',
      'stray.md': 'Q {{question}} G {{gold}}\nA {{answer}}\nand {{ response }}',
    });
    await expect(judgeProfile('locomo', { 'temporal-reasoning': join(dir, 'x.md') })).rejects.toThrow(UsageError);
    await expect(judgeProfile('locomo', { 'temporal-reasoning': join(dir, 'x.md') })).rejects.toThrow(
      /no prompt key "temporal-reasoning"; its keys are default, abstention/,
    );
    await expect(judgeProfile('binary', { default: join(dir, 'missing.md') })).rejects.toThrow(/missing\.md: cannot read the prompt file \(ENOENT\)/);
    const python = judgeProfile('binary', { abstention: join(dir, 'python.md') });
    await expect(python).rejects.toThrow(InputError);
    await expect(python).rejects.toThrow(/python\.md: the prompt has no \{\{question\}\}, \{\{gold\}\}, \{\{answer\}\}/);
    await expect(judgeProfile('longmemeval', { 'knowledge-update': join(dir, 'stray.md') })).rejects.toThrow(
      /stray\.md:3: unknown placeholder \{\{ response \}\}: this prompt takes \{\{question\}\}, \{\{gold\}\}, \{\{answer\}\}/,
    );
  });
});
