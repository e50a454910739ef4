import { describe, expect, it } from 'vitest';
import type { Document, Query } from '../../evalset/types.js';
import { hashEmbed } from '../../arms/hash-embed/index.js';
import { ContentStore } from '../cache/index.js';
import { memoryLogger } from '../log.js';
import { recencyRerankNode } from './recency-rerank.js';
import { sessionNode } from './session.js';
import type { BoundNode, NodeContext, ScopeData } from './types.js';
import { tempDir } from '../testing/temp.js';

const root = tempDir('session-node');
const ctx: NodeContext = { cache: new ContentStore(root), log: memoryLogger(), workDir: root, env: {} };
const scopeOf = (documents: Document[], queries: Query[]): ScopeData => ({
  scope: 'conv',
  documents,
  queries,
  corpusFingerprint: 'c',
  queriesFingerprint: 'q',
});
const bound = (r: { node: BoundNode } | { problems: readonly string[] }) => {
  if ('problems' in r) throw new Error(r.problems.join('\n'));
  return r.node;
};

/** Day d, minute m: sessions are a day apart, turns of one session a minute apart. */
const turn = (id: string, d: number, m: number, text: string): Document => ({
  id,
  text,
  timestamp: `2023-05-0${d}T10:${String(m).padStart(2, '0')}:00`,
  metadata: { speaker: m % 2 === 0 ? 'Ann' : 'Bob' },
});

