import type { TrecKernel, TrecQuery } from '../metrics/measure.js';
import type { JudgedRanking } from '../metrics/ranking.js';

/**
 * Faster kernels for some trec_eval measures, which a plan (compileTrecPlan) asks for each measure it
 * computes; a measure the set has none for is computed by its reference kernel, the registry's
 * (harness/metrics/measure.ts). A set's kernels give the reference kernels' values bit for bit
 * (fast/kernels.test.ts checks every one on seeded random rankings).
 */
export interface MeasureKernelSet {
  /** The set's name, by which a worker thread finds it again (stream-worker.ts). */
  readonly name: string;
  /** Starts a query: what the set's kernels are then called with, until the next query begins. */
  begin(r: JudgedRanking, level: number, numDocsInColl: number): TrecQuery;
  /** The set's kernel for a trec_eval measure, or undefined to use the reference one. */
  kernel(trecName: string): TrecKernel | undefined;
}

/** No fast path: every value from its reference kernel. */
export const REFERENCE_KERNELS: MeasureKernelSet = {
  name: 'reference',
  begin: (_r, level, numDocsInColl) => ({ level, numDocsInColl }),
  kernel: () => undefined,
};
