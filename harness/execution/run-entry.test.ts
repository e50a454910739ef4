import { describe, expect, it } from 'vitest';
import { ContentStore } from '../cache/index.js';
import { memoryLogger } from '../log.js';
import type { PlannedSystem } from '../systems/plan.js';
import type { ScopeData, ScopeRun } from '../systems/types.js';
import { tempDir } from '../testing/temp.js';
import { runEntry, runEntryCheck, runOfEntry } from './run-entry.js';
import { cachedScopeRun, runKey } from './scope-run.js';

const scope: ScopeData = {
  scope: undefined,
  documents: [
    { id: 'd1', text: '' },
    { id: 'd2', text: '' },
  ],
  queries: [
    { id: 'q2', text: 'x', stratum: 's' },
    { id: '10', text: 'y', stratum: 's' },
    { id: '2', text: 'z', stratum: 's' },
  ],
  corpusFingerprint: 'c',
  queriesFingerprint: 'q',
};

const run: ScopeRun = {
  indexStats: { documents: 2 },
  indexMs: 1.5,
  searchMs: 2.25,
  queryMs: { '10': 0.1, q2: 0.2, '2': 0.3 },
  results: {
    q2: [
      ['d2', 0.1 + 0.2],
      ['outside', -0],
      ['d1', Number.MIN_VALUE],
    ],
    '10': [],
    '2': [['d1', 1 / 3]],
  },
  returned: { outside: { text: 'a returned item' } },
};

const system = { fingerprintHash: 'f'.repeat(64) } as PlannedSystem;

/** The entry as the store hands it back: its JSON text parsed. */
const stored = (r: ScopeRun) => JSON.parse(JSON.stringify(runEntry(r, scope))) as unknown;

describe('the run cache entry (the typed shape the workers send)', () => {
  it('holds a run as it was computed: key order, every score bit (-0 too), returned items', () => {
    const entry = stored(run);
    expect(runEntryCheck(scope)(entry)).toBeUndefined();
    const back = runOfEntry(entry as ReturnType<typeof runEntry>, scope);
    expect(back).toEqual(run);
    expect(Object.keys(back.results)).toEqual(Object.keys(run.results));
    expect(Object.is(back.results['q2']?.[1]?.[1], -0)).toBe(true);
    expect(JSON.stringify(back)).toBe(JSON.stringify(run));
  });

  it('refuses an entry that does not decode to a run of every query of the scope', () => {
    const check = runEntryCheck(scope);
    const entry = stored(run) as Record<string, unknown>;
    // A version 2 entry: JSON pairs.
    expect(check({ ...run })).toBe('queryIds, extraDocs or latencyIds is not a list of ids');
    expect(check(null)).toBe('not an object');
    expect(check(stored({ ...run, results: { q2: [], '10': [] } }))).toBe('no results for query 2');
    expect(check({ ...entry, scores: Buffer.from(Float64Array.from([Number.NaN, 1, 2, 3]).buffer).toString('base64') })).toBe('score NaN is not finite');
    expect(check({ ...entry, docs: Buffer.from(Uint32Array.from([0, 9, 1, 0]).buffer).toString('base64') })).toBe(
      'document position 9 is outside the scope and its extra ids',
    );
    expect(check({ ...entry, offsets: Buffer.from(Uint32Array.from([0, 1]).buffer).toString('base64') })).toBe('offsets do not cover docs and scores');
    expect(check({ ...entry, scores: 'AAA' })).toBe('offsets, docs, scores or latencies is not a typed array');
    expect(check({ ...entry, returned: { x: 1 } })).toBe('returned is not an object of { text }');
  });

  it('is computed once, then read back equal; an unreadable entry is evicted and recomputed', async () => {
    const log = memoryLogger();
    const store = new ContentStore(tempDir('run-entry'), { log });
    let calls = 0;
    const compute = async () => {
      calls++;
      return run;
    };
    const first = await cachedScopeRun(store, system, scope, 10, compute);
    expect(first).toEqual({ run, computed: true });
    const second = await cachedScopeRun(store, system, scope, 10, compute);
    expect(second.computed).toBe(false);
    expect(JSON.stringify(second.run)).toBe(JSON.stringify(run));
    expect(calls).toBe(1);
    // A sealed entry in the old layout under this key (as if the version had not been bumped) is never misread.
    await store.put('run', runKey(system, scope, 10), JSON.stringify(run));
    const third = await cachedScopeRun(store, system, scope, 10, compute);
    expect(third.computed).toBe(true);
    expect(calls).toBe(2);
    expect(log.lines.join('\n')).toMatch(/queryIds, extraDocs or latencyIds is not a list of ids; evicted, recomputing/);
  });
});
