import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JudgmentRecord } from '../judge/store.js';
import { memoryLogger } from '../log.js';
import { runCaptured } from '../testing/cli.js';
import { tempJudgments } from '../testing/judgments.js';
import { queryCoverage } from './coverage.js';
import { type KappaOptions, runKappa } from './run.js';
import { allocate, type KappaItem, kappaSample, querySample } from './sample.js';

/** Labels by query (issue 27, item 1): whole queries per stratum, every judged pair of each, in query order. */

/** `queries` queries of 3 judged pairs each; the first `exact` queries are `exact`, the rest `multi-hop`. */
function records(queries: number, exact: number): JudgmentRecord[] {
  return Array.from({ length: queries * 3 }, (_, i) => {
    const q = Math.floor(i / 3);
    return {
      queryId: `q${String(q).padStart(2, '0')}`,
      docId: `d${i}`,
      stratum: q < exact ? 'exact' : 'multi-hop',
      status: 'judged' as const,
      grade: i % 4,
      samples: [i % 4],
      parseFailures: 0,
    };
  });
}
const items = (rs: readonly JudgmentRecord[]): KappaItem[] => rs.map((r) => ({ queryId: r.queryId, docId: r.docId, stratum: r.stratum }));

describe('querySample', () => {
  const pairs = items(records(30, 20));

  it('whole queries, in query order, every judged pair of each, multi-hop weighted 2 by default', () => {
    const s = querySample(pairs, { queries: 8, seed: 1 });
    const qs = [...new Set(s.map((p) => p.queryId))];
    expect(qs).toEqual([...qs].sort());
    for (const q of qs) expect(s.filter((p) => p.queryId === q)).toEqual(pairs.filter((p) => p.queryId === q));
    // 20 exact x 1 : 10 multi-hop x 2 = 1 : 1, so 4 and 4.
    expect(qs.filter((q) => Number(q.slice(1)) < 20)).toHaveLength(4);
    expect(qs.filter((q) => Number(q.slice(1)) >= 20)).toHaveLength(4);
  });

  it('deterministic for a seed, another seed draws other queries', () => {
    expect(querySample(pairs, { queries: 8, seed: 1 })).toEqual(querySample(pairs, { queries: 8, seed: 1 }));
    expect(querySample(pairs, { queries: 8, seed: 2 })).not.toEqual(querySample(pairs, { queries: 8, seed: 1 }));
  });

  it('per-stratum sizes are exact; the other strata share the rest', () => {
    const s = querySample(pairs, { queries: 10, perStratum: { 'multi-hop': 7 }, seed: 3 });
    const qs = [...new Set(s.map((p) => p.queryId))];
    expect(qs.filter((q) => Number(q.slice(1)) >= 20)).toHaveLength(7);
    expect(qs.filter((q) => Number(q.slice(1)) < 20)).toHaveLength(3);
  });

  it('the default takes 20% of the queries and at least 25 (all 30 here are 25)', () => {
    expect(new Set(querySample(pairs, { seed: 1 }).map((p) => p.queryId)).size).toBe(25);
  });
});

describe('allocate (shared by the pair and the query sample)', () => {
  it('largest remainder, capped, surplus passed on', () => {
    expect(
      allocate(
        new Map([
          ['a', 10],
          ['b', 2],
        ]),
        6,
        () => 1,
      ),
    ).toEqual(
      new Map([
        ['a', 5],
        ['b', 1],
      ]),
    );
    expect(
      allocate(
        new Map([
          ['a', 10],
          ['b', 2],
        ]),
        6,
        (s) => (s === 'b' ? 10 : 1),
      ),
    ).toEqual(
      new Map([
        ['a', 4],
        ['b', 2],
      ]),
    );
  });
  it('the pair sample keeps its size and strata', () => {
    const s = kappaSample(items(records(30, 20)), { size: 12, seed: 5 });
    expect(s).toHaveLength(12);
    expect(new Set(s.map((p) => p.stratum))).toEqual(new Set(['exact', 'multi-hop']));
  });
});

