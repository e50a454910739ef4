import { z } from 'zod';
import type { Arm, ArmFactory, ScoredDoc } from '../types.js';
import type { Corpus, Query } from '../../evalset/types.js';
import { sha256Hex } from '../../harness/cache/index.js';
import { compareRanked } from '../../harness/metrics/ranking.js';
import { MAX_TIMER_MS } from '../remote/limits.js';

const params = z
  .object({
    /** Mixed into every score so two fake arms with different seeds rank differently. */
    seed: z.number().int().default(0),
    /** Weight of lexical overlap against the seeded noise, in [0, 1]: 1 = pure overlap, 0 = pure noise. */
    signal: z.number().min(0).max(1).default(0.8),
    /** Milliseconds to wait per query, so tests can interrupt a run part-way (at most a Node.js timer's longest wait). */
    delayMs: z
      .number()
      .int()
      .min(0)
      .max(MAX_TIMER_MS, { error: `must be at most ${MAX_TIMER_MS} (about 24.8 days), the longest timer Node.js can set` })
      .default(0),
  })
  .strict();

/**
 * A deterministic arm for tests and dry runs: score = signal * (share of query words found in the document)
 * + (1 - signal) * hash noise in [0, 1). No I/O, no dependencies, same output on every machine.
 */
export const fakeArm: ArmFactory<typeof params> = {
  kind: 'fake',
  summary: 'deterministic word-overlap + seeded-noise scorer, for tests',
  params,
  // delayMs changes timing only, never the run, so it stays out of the fingerprint.
  fingerprint: (p) => ({ kind: 'fake', v: 1, seed: p.seed, signal: p.signal }),
  theoreticalMinScore: () => 0,
  sendsTextOffMachine: () => false,
  create(id, p): Arm {
    let docs: { id: string; words: Set<string> }[] = [];
    const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
    const noise = (qid: string, did: string) => parseInt(sha256Hex(`${p.seed}\u0000${qid}\u0000${did}`).slice(0, 8), 16) / 2 ** 32;
    return {
      id,
      async index(corpus: Corpus) {
        docs = corpus.map((d) => ({ id: d.id, words: words(`${d.title ?? ''} ${d.text}`) }));
        return { documents: docs.length };
      },
      async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
        if (p.delayMs > 0) await new Promise((r) => setTimeout(r, p.delayMs));
        const q = [...words(query.text)];
        const scored = docs.map((d) => {
          const overlap = q.length === 0 ? 0 : q.filter((w) => d.words.has(w)).length / q.length;
          return { docId: d.id, score: p.signal * overlap + (1 - p.signal) * noise(query.id, d.id) };
        });
        scored.sort((a, b) => compareRanked(a.score, a.docId, b.score, b.docId));
        return scored.slice(0, topK);
      },
    };
  },
};
