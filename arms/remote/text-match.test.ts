import { describe, expect, it } from 'vitest';
import type { Document } from '../../evalset/types.js';
import { HitRanker, mapResults, mapTextResults, mappingSchema } from './mapping.js';
import { TEXT_MATCH_DEFAULT, TextMatcher, isReturnedId, normaliseText, returnedId } from './text-match.js';

const docs: Document[] = [
  { id: 'm1', text: 'Alex adopted a beagle named Biscuit in March. The dog loves the beach.' },
  { id: 'm2', text: 'Alex runs 7 km every Tuesday morning along the river.' },
  { id: 'm3', text: 'Alex is allergic to peanuts and carries an epipen.' },
  { id: 'm4', text: 'Alex runs 5 km every Friday evening along the canal.' },
];

describe('TextMatcher', () => {
  const m = new TextMatcher(docs, TEXT_MATCH_DEFAULT);

  it('maps by id first, whatever the text says', () => {
    expect(m.map({ docId: 'm3', text: 'something else entirely' })).toEqual({ docId: 'm3', by: 'id' });
  });

  it('maps equal text after normalising case, punctuation and width', () => {
    expect(normaliseText('  ALEX is allergic—to PEANUTS, and carries an EpiPen!! ')).toBe('alex is allergic to peanuts and carries an epipen');
    expect(m.map({ text: 'alex is ALLERGIC to peanuts; and carries an epipen' })).toEqual({ docId: 'm3', by: 'text' });
  });

  it('maps a text contained in exactly one Document, as whole words', () => {
    expect(m.map({ docId: 'f-17', text: 'The dog loves the beach' })).toEqual({ docId: 'm1', by: 'text' });
    // "km every" is in two documents: contained in both, no single Document to map to.
    const two = new TextMatcher(docs, { ...TEXT_MATCH_DEFAULT, minTokens: 2 });
    expect(two.map({ text: 'km every' }).by).toBe('returned');
  });

  it('maps a rewritten fact by its one best fuzzy match, and refuses a tie', () => {
    expect(m.map({ text: 'Biscuit is a beagle Alex adopted in March' })).toEqual({ docId: 'm1', by: 'fuzzy' });
    // Equally close to the Tuesday and the Friday run: mapping would be a guess.
    expect(m.map({ text: 'Alex runs km every along the' }).by).toBe('returned');
  });

  it('leaves unrelated text as a Returned item with a content-addressed id', () => {
    const r = m.map({ text: 'The user prefers dark mode in every editor' });
    expect(r.by).toBe('returned');
    expect(r.docId).toBe(returnedId(normaliseText('the user prefers dark mode in every editor')));
    expect(isReturnedId(r.docId)).toBe(true);
    expect(m.map({ text: 'the user PREFERS dark mode in every editor.' }).docId).toBe(r.docId);
  });

  it('keeps short texts out of containment and fuzzy matching', () => {
    expect(m.map({ text: 'Biscuit' }).by).toBe('returned');
    expect(new TextMatcher(docs, { ...TEXT_MATCH_DEFAULT, minTokens: 1 }).map({ text: 'Biscuit' })).toEqual({ docId: 'm1', by: 'text' });
  });

  it('turns fuzzy matching off at 101', () => {
    const strict = new TextMatcher(docs, { ...TEXT_MATCH_DEFAULT, fuzzy: 101 });
    expect(strict.map({ text: 'Biscuit is a beagle Alex adopted in March' }).by).toBe('returned');
  });

  it('keeps an unknown id without text as it came', () => {
    expect(m.map({ docId: 'x9' })).toEqual({ docId: 'x9', by: 'unknown-id' });
  });
});

describe('hits with text', () => {
  const mapping = mappingSchema.parse({ results: '$.hits[*]', docId: '$.id', text: '$.memory' });

  it('maps JSON hits with an id, a text, or both, and refuses a hit with neither', () => {
    const hits = mapResults({ hits: [{ id: 'm2' }, { memory: 'x y z' }, { id: 'f1', memory: 'a b c' }] }, mapping);
    expect(hits).toEqual([
      { docId: 'm2', score: 1 },
      { text: 'x y z', score: 0.5 },
      { docId: 'f1', text: 'a b c', score: 1 / 3 },
    ]);
    expect(() => mapResults({ hits: [{ other: 1 }] }, mapping)).toThrow(/no string docId at \$\.id nor text at \$\.memory/);
    expect(() => mapResults({ hits: [{ memory: 3 }] }, mapping)).toThrow(/a number at \$\.memory, not text/);
  });

  it('reads a (?<text>) group of a plain-text answer', () => {
    const body = '1. Alex is allergic to peanuts\n2. Biscuit is a beagle\n';
    expect(mapTextResults(body, '^\\d+\\. (?<text>.+)$')).toEqual([
      { text: 'Alex is allergic to peanuts', score: 1 },
      { text: 'Biscuit is a beagle', score: 0.5 },
    ]);
  });

  it('ranks mapped hits: one result per Document at its best rank, text kept only for Returned items, counted', () => {
    const ranker = new HitRanker(TEXT_MATCH_DEFAULT);
    ranker.index(docs);
    const ranked = ranker.rank([
      { docId: 'f1', text: 'The dog loves the beach', score: 0.9 },
      { docId: 'f2', text: 'Biscuit is a beagle Alex adopted in March', score: 0.8 },
      { docId: 'm2', score: 0.7 },
      { docId: 'f3', text: 'The user prefers dark mode in every editor', score: 0.6 },
    ]);
    expect(ranked.map((d) => d.docId.replace(/^returned:.*/, 'returned'))).toEqual(['m1', 'm2', 'returned']);
    expect(ranked[2]?.text).toBe('The user prefers dark mode in every editor');
    expect(ranked[0]?.text).toBeUndefined();
    expect(ranker.stats()).toEqual({ mappedById: 1, mappedByText: 1, mappedByFuzzy: 0, returnedItems: 1 });
    ranker.reset();
    expect(ranker.stats()).toEqual({ mappedById: 0, mappedByText: 0, mappedByFuzzy: 0, returnedItems: 0 });
  });

  it('without text matching keeps every hit as it came and reports no stats', () => {
    const ranker = new HitRanker(undefined);
    ranker.index(docs);
    expect(ranker.rank([{ docId: 'zz', score: 1 }])).toEqual([{ docId: 'zz', score: 1 }]);
    expect(ranker.stats()).toBeUndefined();
  });
});
