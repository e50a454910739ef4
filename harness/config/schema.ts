import { z } from 'zod';

/** Ids of arms (and so run tags and report columns): no whitespace, safe as file names. */
export const idPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const id = (what: string) =>
  z.string().regex(idPattern, `${what} must start with a letter or digit and use only letters, digits, '.', '_' and '-'`);

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
  })
  .strict();

export const evalsetEntrySchema = z
  .object({
    format: z.string(),
    path: z.string(),
    split: z.string().optional(),
    /** TSV `queryId<TAB>stratum` overriding the strata the format assigns. */
    strata: z.string().optional(),
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
    arms: z.array(armEntrySchema).min(1, 'list at least one arm'),
    compare: z.record(z.string(), z.unknown()).optional(),
    gate: z.record(z.string(), z.unknown()).optional(),
    /** Folder that receives `<name>-<configHash8>/`; relative to the config file. */
    output: z.string().optional(),
    /** Content-addressed cache folder; relative to the config file. */
    cache: z.string().optional(),
    expect: z.record(z.string(), z.record(z.string(), expectEntry)).optional(),
  })
  .strict();

export type RawConfig = z.output<typeof configSchema>;
export type ExpectEntry = z.output<typeof expectEntry>;
