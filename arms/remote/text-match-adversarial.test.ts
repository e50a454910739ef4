import { describe, expect, it } from 'vitest';
import type { Document } from '../../evalset/types.js';
import { type MappedBy, TEXT_MATCH_DEFAULT, TextMatcher, negations, normaliseText } from './text-match.js';

/**
 * Adversarial rewrites of memories, each with the mapping a user expects: text that restates a memory (exact,
 * re-spaced, re-cased, quoted in part, reordered) maps to it; text that says more or the opposite (negated,
 * padded, two memories joined) maps to no Document and goes to the judge as a Returned item.
 */
const MEMORIES = {
  m1: 'Alex adopted a beagle named Biscuit in March and the dog loves the beach.',
  m2: 'Alex is allergic to peanuts and always carries an EpiPen.',
  m3: 'Alex does not drink coffee after noon because it ruins his sleep.',
  m4: 'Sam moved to Lisbon in 2021 for a job at a design studio.',
  m5: 'Alex runs seven kilometres every Tuesday morning along the river.',
  m6: 'Sam likes green tea.',
  m7: "Alex's US passport (no. 548812093) expires on August 21, 2027.",
} as const;
const docs: Document[] = Object.entries(MEMORIES).map(([id, text]) => ({ id, text }));
const text = (id: keyof typeof MEMORIES) => MEMORIES[id];
/** 160,000 words around a memory. */
const PADDING = 'lorem ipsum dolor sit amet '.repeat(32_000);

type Expected = readonly [docId: string, by: MappedBy] | 'returned';
const cases: readonly (readonly [kind: string, text: string, expected: Expected])[] = [
  ['exact text', text('m2'), ['m2', 'text']],
  ['whitespace variant', '  Alex is allergic   to peanuts,\n\tand always carries an EpiPen ', ['m2', 'text']],
  ['case variant', 'ALEX IS ALLERGIC TO PEANUTS AND ALWAYS CARRIES AN EPIPEN.', ['m2', 'text']],
  ['negation: "it is false that"', `It is false that ${text('m2')}`, 'returned'],
  ['negation: "not" inserted', 'Alex is not allergic to peanuts and always carries an EpiPen.', 'returned'],
  ['negation: contraction', "Alex isn't allergic to peanuts and always carries an EpiPen.", 'returned'],
  ['negation: "never" over a subset', 'Alex never adopted a beagle named Biscuit in March', 'returned'],
  ['negation dropped from a negated memory', 'Alex does drink coffee after noon because it ruins his sleep', 'returned'],
  ['partial quote after its negation', 'drink coffee after noon', 'returned'],
  ['negated memory quoted with its negation', 'Alex does not drink coffee after noon', ['m3', 'text']],
  ['negated memory reordered, negation kept', 'After noon Alex does not drink coffee', ['m3', 'fuzzy']],
  ['padding: 160,000 words after', `${text('m2')} ${PADDING}`, 'returned'],
  ['padding: 160,000 words around', `${PADDING} ${text('m1')} ${PADDING}`, 'returned'],
  ['padding: twice the words', `${text('m5')} and then he eats breakfast with his sister at the cafe`, 'returned'],
  ['a short preamble, within the length ratio', `The user said ${text('m2')}`, ['m2', 'fuzzy']],
  ['partial quote', 'allergic to peanuts', ['m2', 'text']],
  ['partial quote, mid-sentence', 'in March and the dog loves', ['m1', 'text']],
  ['partial quote too short to say which', 'Biscuit', 'returned'],
  ['partial quote after "no." (a number, not a negation)', '548812093 expires on August 21', ['m7', 'text']],
  ['concatenation of two memories', `${text('m2')} ${text('m5')}`, 'returned'],
  ['concatenation with a short memory, within the length ratio', `${text('m1')} ${text('m6')}`, 'returned'],
  ['reordered fact', 'Biscuit is a beagle Alex adopted in March', ['m1', 'fuzzy']],
];

describe('text mapping of adversarial rewrites', () => {
  const m = new TextMatcher(docs, TEXT_MATCH_DEFAULT);

  it.each(cases)('%s', (_kind, t, expected) => {
    const got = m.map({ text: t });
    if (expected === 'returned') expect(got.by).toBe('returned');
    else expect(got).toEqual({ docId: expected[0], by: expected[1] });
  });

  it('maps a 160,000-word text without hanging (seconds at most, on a loaded machine)', () => {
    const fresh = new TextMatcher(docs, TEXT_MATCH_DEFAULT);
    const t0 = performance.now();
    expect(fresh.map({ text: `${text('m3')} ${PADDING}` }).by).toBe('returned');
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('a looser maxLengthRatio credits the longer text again, as documented', () => {
    const loose = new TextMatcher(docs, { ...TEXT_MATCH_DEFAULT, maxLengthRatio: 3 });
    expect(loose.map({ text: `${text('m5')} and then he eats breakfast with his sister at the cafe` })).toEqual({ docId: 'm5', by: 'fuzzy' });
  });

  it('counts negations, contractions included', () => {
    const count = (s: string) => negations(normaliseText(s).split(' '));
    expect(count("Alex isn't here, doesn't care and will never go; it is not false")).toBe(5);
    expect(count('Dan is on tonight, no t-shirt')).toBe(1);
    expect(count("Alex's passport (no. 548812093) expires in 2027")).toBe(0);
  });
});
