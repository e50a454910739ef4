import { describe, expect, it } from 'vitest';
import { checkResults, faultSentence } from './result-check.js';
import type { ResultCheck, ScopeData, ScopeResults } from './types.js';

function scope(name: string, docs: readonly string[], queries: readonly string[]): ScopeData {
  return {
    scope: name,
    documents: docs.map((id) => ({ id, text: id })),
    queries: queries.map((id) => ({ id, text: id, stratum: 's', scope: name })),
    corpusFingerprint: name,
    queriesFingerprint: name,
  };
}

const A = scope('a', ['a1', 'a2'], ['qa1', 'qa2']);
const B = scope('b', ['b1', 'b2'], ['qb1', 'qb2']);
const run = (results: ScopeResults) => ({ results });

describe('checkResults', () => {
  it('a healthy run has no check at all', () => {
    expect(checkResults([run({ qa1: [['a1', 1]], qa2: [] }), run({ qb1: [['b2', 1]], qb2: [['b1', 2]] })], [A, B], [])).toBeUndefined();
  });

  it('empty: at least half the queries without results, counted over every scope', () => {
    const half = checkResults([run({ qa1: [], qa2: [['a1', 1]] }), run({ qb1: [], qb2: [['b1', 1]] })], [A, B], []);
    expect(half).toEqual({ queries: 4, empty: 2, returned: 2, unknown: 0, faults: ['empty'] });
    const fewer = checkResults([run({ qa1: [], qa2: [['a1', 1]] }), run({ qb1: [['b1', 1]], qb2: [['b1', 1]] })], [A, B], []);
    expect(fewer).toBeUndefined();
  });

  it("unknown: more than half the returned ids outside their own scope's corpus (another scope's id is unknown too)", () => {
    const c = checkResults(
      [
        run({
          qa1: [
            ['b1', 2],
            ['x', 1],
          ],
          qa2: [['a1', 1]],
        }),
        run({ qb1: [['b1', 1]], qb2: [['a2', 1]] }),
      ],
      [A, B],
      [],
    );
    expect(c).toEqual({ queries: 4, empty: 0, returned: 5, unknown: 3, faults: ['unknown'], knownId: 'a1' });
    // Exactly half is not "mostly".
    expect(
      checkResults(
        [
          run({
            qa1: [
              ['x', 2],
              ['a1', 1],
            ],
            qa2: [
              ['a2', 1],
              ['y', 0],
            ],
          }),
        ],
        [A],
        [],
      ),
    ).toBeUndefined();
  });

  it('a derived run inherits unknown ids without a fault of its own, but is empty in its own right', () => {
    const bad: ResultCheck = { queries: 2, empty: 2, returned: 0, unknown: 0, faults: ['empty', 'unknown'] };
    const fused = run({ qa1: [['x', 1]], qa2: [] });
    expect(
      checkResults(
        [fused],
        [A],
        [
          { id: 'ok', check: undefined },
          { id: 'bad', check: bad },
        ],
      ),
    ).toEqual({
      queries: 2,
      empty: 1,
      returned: 1,
      unknown: 1,
      faults: ['empty'],
      emptyInputs: ['bad'],
    });
    expect(checkResults([fused], [A], [{ id: 'ok', check: undefined }])?.faults).toEqual(['empty', 'unknown']);
  });

  it('a scope without queries counts nothing; no queries at all is no fault', () => {
    expect(checkResults([run({})], [scope('c', ['c1'], [])], [])).toBeUndefined();
  });
});

describe('faultSentence', () => {
  it('names the counts and the cause, and quotes no returned id', () => {
    const c: ResultCheck = { queries: 4, empty: 0, returned: 5, unknown: 3, faults: ['unknown'], knownId: 'a1' };
    expect(faultSentence(c, 'unknown')).toBe(
      `3 of 5 returned ids are not in the eval set's corpus (its ids look like "a1"), so they score as not relevant: ids the eval set does not know; check the docId mapping / id template`,
    );
    expect(faultSentence({ ...c, empty: 1, emptyInputs: ['e'] }, 'empty')).toBe(
      'its search returns nothing for most queries: no results for 1 of 4 queries, which score 0 as if nothing relevant existed; its input e returns nothing for most queries too (see there)',
    );
  });
});

describe('the empty-results hint and the store check', () => {
  const stats = (sampled: number, top10: number) => ({
    storeCheckSampled: sampled,
    storeCheckRank1: top10,
    storeCheckTop10: top10,
    storeCheckMissing: sampled - top10,
  });
  const empty = { qa1: [], qa2: [] };

  it('a store check that found memories is counted over scopes, and the hint does not suggest an empty store', () => {
    const c = checkResults(
      [
        { results: empty, indexStats: stats(2, 2) },
        { results: { qb1: [], qb2: [] }, indexStats: stats(2, 1) },
      ],
      [A, B],
      [],
    );
    expect(c?.storeCheck).toEqual({ sampled: 4, found: 3 });
    const sentence = faultSentence(c as ResultCheck, 'empty');
    expect(sentence).toContain('the store is not empty (its store check found 3 of 4 sampled memories by their own text)');
    expect(sentence).not.toMatch(/whether the store step stored anything/);
  });

  it('a store check that found nothing says so; without a store check the hint is as before', () => {
    const none = checkResults([{ results: empty, indexStats: stats(2, 0) }], [A], []) as ResultCheck;
    expect(faultSentence(none, 'empty')).toContain('its store check found none of 2 sampled memories by their own text either');
    const unchecked = checkResults([{ results: empty, indexStats: { documents: 2 } }], [A], []) as ResultCheck;
    expect(unchecked.storeCheck).toBeUndefined();
    expect(faultSentence(unchecked, 'empty')).toMatch(/; check the response mapping, whether the store step stored anything, or the server search$/);
  });

  it('a healthy run with a store check gets no check at all', () => {
    expect(checkResults([{ results: { qa1: [['a1', 1]], qa2: [['a2', 1]] }, indexStats: stats(2, 2) }], [A], [])).toBeUndefined();
  });
});
