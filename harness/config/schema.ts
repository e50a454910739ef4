import { z } from 'zod';
import { deviationSchema } from '../recipes/fidelity.js';

/**
 * Ids of systems (and so run tags, file names and report columns): no whitespace, safe as file names. `+` and
 * `=` appear in the ids the matrix generates (`cc.bm25+fts5.alpha=0.3`).
 */
export const idPattern = /^[A-Za-z0-9][A-Za-z0-9._+=-]*$/;
const id = (what: string) => z.string().regex(idPattern, `${what} must start with a letter or digit and use only letters, digits, '.', '_', '-', '+' and '='`);

/** A grid axis: the values to try, or an arithmetic range `{ from, to, step }` (both ends included). */
const gridAxis = z.union([
  z.array(z.union([z.string(), z.number(), z.boolean()])).min(1, 'a grid axis lists at least one value'),
  z.strictObject({ from: z.number(), to: z.number(), step: z.number().positive() }),
]);
/** Parameter grids: param name -> axis. The cross product expands into one system per point. */
export const gridSchema = z.record(z.string(), gridAxis);
export type GridAxis = z.output<typeof gridAxis>;

const expectEntry = z
  .object({
    value: z.number(),
    /** Absolute tolerance; within it OK, within 1.5x OKISH, beyond FAIL (either direction). */
    tolerance: z.number().nonnegative().default(0.0005),
  })
  .strict();

export const armEntrySchema = z
  .object({
    id: id('arm id'),
    kind: z.string(),
    params: z.record(z.string(), z.unknown()).default({}),
    /** Human label for reports. */
    label: z.string().optional(),
    /** When the arm stands in for another model (e.g. GloVe for bge-large), what it stands in for; reports flag it. */
    substitute: z.string().optional(),
    /**
     * How Sensitive Documents are kept from an arm that sends text off this machine (a hosted embedding API):
     * `skip` leaves them out of its corpus (counted in the report), `{ route: <arm id> }` has a local arm listed
     * earlier retrieve them, merged by score. Such an arm without it is refused when the eval set has any.
     */
    sensitive: z.union([z.literal('skip'), z.strictObject({ route: z.string() })]).optional(),
    grid: gridSchema.optional(),
    /** Where a Recipe's stage departs from its source document: substitutes and assumptions; reports label them. */
    deviations: z.array(deviationSchema).optional(),
  })
  .strict();

/** A system whose Run is computed from other systems' Runs (`kind: fuse`, later rerank and transform). */
export const systemEntrySchema = z
  .object({
    id: id('system id'),
    kind: z.string(),
    /**
     * Ids of the systems it consumes, or every subset (of at least `min`, default 2) of a list. Absent or empty
     * for a kind that can run without inputs (graph-ppr; chunk and session, which own their arm); each kind's arity is checked by the plan.
     */
    inputs: z
      .union([
        z.array(z.string()),
        z.strictObject({ 'subsets-of': z.array(z.string()).min(2, 'subsets-of needs at least two ids'), min: z.number().int().min(1).default(2) }),
      ])
      .default([]),
    params: z.record(z.string(), z.unknown()).default({}),
    grid: gridSchema.optional(),
    label: z.string().optional(),
    /** When the system stands in for another design's stage (no LLM configured, a local embedding), what; reports flag it. */
    substitute: z.string().optional(),
    /** Where a Recipe's stage departs from its source document: substitutes and assumptions; reports label them. */
    deviations: z.array(deviationSchema).optional(),
  })
  .strict();

/**
 * How a grid picks its point without looking at the test queries: on the eval set's `split` (e.g. BEIR's
 * `dev`), or by `folds`-fold cross-validation over the queries (seeded assignment).
 */
export const tuneSchema = z
  .object({
    measure: z.string(),
    split: z.string().optional(),
    folds: z.number().int().min(2).optional(),
    seed: z.number().int().min(0).default(42),
  })
  .strict()
  .refine((t) => (t.split === undefined) !== (t.folds === undefined), { message: 'give exactly one of split (a dev split) or folds (cross-validation)' });

export const evalsetEntrySchema = z
  .object({
    format: z.string(),
    path: z.string(),
    split: z.string().optional(),
    /** TSV `queryId<TAB>stratum` overriding the strata the format assigns. */
    strata: z.string().optional(),
    /** Whether unlisted documents are known non-relevant (complete) or unknown (pooled); default: the format's. */
    qrels: z.enum(['complete', 'pooled']).optional(),
    options: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

/**
 * The raw shape of an ablation config. Blocks owned by other modules (arm params, eval-set options, compare,
 * gate) are checked here only as objects and validated by their owners' schemas in `load.ts`, so each error
 * points inside the right block with that block's known keys.
 */
export const configSchema = z
  .object({
    name: id('name'),
    description: z.string().optional(),
    evalset: evalsetEntrySchema,
    measures: z.array(z.string()).min(1, 'list at least one measure, e.g. [nDCG@10, R@100]'),
    /** Grade at or above which a qrels entry counts as relevant (trec_eval -l). */
    relevanceLevel: z.number().int().default(1),
    /**
     * Score at a coarser unit the eval set defines (e.g. `session` for LoCoMo turns): runs and qrels are mapped
     * through the eval set's unit map; a unit ranks where its best member ranks and takes its best grade.
     */
    unit: z.string().optional(),
    /** How many documents each arm returns per query. */
    topK: z.number().int().positive().default(1000),
    /**
     * Retrieval arms: at least one, unless the config's systems include answer-only ones (full-context,
     * answers-file), which answer without a run. The loader checks it (load.ts), so an answers-only study lists none.
     */
    arms: z.array(armEntrySchema).optional(),
    systems: z.array(systemEntrySchema).optional(),
    tune: tuneSchema.optional(),
    compare: z.record(z.string(), z.unknown()).optional(),
    gate: z.record(z.string(), z.unknown()).optional(),
    /** Folder that receives `<name>-<configHash8>/`; relative to the config file. */
    output: z.string().optional(),
    /** Content-addressed cache folder; relative to the config file. */
    cache: z.string().optional(),
    expect: z.record(z.string(), z.record(z.string(), expectEntry)).optional(),
    /**
     * The qrels to score with: `gold` (the eval set's, the default), `judged` (an LLM judge's grades only) or
     * `gold+judged` (gold, holes filled by the judge). Optional without a default so configs that omit it keep
     * their hash.
     */
    qrels: z.enum(['gold', 'judged', 'gold+judged']).optional(),
    /** The judgments folder `harness judge` writes and `judged` qrels read; relative to the config file. */
    judgments: z.string().optional(),
    /**
     * Human labels of the judged pool: a kappa session file (best written by `harness kappa --by query`) or TREC
     * qrels (`queryId 0 docId grade`); relative to the config file. A query whose every judged pair has a human
     * grade is labelled: it corrects the judged deltas (PPI) and validates the judge (docs/adr/0038).
     */
    humanLabels: z.string().min(1).optional(),
    /** When the judge counts as validated on the human-labelled queries (harness/config/validation.ts). */
    validation: z.record(z.string(), z.unknown()).optional(),
    /** How `harness judge` judges this ablation's pool (harness/config/judge.ts). Not hashed. */
    judge: z.record(z.string(), z.unknown()).optional(),
    /** The answer level: reader, answer judge, answered systems, prices (harness/config/answer-block.ts). */
    answer: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type RawConfig = z.output<typeof configSchema>;
export type ExpectEntry = z.output<typeof expectEntry>;
