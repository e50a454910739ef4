import { describe, expect, it } from 'vitest';
import { chunkCorpus, chunkSpans, memoriesHeader, V1_CHUNK_RULES } from './chunk.js';

const small = { ...V1_CHUNK_RULES, size: 24, overlap: 4 }; // boundaries accepted from 12 on
const pieces = (text: string, rules = small) => chunkSpans(text, rules).map((s) => text.slice(s.start, s.end));

describe('chunkSpans (docs/adr/0025-v1-chunking.md)', () => {
  it('pins the v1 numbers', () => {
    expect(V1_CHUNK_RULES).toEqual({ size: 1600, overlap: 320, minBoundary: 0.5, separators: ['. ', '\n', ' '] });
  });

  it('cuts after ". ", else a newline, else a space, past 50% of the size; else a hard cut; next chunk overlaps by 4', () => {
    const text = 'Hi. Alpha beta gamma. Delta. Epsilon zeta\nEta theta iota kappa lambda muNuXiOmicronPiRhoSigmaTau';
    expect(pieces(text)).toEqual([
      // window "Hi. Alpha beta gamma. De": the last ". " ends at 21 >= 12: cut keeps the period.
      'Hi. Alpha beta gamma.',
      // from 21 - 4 = 17, window "mma. Delta. Epsilon zeta": the last ". " ends at 11 < 12 (too early), no
      // newline, the last space at 19: cut there.
      'mma. Delta. Epsilon',
      // from 36 - 4, window "ilon zeta\nEta theta iota": the newline at 9 is too early; the space at 19.
      'ilon zeta\nEta theta',
      'heta iota kappa lambda',
      // window "mbda muNuXiOmicronPiRhoS": its only space at 4 is too early: a hard cut at 24.
      'mbda muNuXiOmicronPiRhoS',
      'RhoSigmaTau',
    ]);
  });

  it('takes a newline when no ". " is past the threshold', () => {
    // window "one two three four\nfive ": no ". ", the newline at 18 >= 12: cut there (the newline left out);
    // from 18 - 4 = 14, window "four\nfive six seven eigh": the newline at 4 is too early, the last space at 19.
    expect(pieces('one two three four\nfive six seven eight nine')).toEqual(['one two three four', 'four\nfive six seven', 'even eight nine']);
  });

  it('leaves a text no longer than the size whole, and refuses an overlap that would not advance', () => {
    expect(chunkSpans('x'.repeat(1600))).toEqual([{ start: 0, end: 1600 }]);
    expect(chunkSpans('')).toEqual([{ start: 0, end: 0 }]);
    expect(() => chunkSpans('abc', { ...small, overlap: 12 })).toThrow(/overlap/);
  });

  it('on v1 numbers: sentences of 100 characters give chunks of 16 sentences, each step 1,600 - 320', () => {
    // 40 sentences "S00 xxx...x. " of exactly 100 characters (with the trailing space): every ". " ends a sentence.
    const sentence = (i: number) => `S${String(i).padStart(2, '0')} ${'x'.repeat(94)}. `;
    const text = Array.from({ length: 40 }, (_, i) => sentence(i)).join('');
    const spans = chunkSpans(text);
    // window [0, 1600) holds 16 whole sentences; the last ". " sits at 1598, so the cut is at 1599 (period kept).
    expect(spans[0]).toEqual({ start: 0, end: 1599 });
    // next start 1599 - 320 = 1279, mid-sentence; its window ends at 2879, the last ". " before it at 2798.
    expect(spans[1]).toEqual({ start: 1279, end: 2799 });
    expect(spans.at(-1)?.end).toBe(text.length);
    for (let i = 1; i < spans.length; i++) expect(spans[i - 1]!.end - spans[i]!.start).toBe(320);
  });
});

describe('chunkCorpus', () => {
  it('heads every chunk with "# Memories from YYYY-MM-DD" from the document timestamp, ids <doc>#<n>', () => {
    const text = `${'a'.repeat(1000)}. ${'b'.repeat(1000)}`;
    const chunks = chunkCorpus([
      { id: 'd1', text, timestamp: '2023-05-08T13:56:00' },
      { id: 'd2', text: 'short' },
    ]);
    expect(chunks.map((c) => [c.doc.id, c.source])).toEqual([
      ['d1#0', 'd1'],
      ['d1#1', 'd1'],
      ['d2#0', 'd2'],
    ]);
    expect(chunks[0]!.doc.text).toBe(`# Memories from 2023-05-08\n${'a'.repeat(1000)}.`);
    // the second chunk starts 320 before the cut at 1001
    expect(chunks[1]!.doc.text).toBe(`# Memories from 2023-05-08\n${'a'.repeat(319)}. ${'b'.repeat(1000)}`);
    expect(chunks[2]!.doc.text).toBe('short');
    expect(memoriesHeader('2024-01-02')).toBe('# Memories from 2024-01-02');
    expect(memoriesHeader('yesterday')).toBeUndefined();
  });
});
