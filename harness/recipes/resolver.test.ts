import { describe, expect, it } from 'vitest';
import { hashEmbed } from '../../arms/hash-embed/index.js';
import { jaro, jaroWinkler, metaphone, normalizeName, phoneticKey, RESOLVER_DEFAULTS, resolveEntity, soundex } from './resolver.js';

describe('jaroWinkler', () => {
  it("reproduces Winkler's published examples", () => {
    expect(jaroWinkler('MARTHA', 'MARHTA')).toBeCloseTo(0.961, 3);
    expect(jaroWinkler('DWAYNE', 'DUANE')).toBeCloseTo(0.84, 3);
    expect(jaroWinkler('DIXON', 'DICKSONX')).toBeCloseTo(0.813, 3);
    // MARTHA/MARHTA: 6 matches, 1 transposition: jaro = (6/6 + 6/6 + 5/6) / 3
    expect(jaro('MARTHA', 'MARHTA')).toBeCloseTo((1 + 1 + 5 / 6) / 3, 12);
    expect(jaroWinkler('abc', '')).toBe(0);
  });

  it('puts "Phillip"/"Filip" below the 0.9 threshold and "Melanie"/"Melany" above', () => {
    expect(RESOLVER_DEFAULTS.fuzzyThreshold).toBe(0.9);
    // python (the same formulas): jaro("phillip", "filip") = 0.7905, no common prefix
    expect(jaroWinkler('phillip', 'filip')).toBeCloseTo(0.7904761904761904, 12);
    // jaro 0.8492 + 4 * 0.1 * (1 - 0.8492)
    expect(jaroWinkler('melanie', 'melany')).toBeCloseTo(0.8492063492063492 + 0.4 * (1 - 0.8492063492063492), 12);
  });
});

describe('metaphone', () => {
  it('keys names by sound (original Metaphone rules)', () => {
    expect(metaphone('Phillip')).toBe('FLP');
    expect(metaphone('Filip')).toBe('FLP');
    expect(metaphone('Katherine')).toBe('K0RN');
    expect(metaphone('Catherine')).toBe('K0RN');
    expect(metaphone('Knight')).toBe('NT');
    expect(metaphone('Wright')).toBe('RT');
    expect(metaphone('Xavier')).toBe('SFR');
    expect(metaphone('Smith')).toBe('SM0');
    expect(phoneticKey('Phillip Smith')).toBe('FLP SM0');
    expect(normalizeName("Dr.  O'Neil")).toBe('dr o neil');
  });
});

describe('soundex: the Soundex-style key WorldDB describes', () => {
  it('codes American Soundex (the National Archives examples) after the PH, CK, KN, WR rewrites', () => {
    // NARA's published examples: H and W do not separate equal digits (Ashcraft), vowels do (Tymczak).
    expect(['Robert', 'Rupert', 'Rubin', 'Ashcraft', 'Ashcroft', 'Tymczak', 'Pfister', 'Honeyman', 'Lee'].map(soundex)).toEqual([
      'R163',
      'R163',
      'R150',
      'A261',
      'A261',
      'T522',
      'P236',
      'H555',
      'L000',
    ]);
    // The rewrites: Phillip -> Fillip, Knight -> Night, Wright -> Right, Jackson -> Jakson.
    expect(soundex('Phillip')).toBe('F410');
    expect(soundex('Filip')).toBe('F410');
    expect(soundex('Knight')).toBe(soundex('Night'));
    expect(soundex('Wright')).toBe('R230');
    expect(soundex('Jackson')).toBe('J250');
    expect(soundex("O'Neil")).toBe('O540');
    expect(soundex('42')).toBe('');
    expect(phoneticKey('Phillip Smith', 'soundex')).toBe('F410 S530');
  });

  it('is the phonetic tier when asked: Filip reaches Phillip; Jon and Jan still collide (J500), as under Metaphone', () => {
    const opts = { ...RESOLVER_DEFAULTS, phonetic: 'soundex' as const };
    expect(resolveEntity('Filip', [{ id: 'p2', name: 'Phillip' }], opts)).toEqual({ id: 'p2', tier: 'phonetic', score: 1 });
    expect(resolveEntity('Jon', [{ id: 'j', name: 'Jan' }], opts)).toEqual({ id: 'j', tier: 'phonetic', score: 1 });
    expect(resolveEntity('Maria', [{ id: 'p2', name: 'Phillip' }], opts)).toBeUndefined();
  });
});

describe('resolveEntity: the tiers in order', () => {
  const people = [
    { id: 'p1', name: 'Melanie', aliases: ['Mel'] },
    { id: 'p2', name: 'Phillip' },
    { id: 'p3', name: 'Caroline Smith' },
  ];
  const withEmbed = { ...RESOLVER_DEFAULTS, embed: (s: string) => hashEmbed(s) };

  it('exact or alias, then Jaro-Winkler, then phonetic, then embedding cosine, else a new entity', () => {
    expect(resolveEntity('MELANIE', people)).toEqual({ id: 'p1', tier: 'exact', score: 1 });
    expect(resolveEntity('mel', people)).toEqual({ id: 'p1', tier: 'exact', score: 1 });
    expect(resolveEntity('Melany', people)).toEqual({ id: 'p1', tier: 'fuzzy', score: jaroWinkler('melany', 'melanie') });
    expect(resolveEntity('Filip', people)).toEqual({ id: 'p2', tier: 'phonetic', score: 1 });
    // same words in another order: no exact, fuzzy or phonetic match, cosine 1 on the hashing embedding
    expect(resolveEntity('Smith, Caroline', people)).toBeUndefined();
    expect(resolveEntity('Smith, Caroline', people, withEmbed)).toEqual({ id: 'p3', tier: 'embedding', score: expect.closeTo(1, 6) });
    expect(resolveEntity('Quentin', people, withEmbed)).toBeUndefined();
  });
});