describe('queryCoverage', () => {
  it('a query is labelled when every judged pair of it is; one not judged is not asked for', () => {
    const rs: JudgmentRecord[] = [
      ...records(2, 2),
      { queryId: 'q00', docId: 'dx', stratum: 'exact', status: 'parse-failure', grade: null, samples: [], parseFailures: 1 },
    ];
    const c = queryCoverage(
      [
        { queryId: 'q00', docId: 'd0' },
        { queryId: 'q00', docId: 'd1' },
        { queryId: 'q00', docId: 'd2' },
        { queryId: 'q01', docId: 'd3' },
      ],
      rs,
    );
    expect(c).toEqual({ complete: ['q00'], incomplete: ['q01'] });
  });
});

function judgmentsDir(rs: JudgmentRecord[]): Promise<string> {
  const queries = [...new Map(rs.map((r) => [r.queryId, r.stratum] as const))];
  return tempJudgments('kappa-by-query', rs, 'fedcba9876543210', {
    files: {
      'es/corpus.jsonl': rs.map((r) => JSON.stringify({ id: r.docId, text: `memory ${r.docId}` })).join('\n'),
      'es/queries.jsonl': queries.map(([id, stratum]) => JSON.stringify({ id, text: `question ${id}`, stratum, qrels: {} })).join('\n'),
    },
  });
}

describe('harness kappa --by query', () => {
  it('a new session holds whole queries in order and says so; its file records by: query', async () => {
    const dir = await judgmentsDir(records(30, 20));
    const opts: KappaOptions = {
      judgments: join(dir, 'judgments'),
      reportOnly: false,
      by: 'query',
      queries: 6,
      seed: 42,
      on: 'binary',
      relevance: { relevantAt: 1, relevantFrom: 'the default' },
      threshold: 0.6,
      resamples: 100,
      level: 0.95,
    };
    const log = memoryLogger();
    const input = new PassThrough();
    input.end('q');
    const out = await runKappa(opts, { input, write: () => {}, log });
    expect(out.complete).toBe(false);
    expect(out.session?.by).toBe('query');
    expect(new Set(out.session?.items.map((i) => i.queryId)).size).toBe(6);
    expect(out.session?.items).toHaveLength(18);
    expect(log.lines.join('\n')).toContain('18 pairs (6 queries, every judged pair of each)');
    expect(JSON.parse(readFileSync(join(dir, 'judgments', 'kappa-session.json'), 'utf8')).by).toBe('query');
  });

  it('--labels as query-level labels: the report counts whole and partial queries', async () => {
    const rs = records(20, 10);
    const dir = await judgmentsDir(rs);
    // 17 whole queries (51 pairs) and one query labelled in part.
    const lines = rs.slice(0, 53).map((r) => `${r.queryId} 0 ${r.docId} ${r.grade}`);
    writeFileSync(join(dir, 'human.txt'), lines.join('\n'));
    const r = await runCaptured(['kappa', '--judgments', 'judgments', '--labels', 'human.txt', '--resamples', '100'], dir);
    expect(r.out).toContain('queries labelled whole (every judged pair): 17; in part: 1 (not usable as query-level labels until finished)');
  });

  it('flags that sample queries need --by query, and --sample is refused with it', async () => {
    const dir = await judgmentsDir(records(4, 2));
    const a = await runCaptured(['kappa', '--judgments', 'judgments', '--queries', '3'], dir);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--queries and --stratum-queries sample queries: add --by query');
    const b = await runCaptured(['kappa', '--judgments', 'judgments', '--by', 'query', '--sample', '3'], dir);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--sample counts pairs; with --by query give --queries');
    const c = await runCaptured(['kappa', '--judgments', 'judgments', '--by', 'query', '--stratum-queries', 'exact=x'], dir);
    expect(c.stderr).toContain('--stratum-queries exact=x: give stratum=N');
  });
});
