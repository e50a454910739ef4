import { afterEach, describe, expect, it } from 'vitest';
import { type ScriptedChat, scriptedChat } from '../testing/answer-chat.js';
import { judgeProfile } from './judges.js';
import { ANSWER_PROBES, auditAnswerJudge, GOLD_CONTROL, probeable } from './probes.js';
import type { AnswerQuestion } from './types.js';

const golds = ['Denver', 'a golden retriever', 'March 3', 'oat milk', 'the Green Lake loop', 'Biscuit', 'tennis', 'blue'];
const questions: AnswerQuestion[] = [
  ...golds.map((gold, i) => ({
    id: `q${i}`,
    text: `Question ${i}?`,
    gold,
    stratum: 'multi-session',
    questionType: 'multi-session',
    abstention: false,
    evidence: [],
  })),
  { id: 'abs', text: 'Where does my brother live?', gold: 'You never mentioned a brother.', stratum: 'abs', abstention: true, evidence: [] },
  {
    id: 'pref',
    text: 'Suggest a dinner.',
    gold: 'The user would like vegetarian dishes.',
    stratum: 'pref',
    questionType: 'single-session-preference',
    abstention: false,
    evidence: [],
  },
  { id: 'nogold', text: 'What?', gold: ' ', stratum: 's', abstention: false, evidence: [] },
];
const opts = { pairs: 5, seed: 7, samples: 1, temperature: 0, parseRetries: 0, judge: 'longmemeval/judge-m' };

let scripted: ScriptedChat | undefined;
afterEach(async () => {
  await scripted?.server.close();
  scripted = undefined;
});

/** The reference and the answer in a longmemeval judge prompt. */
function pairIn(prompt: string): { gold: string; answer: string } {
  const m = /Reference answer: (.*)\nAssistant's answer: ([\s\S]*?)\n\n/.exec(prompt);
  return { gold: m?.[1] ?? '', answer: m?.[2] ?? '' };
}

describe('answer probes', () => {
  const q = questions[0] as AnswerQuestion;
  it('build answers that mention the gold (but do not answer) or refuse', () => {
    const [candidates, dontKnow, padding, negated] = ANSWER_PROBES.map((p) => p.apply(q, ['tennis', 'blue', 'March 3', 'Biscuit']));
    expect(candidates).toBe('It could be any of these: tennis; blue; Denver; March 3; Biscuit.');
    expect(dontKnow).toBe("I don't know.");
    expect(padding).toMatch(/^I cannot tell from what I remember\. .* Something unrelated once mentioned Denver\. .+/);
    expect(negated).toBe('It is not Denver.');
    expect(ANSWER_PROBES.every((p) => p.expected === 'reject')).toBe(true);
    expect(ANSWER_PROBES[0]?.apply(q, ['tennis'])).toBeUndefined();
    expect(GOLD_CONTROL.apply(q, [])).toBe('Denver');
  });

  it('apply only to questions with an answer that is not a rubric', () => {
    expect(probeable(questions).map((x) => x.id)).toEqual(golds.map((_, i) => `q${i}`));
  });
});

describe('auditAnswerJudge', () => {
  it('a judge that accepts any answer containing the gold accepts three probes; a sound one none; both the control', async () => {
    scripted = await scriptedChat((prompt) => {
      const { gold, answer } = pairIn(prompt);
      return answer.toLowerCase().includes(gold.toLowerCase()) ? 'yes' : 'no';
    });
    const lme = await judgeProfile('longmemeval');
    const naive = await auditAnswerJudge(lme, scripted.chat, questions, opts);
    expect(naive.map((r) => [r.probe, r.drawn, r.graded, r.accepted, r.failures])).toEqual([
      ['candidates', 5, 5, 5, 0],
      ['dont-know', 5, 5, 0, 0],
      ['padding', 5, 5, 5, 0],
      ['negated', 5, 5, 5, 0],
      ['gold', 5, 5, 5, 0],
    ]);
    expect(naive[0]).toMatchObject({ expected: 'reject', acceptedRate: 1 });
    expect(naive[0]?.interval?.[0]).toBeGreaterThan(0.5);
    // Every drawn question is a probeable one, the same five for every probe.
    const asked = scripted.prompts().map((p) => pairIn(p).gold);
    expect(new Set(asked).size).toBe(5);
    expect(asked.every((g) => golds.includes(g))).toBe(true);
    await scripted.server.close();

    scripted = await scriptedChat((prompt) => {
      const { gold, answer } = pairIn(prompt);
      return answer.trim() === gold ? 'Yes.' : 'No.';
    });
    const sound = await auditAnswerJudge(lme, scripted.chat, questions, opts);
    expect(sound.map((r) => r.acceptedRate)).toEqual([0, 0, 0, 0, 1]);
  });

  it('draws the same questions for the same seed, and others for another', async () => {
    scripted = await scriptedChat(() => 'no');
    const lme = await judgeProfile('longmemeval');
    const drawnBy = async (seed: number) => {
      const before = scripted?.prompts().length ?? 0;
      await auditAnswerJudge(lme, (scripted as ScriptedChat).chat, questions, { ...opts, pairs: 3, seed });
      return (scripted as ScriptedChat)
        .prompts()
        .slice(before)
        .map((p) => pairIn(p).gold);
    };
    const a = await drawnBy(1);
    expect(await drawnBy(1)).toEqual(a);
    const others = await Promise.all([2, 3, 4].map(async (s) => (await drawnBy(s)).join('|')));
    expect(others.some((o) => o !== a.join('|'))).toBe(true);
  });

  it('counts probed answers with no verdict as failures, never as rejected', async () => {
    scripted = await scriptedChat(() => 'I would rather not say.');
    const result = await auditAnswerJudge(await judgeProfile('binary'), scripted.chat, questions, { ...opts, pairs: 2 });
    for (const r of result) expect(r).toMatchObject({ drawn: 2, graded: 0, accepted: 0, acceptedRate: null, interval: null, failures: 2 });
    await expect(auditAnswerJudge(await judgeProfile('binary'), scripted.chat, questions, { ...opts, pairs: 0 })).rejects.toThrow(RangeError);
  });
});
