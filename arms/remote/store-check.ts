import pLimit from 'p-limit';
import { z } from 'zod';
import type { Corpus, Document, Query } from '../../evalset/types.js';
import { sha256Hex } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';
import type { ScoredDoc } from '../types.js';

/**
 * The store check of a remote arm that loads its server (docs/arms/remote-responses.md): after a scope's stores,
 * a seeded sample of the stored memories is searched by each one's own text. A store call that answered but
 * kept nothing (parallel writes overwriting one file) is invisible to the caller; a search for the memory's
 * verbatim text is the kindest query there is, so a memory it cannot find within 10 is counted lost.
 *
 * Default `maxLoss` 0.05: with the default 20 samples, one miss is tolerated (a server that merges
 * near-duplicate memories, a tokenizer that drops a one-word memory) and a second stops the run. A server that
 * loses a quarter of its stores then fails the check with probability 0.976 (binomial, 20 draws); the official
 * memory server under 4 parallel stores lost three quarters (kept 91 of 351) and cannot pass it.
 */
export const storeCheckSchema = z
  .object({
    /** Memories searched per scope (fewer when the scope has fewer); 0 turns the check off. */
    sample: z.number().int().min(0).max(10_000).default(20),
    /** The largest share of the sample that may be missing from the top 10 before the run stops (exit 1). */
    maxLoss: z.number().min(0).max(1).default(0.05),
    /** Which memories are sampled: the same seed and corpus always give the same sample. */
    seed: z.number().int().min(0).default(0),
  })
  .strict();
export type StoreCheck = z.output<typeof storeCheckSchema>;
export const STORE_CHECK_DEFAULT: StoreCheck = storeCheckSchema.parse({});

/** How deep a sampled memory may come back and still count as found. */
export const STORE_CHECK_DEPTH = 10;

/** Index-stat names of the check's counts (summed over scopes in the manifest and the report). */
export const STORE_CHECK_STATS = ['storeCheckSampled', 'storeCheckRank1', 'storeCheckTop10', 'storeCheckMissing'] as const;

export interface StoreCheckCounts {
  readonly sampled: number;
  readonly rank1: number;
  /** Found within the top 10, rank 1 included. */
  readonly top10: number;
  readonly missing: readonly string[];
}

/** `n` memories of `corpus`, chosen by a seeded hash of their ids: independent of corpus order, reproducible. */
export function storeCheckSample(corpus: Corpus, n: number, seed: number): Document[] {
  return corpus
    .filter((d) => d.text.trim() !== '')
    .map((d) => ({ d, key: sha256Hex(`${seed}\n${d.id}`) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, n)
    .map((x) => x.d);
}

/** Counts where each sampled memory's own id comes back when its text is the query. */
export function countStoreCheck(sample: readonly Document[], rankings: readonly (readonly ScoredDoc[])[]): StoreCheckCounts {
  let rank1 = 0;
  let top10 = 0;
  const missing: string[] = [];
  sample.forEach((d, i) => {
    const rank = (rankings[i] ?? []).slice(0, STORE_CHECK_DEPTH).findIndex((h) => h.docId === d.id);
    if (rank === 0) rank1++;
    if (rank >= 0) top10++;
    else missing.push(d.id);
  });
  return { sampled: sample.length, rank1, top10, missing };
}

/** The counts as index stats. */
export function storeCheckStats(c: StoreCheckCounts): Record<(typeof STORE_CHECK_STATS)[number], number> {
  return { storeCheckSampled: c.sampled, storeCheckRank1: c.rank1, storeCheckTop10: c.top10, storeCheckMissing: c.missing.length };
}

/** The error (exit 1) of a check whose loss is above `maxLoss`, or undefined. Names ids, never memory text. */
export function storeCheckFailure(arm: string, c: StoreCheckCounts, maxLoss: number): HarnessError | undefined {
  if (c.sampled === 0 || c.missing.length / c.sampled <= maxLoss) return undefined;
  const ids = `${c.missing.slice(0, 5).join(', ')}${c.missing.length > 5 ? ', ...' : ''}`;
  return new HarnessError(
    `arm ${arm}: store check failed: ${c.missing.length} of ${c.sampled} sampled memories were not found by their own text within the top ${STORE_CHECK_DEPTH} (rank 1: ${c.rank1}, ranks 2-${STORE_CHECK_DEPTH}: ${c.top10 - c.rank1}, not found: ${c.missing.length}: ${ids}); at most ${maxLoss * 100}% may be missing (params.storeCheck.maxLoss). The server lost stores, or cannot find a memory by its own text; no score was written`,
    {
      hint: 'a server that rewrites one file per call loses parallel stores: leave params.storeConcurrency at 1; check the store arguments and the response mapping; raise params.storeCheck.maxLoss only if the loss is by design',
    },
  );
}

/**
 * Runs the check on a stored scope through the arm's own `search` (so its response mapping is checked too), at
 * most `concurrency` searches at once, and returns its counts as index stats; throws when the loss is too high.
 */
export async function runStoreCheck(
  arm: string,
  corpus: Corpus,
  check: StoreCheck,
  concurrency: number,
  search: (q: Query, topK: number) => Promise<readonly ScoredDoc[]>,
  log: Logger,
): Promise<Record<string, number>> {
  if (check.sample === 0) return {};
  const sample = storeCheckSample(corpus, check.sample, check.seed);
  const limit = pLimit(concurrency);
  const progress = log.progress(`${arm}: store check`, sample.length);
  let rankings: (readonly ScoredDoc[])[];
  try {
    rankings = await Promise.all(
      sample.map((d) =>
        limit(async () => {
          const r = await search({ id: `store-check:${d.id}`, text: d.text, stratum: 'store-check' }, STORE_CHECK_DEPTH);
          progress.tick();
          return r;
        }),
      ),
    );
  } finally {
    progress.done();
  }
  const counts = countStoreCheck(sample, rankings);
  const failure = storeCheckFailure(arm, counts, check.maxLoss);
  if (failure) throw failure;
  return storeCheckStats(counts);
}
