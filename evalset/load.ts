import { resolve } from 'node:path';
import { didYouMean } from '../harness/util/suggest.js';
import { z } from 'zod';
import { ConfigError, InputError, UsageError } from '../harness/errors.js';
import type { Logger } from '../harness/log.js';
import { loadLocomo, locomoOptions } from './adapters/locomo.js';
import { loadLongMemEval, longMemEvalOptions } from './adapters/longmemeval.js';
import { loadBeir } from './beir.js';
import { checkDocumentText, checkQueryText, StrataCounter } from './limits.js';
import { loadMemory } from './memory.js';
import { applyStrataFile } from './strata.js';
import type { EvalSet, QrelsCompleteness } from './types.js';
import { validateEvalSet, type Validation } from './validate.js';

/** One eval-set format: its config options (a strict zod object with defaults) and its reader. */
export interface EvalSetFormat<S extends z.ZodType = z.ZodType> {
  readonly summary: string;
  /** Whether `split` is meaningful (BEIR qrels splits); formats without splits reject one. */
  readonly splits: boolean;
  /** The format's qrels completeness unless the config's `evalset.qrels` says otherwise. */
  readonly qrels: QrelsCompleteness;
  readonly options: S;
  load(path: string, opts: { split?: string; options: z.output<S> }, log: Logger): Promise<EvalSet>;
}

function defineFormat<S extends z.ZodType>(f: EvalSetFormat<S>): EvalSetFormat<S> {
  return f;
}

export const DEFAULT_BEIR_SPLIT = 'test';

/** Every eval-set format, by the name a config's `evalset.format` uses. */
export const evalSetFormats = {
  beir: defineFormat({
    summary: 'BEIR folder: corpus.jsonl (or corpus/*.jsonl), queries.jsonl, qrels/<split>.tsv; split default "test"',
    splits: true,
    qrels: 'pooled',
    options: z.object({ corpusFile: z.string().min(1).optional() }).strict(),
    load: (path, { split, options }) =>
      loadBeir(path, { split: split ?? DEFAULT_BEIR_SPLIT, ...(options.corpusFile === undefined ? {} : { corpusFile: options.corpusFile }) }),
  }),
  memory: defineFormat({
    summary: 'our memory format: corpus.jsonl or corpus.csv + queries.jsonl with strata and graded qrels',
    splits: false,
    qrels: 'complete',
    options: z.object({}).strict(),
    load: (path) => loadMemory(path),
  }),
  locomo: defineFormat({
    summary: 'LoCoMo locomo10.json: turns/sessions/observations, per-conversation scopes, category strata',
    splits: false,
    qrels: 'complete',
    options: locomoOptions,
    load: (path, { options }) => loadLocomo(path, options),
  }),
  longmemeval: defineFormat({
    summary: 'LongMemEval JSON (oracle / s / m): per-question haystacks, sessions or user turns, type strata',
    splits: false,
    qrels: 'complete',
    options: longMemEvalOptions,
    load: (path, { options }) => loadLongMemEval(path, options),
  }),
  // biome-ignore lint/suspicious/noExplicitAny: a registry holds factories of different param types; each entry is checked by `satisfies` against its own
} as const satisfies Record<string, EvalSetFormat<any>>;

export type EvalSetFormatName = keyof typeof evalSetFormats;

export interface EvalSetSpec {
  readonly format: string;
  /** A folder (beir, memory) or file (locomo, longmemeval); relative paths resolve against the cwd. */
  readonly path: string;
  readonly split?: string;
  /** A strata file (`queryId<TAB>stratum`) overriding the strata of the queries it lists. */
  readonly strata?: string;
  readonly options?: unknown;
  /** Where the spec came from, for error messages (a config file); default "evalset". */
  readonly source?: string;
}

/**
 * Loads, restratifies and validates an eval set, returning the validation instead of throwing on its problems
 * (for `harness evalset inspect`). Validation notes are appended to the eval set's notes.
 */
export async function loadEvalSetChecked(spec: EvalSetSpec, log: Logger): Promise<{ evalSet: EvalSet; validation: Validation }> {
  const source = spec.source ?? 'evalset';
  const known = Object.keys(evalSetFormats);
  if (!Object.hasOwn(evalSetFormats, spec.format)) {
    throw new ConfigError(source, [`format: unknown eval-set format "${spec.format}"${didYouMean(spec.format, known)} (known: ${known.join(', ')})`]);
  }
  const format: EvalSetFormat = evalSetFormats[spec.format as EvalSetFormatName];
  const parsed = format.options.safeParse(spec.options ?? {});
  if (!parsed.success) {
    throw new ConfigError(
      source,
      parsed.error.issues.map((i) => `options${i.path.map((p) => `.${String(p)}`).join('')}: ${i.message}`),
      { hint: `${spec.format} options: ${describeOptions(format.options)}` },
    );
  }
  if (spec.split !== undefined && !format.splits) {
    throw new UsageError(`eval-set format "${spec.format}" has no splits, but split "${spec.split}" was given`);
  }
  const path = resolve(spec.path);
  let evalSet = await format.load(path, { ...(spec.split === undefined ? {} : { split: spec.split }), options: parsed.data }, log);
  if (spec.strata !== undefined) evalSet = await applyStrataFile(evalSet, resolve(spec.strata));
  checkLimits(evalSet, path);
  const validation = validateEvalSet(evalSet);
  if (validation.notes.length > 0) evalSet = { ...evalSet, notes: [...(evalSet.notes ?? []), ...validation.notes] };
  log.info(`eval set ${evalSet.name}: ${evalSet.documents.length} documents, ${evalSet.queries.length} queries`);
  return { evalSet, validation };
}

/** The entry point configs use: like {@link loadEvalSetChecked}, but any validation problem is an InputError. */
export async function loadEvalSet(spec: EvalSetSpec, log: Logger): Promise<EvalSet> {
  const { evalSet, validation } = await loadEvalSetChecked(spec, log);
  if (validation.problems.length > 0) {
    throw new InputError(resolve(spec.path), undefined, `eval set is inconsistent:\n  ${validation.problems.join('\n  ')}`, {
      hint: `run \`harness evalset inspect --format ${spec.format} --path ${spec.path}\` for details`,
    });
  }
  return evalSet;
}

/**
 * The input limits over the loaded set, for the formats read from one JSON document (LoCoMo, LongMemEval: no
 * line to name, so the query or document is named by id) and for strata a strata file mixes with the set's own; the line-based
 * readers have already checked their own lines.
 */
function checkLimits(es: EvalSet, path: string): void {
  for (const d of es.documents) checkDocumentText(path, undefined, d.id, d.text);
  const strata = new StrataCounter(path);
  for (const q of es.queries) {
    checkQueryText(path, undefined, q.id, q.text);
    strata.add(q.stratum, undefined);
  }
}

function describeOptions(schema: z.ZodType): string {
  if (schema instanceof z.ZodObject) {
    const keys = Object.keys(schema.shape as Record<string, unknown>);
    return keys.length === 0 ? 'none' : keys.join(', ');
  }
  return 'see the format documentation';
}