describe('session node', () => {
  const docs = [
    turn('a1', 1, 0, 'We talked about the garden.'),
    turn('a2', 1, 1, 'Tomatoes grow in the garden.'),
    turn('a3', 1, 2, 'The garden needs water.'),
    turn('a4', 1, 3, 'I will plant basil in the garden.'),
    turn('b1', 2, 0, 'Short chat about a concert.'),
    turn('b2', 2, 1, 'The concert was loud.'),
    turn('c1', 3, 0, 'Nothing about plants here.'),
  ];

  it('summarises sessions of 4+ messages only, and a kept session stands for its messages', async () => {
    const node = bound(sessionNode.bind({ kind: 'session', params: { arm: { kind: 'hash-embed' } }, inputs: [], topK: 10 }));
    expect(node.kind).toBe('session(hash-embed)');
    expect(node.params).toMatchObject({ gapMinutes: 30, minMessages: 4, maxSessions: 3, blend: { halfLifeHours: 72, sessionBonus: 1.25, windowPenalty: 0.5 } });
    const run = await node.create(ctx).runScope(scopeOf(docs, [{ id: 'q', text: 'garden basil', stratum: 's' }]), [], 10);
    expect(run.indexStats).toMatchObject({ sessions: 3, summaries: 1, documents: 8 });
    const ids = run.results['q']!.map(([d]) => d);
    // Every id is a message of the eval set (no summary id leaks into the run).
    expect(ids.every((d) => docs.some((x) => x.id === d))).toBe(true);
    // The garden session is a hit: all four of its messages lead, ordered by query-word overlap (a4 has both).
    expect(ids.slice(0, 4).sort()).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(ids[0]).toBe('a4');
  });

  it('search: separate puts the query header on session search only (garbanzo), unless messageHeader says so', async () => {
    const cos = (a: string, b: string) => {
      const [u, v] = [hashEmbed(a), hashEmbed(b)];
      return u.reduce((acc, x, i) => acc + x * (v[i] as number), 0);
    };
    const q: Query = { id: 'q', text: 'garden basil', stratum: 's' };
    const raw = (extra: object) =>
      bound(sessionNode.bind({ kind: 'session', params: { arm: { kind: 'hash-embed' }, blend: false, maxSessions: 0, ...extra }, inputs: [], topK: 10 }));
    const scoreOf = async (node: BoundNode) => new Map((await node.create(ctx).runScope(scopeOf(docs, [q]), [], 10)).results['q']);
    const header = '[chat: conv | participants: Ann, Bob]';
    // Joint search: one headed query over messages and summaries alike (the choice garbanzo's spec does not make).
    expect((await scoreOf(raw({}))).get('a4')).toBeCloseTo(cos(`${header}\ngarden basil`, docs[3]!.text), 6);
    const separate = raw({ search: 'separate' });
    expect(separate.fingerprint).toMatchObject({ search: 'separate', messageHeader: false });
    expect((await scoreOf(separate)).get('a4')).toBeCloseTo(cos('garden basil', docs[3]!.text), 6);
    expect((await scoreOf(raw({ search: 'separate', messageHeader: true }))).get('a4')).toBeCloseTo(cos(`${header}\ngarden basil`, docs[3]!.text), 6);
    // A joint search cannot head message search apart; recency overrides the blend's weight, for a grid.
    expect(sessionNode.bind({ kind: 'session', params: { arm: { kind: 'hash-embed' }, messageHeader: true }, inputs: [], topK: 10 })).toEqual({
      problems: [expect.stringMatching(/^params\.messageHeader: .*search: separate/)],
    });
    expect(raw({ blend: {}, recency: 0 }).params).toMatchObject({ blend: { recency: 0, base: 0.6 } });
    expect(raw({}).fingerprint).not.toHaveProperty('search');
  });

  it('search: separate merges message and session hits: without recency the blend orders them by relevance and overlap', async () => {
    const node = bound(sessionNode.bind({ kind: 'session', params: { arm: { kind: 'hash-embed' }, search: 'separate', recency: 0 }, inputs: [], topK: 10 }));
    const run = await node.create(ctx).runScope(scopeOf(docs, [{ id: 'q', text: 'garden basil', stratum: 's' }]), [], 10);
    expect(run.indexStats).toMatchObject({ sessions: 3, summaries: 1, sessionIndexDocuments: 1 });
    const ids = run.results['q']!.map(([d]) => d);
    expect(ids.slice(0, 4).sort()).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(ids[0]).toBe('a4');
  });

  it('keeps at most maxSessions sessions', async () => {
    const many = Array.from({ length: 5 }, (_, s) => Array.from({ length: 4 }, (_, m) => turn(`s${s}m${m}`, s + 1, m, `garden talk number ${s}`))).flat();
    const node = bound(sessionNode.bind({ kind: 'session', params: { arm: { kind: 'hash-embed' }, maxSessions: 1, fetch: 100 }, inputs: [], topK: 100 }));
    const run = await node.create(ctx).runScope(scopeOf(many, [{ id: 'q', text: 'garden talk', stratum: 's' }]), [], 100);
    const res = run.results['q']!;
    // One session expanded at the session's score (plus a tie-break below 1e-3); the other 16 messages as message
    // hits at a lower blend score.
    const top = res[0]![1];
    expect(res.filter(([, s]) => s >= top - 1e-3)).toHaveLength(4);
    expect(res).toHaveLength(20);
  });
});

describe('recency-rerank node', () => {
  it('reorders an input by the blend: a 72 h older document loses 0.2 x (1 - 1/2) of recency', async () => {
    const docs: Document[] = [
      { id: 'old', text: 'hiking trip', timestamp: '2023-05-01T12:00:00' },
      { id: 'new', text: 'hiking trip', timestamp: '2023-05-04T12:00:00' },
    ];
    const node = bound(recencyRerankNode.bind({ kind: 'recency-rerank', params: {}, inputs: [], topK: 10 }));
    const q: Query = { id: 'q', text: 'hiking trip', stratum: 's', metadata: { date: '2023-05-04T12:00:00' } };
    const results: Record<string, [string, number][]> = {
      q: [
        ['old', 10],
        ['new', 9],
      ],
    };
    const input = { indexStats: {}, indexMs: 0, searchMs: 0, queryMs: {}, results };
    const run = await node.create(ctx).runScope(scopeOf(docs, [q]), [input], 10);
    const [first, second] = run.results['q']!;
    expect(first).toEqual(['new', expect.closeTo(0.6 * (9 / 10) + 0.2 * 1 + 0.2 * 1, 12)]);
    expect(second).toEqual(['old', expect.closeTo(0.6 * 1 + 0.2 * 0.5 + 0.2 * 1, 12)]);
  });
});
