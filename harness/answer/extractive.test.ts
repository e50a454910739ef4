import { describe, expect, it } from 'vitest';
import { bestSentence, contentStems, EXTRACTIVE_DONT_KNOW, extractiveReader, sentencesOf } from './extractive.js';
import type { AnswerQuestion, ContextItem } from './types.js';

const question = (text: string): AnswerQuestion => ({ id: 'q1', text, gold: '', stratum: 'exact', abstention: false, evidence: [] });

// Rank order: m1 first.
const context: ContextItem[] = [
  { id: 'm1', text: 'user: I adopted a dog last spring. The dog is named Biscuit!', timestamp: '2023-04-02' },
  { id: 'm2', text: 'user: My sister lives in Denver.\nassistant: Denver is lovely in the fall.', timestamp: '2023-01-10' },
  { id: 'm3', text: 'user: I run the Green Lake loop every Sunday morning.', timestamp: '2023-03-05' },
];

describe('contentStems and sentencesOf', () => {
  it('stems content words and drops stop words and apostrophes', () => {
    expect([...contentStems("Where does Alex's sister live? She's running")].sort()).toEqual(['alex', 'live', 'run', 'sister']);
  });

  it('splits lines and sentence ends', () => {
    expect(sentencesOf('a b. c d!\n\ne f? g')).toEqual(['a b.', 'c d!', 'e f?', 'g']);
  });
});

describe('extractiveReader', () => {
  const reader = extractiveReader({ budgetTokens: 1000 });

  it('answers with the sentence that shares the most content words with the question', async () => {
    const out = await reader.answer(question('What is my dog named?'), context);
    expect(out).toEqual({
      status: 'answered',
      text: 'The dog is named Biscuit!',
      tokens: { prompt: 0, completion: 0 },
      model: 'extractive',
      context: ['m1', 'm2', 'm3'],
    });
    const where = await reader.answer(question('Where does my sister live?'), context);
    expect(where.status === 'answered' && where.text).toBe('user: My sister lives in Denver.');
  });

  it('breaks a tie by rank: the higher-ranked item, then the earlier sentence', () => {
    const tied: ContextItem[] = [
      { id: 'low', text: 'Denver has a zoo.' },
      { id: 'high', text: 'We flew to Denver. Denver was sunny.' },
    ];
    expect(bestSentence('Denver?', tied)).toEqual({ text: 'Denver has a zoo.', itemId: 'low', overlap: 1 });
    expect(bestSentence('Denver?', [tied[1] as ContextItem, tied[0] as ContextItem])).toEqual({ text: 'We flew to Denver.', itemId: 'high', overlap: 1 });
  });

  it('says it does not know when no sentence shares a content word, and when the context is empty', async () => {
    const none = await reader.answer(question('Which bank holds the mortgage?'), context);
    expect(none.status === 'answered' && none.text).toBe(EXTRACTIVE_DONT_KNOW);
    const empty = await reader.answer(question('What is the name of the dog?'), []);
    expect(empty).toMatchObject({ status: 'answered', text: EXTRACTIVE_DONT_KNOW, context: [] });
  });

  it('reads only what the budget lets a reader see: the top-ranked items', async () => {
    const small = extractiveReader({ budgetTokens: 20 });
    const out = await small.answer(question('Where do I run on Sunday mornings?'), context);
    // m3 holds the answer but is ranked third; 20 tokens hold only m1.
    expect(out).toMatchObject({ status: 'answered', text: EXTRACTIVE_DONT_KNOW, context: ['m1'] });
    expect(small).toMatchObject({ id: 'extractive', local: true, model: 'extractive' });
    expect(small.fingerprint).not.toBe(reader.fingerprint);
  });
});
