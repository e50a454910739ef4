import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import { timeoutMsSchema } from '../../arms/remote/limits.js';
import type { GateConfig } from '../compare/config.js';
import type { ReportedMeasure } from '../compare/measures.js';
import { isAnswerMeasure } from '../metrics/measure.js';
import type { SystemsPlan } from '../systems/plan.js';
import { urlCredentialProblem } from '../util/redact.js';
import { resolvePath } from './paths.js';
import { endpointShape, keyEnvOf, priceSchema } from './llm-endpoint.js';
import { keysOf, zodProblems } from './problems.js';
import type { Resolved } from './resolved.js';
import type { RawConfig } from './schema.js';
import type { ResolvedTune } from './study-blocks.js';

/**
 * The `answer:` block (docs/adr/0045-answer-level-evaluation.md) and the answer-only systems of `systems:`
 * (`kind: full-context`, `kind: answers-file`). Validated here, at load, so a typo or a measure nobody can
 * compute fails before any system runs; the answer stage (harness/answer) builds the reader and judge from it.
 */

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

/** A credential in a base URL would reach the manifest and every message naming the server. */
function noCredentials(baseURL: string | undefined, apiKeyEnv: string, ctx: z.RefinementCtx): void {
  const credential =
    baseURL === undefined ? undefined : urlCredentialProblem(baseURL, `the key is read from ${apiKeyEnv}, so remove the credentials from the URL`);
  if (credential !== undefined) ctx.addIssue({ code: 'custom', path: ['baseURL'], message: credential });
}

/** How the reader of every answered system is built: a chat model behind an OpenAI-compatible server, or the offline extractive reader. */
export const answerReaderSchema = z
  .object({
    /** `chat`: an LLM answers from the context; `extractive`: the context's best-matching sentence, no LLM (offline). */
    kind: z.enum(['extractive', 'chat']),
    model: z.string().min(1).optional(),
    baseURL: z.string().url().optional(),
    /** Default: the provider's key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY). */
    apiKeyEnv: envName.optional(),
    /** The server runs on this machine or network: only then does a context holding a sensitive memory go to it. */
    local: z.boolean().default(false),
    /** A prompt file replacing the built-in reader prompt; relative to the config file. */
    promptFile: z.string().min(1).optional(),
    /** Results of a system's run the reader sees per question, best first. */
    topK: z.number().int().positive().default(10),
    /** The most tokens (estimated at 4 characters each) the context may take. */
    budgetTokens: z.number().int().positive().default(8000),
    temperature: z.number().min(0).max(2).default(0),
    /** 500: LongMemEval's reader default. */
    maxTokens: z.number().int().positive().default(500),
    timeoutMs: timeoutMsSchema().default(120_000),
    maxRetries: z.number().int().min(0).default(4),
    ...endpointShape,
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.kind === 'chat' && r.model === undefined)
      ctx.addIssue({ code: 'custom', path: ['model'], message: 'a chat reader needs model (as the server names it)' });
    if (r.kind === 'extractive') {
      for (const key of ['model', 'baseURL', 'promptFile'] as const)
        if (r[key] !== undefined)
          ctx.addIssue({ code: 'custom', path: [key], message: `the extractive reader asks no model; remove ${key} or set kind: chat` });
      if (r.batch !== false) ctx.addIssue({ code: 'custom', path: ['batch'], message: 'the extractive reader asks no model; remove batch or set kind: chat' });
    }
    noCredentials(r.baseURL, keyEnvOf(r), ctx);
  });

/** The answer judge: a protocol's profile (routing, parsing, decoding) and the model that grades under it. */
export const answerJudgeSchema = z
  .object({
    profile: z.enum(['longmemeval', 'locomo', 'binary']),
    model: z.string().min(1),
    baseURL: z.string().url().optional(),
    /** Default: the provider's key variable (OPENAI_API_KEY, ANTHROPIC_API_KEY). */
    apiKeyEnv: envName.optional(),
    /** The server runs on this machine or network: only then are questions with sensitive evidence graded by it. */
    local: z.boolean().default(false),
    /** Replies per answer; the grade is their majority (a tie counts as wrong). */
    samples: z.number().int().positive().default(1),
    /** Prompt key (`default`, `abstention`, a LongMemEval question type) -> a prompt file; relative to the config file. */
    promptFiles: z.record(z.string(), z.string().min(1)).optional(),
    /** Default: the profile's (10 for yes/no and verdict words, 32 for a JSON label). */
    maxTokens: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(2).default(0),
    /** New requests after an unreadable reply, per sample, before the sample counts as failed. */
    parseRetries: z.number().int().min(0).default(2),
    timeoutMs: timeoutMsSchema().default(120_000),
    maxRetries: z.number().int().min(0).default(4),
    ...endpointShape,
    /**
     * The answer judge audit (docs/answer-evaluation.md): after grading, answers a sound judge rejects (hedging,
     * "I don't know", padding, the gold denied) and the gold itself are graded on `pairs` seeded questions.
     */
    audit: z
      .object({
        pairs: z.number().int().positive().default(50),
        seed: z.number().int().min(0).default(1),
        /** A probe accepted above this share, or the gold below 1 minus it, is a finding; below 0.5, so the two never meet. */
        maxAcceptRate: z.number().gt(0).lt(0.5).default(0.2),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((j, ctx) => noCredentials(j.baseURL, keyEnvOf(j), ctx));

/** The `answer:` block as written. */
export const answerBlockSchema = z
  .object({
    reader: answerReaderSchema.optional(),
    judge: answerJudgeSchema.optional(),
    /** The report systems answered; default every one. Systems left out are left out of the report. */
    systems: z.array(z.string()).min(1, 'list at least one system id, or remove systems to answer every one').optional(),
    /** Model -> USD per million input (prompt) and output (completion) tokens, for the answer cost table. */
    price: z.record(z.string(), priceSchema).optional(),
    /** Hand labels of answers (an answer kappa session or labels file): PPI on Acc and the answer judge's validation. */
    humanLabels: z.string().min(1).optional(),
  })
  .strict();

/** The params of a `kind: full-context` system: the reader answers from the whole history of the question's scope. */
export const fullContextParamsSchema = z
  .object({
    /** The context budget of this system; default the reader's `budgetTokens`. */
    budgetTokens: z.number().int().positive().optional(),
  })
  .strict();

/** The params of a `kind: answers-file` system: answers another tool made, read from a file. */
export const answersFileParamsSchema = z
  .object({
    /** Relative to the config file. */
    path: z.string().min(1),
    format: z.enum(['mem0', 'longmemeval', 'jsonl']),
    /** LongMemEval: its judged log (`.eval-results-*`) with recorded labels; relative to the config file. */
    labels: z.string().min(1).optional(),
  })
  .strict();

export type AnswerReaderConfig = z.output<typeof answerReaderSchema> & {
  /** `promptFile` resolved against the config's folder. */
  readonly promptPath?: string;
};
export type AnswerJudgeConfig = Omit<z.output<typeof answerJudgeSchema>, 'promptFiles'> & {
  /** Prompt key -> absolute path. */
  readonly promptFiles: Readonly<Record<string, string>>;
};
export type AnswerPrice = z.output<typeof priceSchema>;

/** The kinds of `systems:` entries that answer without a run of their own. */
export const ANSWER_ONLY_KINDS = ['full-context', 'answers-file'] as const;
export type AnswerOnlyKind = (typeof ANSWER_ONLY_KINDS)[number];

export function isAnswerOnlyKind(kind: string): kind is AnswerOnlyKind {
  return (ANSWER_ONLY_KINDS as readonly string[]).includes(kind);
}

interface AnswerOnlyBase {
  /** Where its entry sits in the config (`systems[3]`). */
  readonly at: string;
  readonly id: string;
  readonly label?: string;
}

/** A system that answers without a run: the whole history (`full-context`) or a file of answers (`answers-file`). */
export type AnswerOnlySystem =
  | (AnswerOnlyBase & { readonly kind: 'full-context'; readonly budgetTokens?: number })
  | (AnswerOnlyBase & {
      readonly kind: 'answers-file';
      readonly format: 'mem0' | 'longmemeval' | 'jsonl';
      readonly path: string;
      readonly pathAsWritten: string;
      readonly labels?: { readonly path: string; readonly asWritten: string };
    });

/** The answer level of a config, resolved: what is measured, who reads and grades, which systems answer. */
export interface ResolvedAnswer {
  /** The answer measures among `measures:`, canonical. */
  readonly measures: readonly string[];
  readonly reader?: AnswerReaderConfig;
  readonly judge?: AnswerJudgeConfig;
  /** The systems with a run (plan systems, tuned ones) that are answered from their top-k, in run order. */
  readonly systems: readonly string[];
  readonly answerOnly: readonly AnswerOnlySystem[];
  readonly price: Readonly<Record<string, AnswerPrice>>;
  /** `answer.humanLabels`, absolute and as written: hand labels of answers, read before any system runs. */
  readonly humanLabels?: { readonly path: string; readonly asWritten: string };
}

type SystemEntry = NonNullable<RawConfig['systems']>[number];

/** The `systems:` list with its answer-only entries taken out (left as holes, so every other entry keeps its place). */
export function splitAnswerSystems(systems: readonly (SystemEntry | undefined)[] | undefined): {
  readonly withRuns: (SystemEntry | undefined)[] | undefined;
  readonly answerOnly: readonly { readonly index: number; readonly entry: SystemEntry }[];
} {
  if (systems === undefined) return { withRuns: undefined, answerOnly: [] };
  const answerOnly = systems.flatMap((entry, index) => (entry !== undefined && isAnswerOnlyKind(entry.kind) ? [{ index, entry }] : []));
  const taken = new Set(answerOnly.map((a) => a.index));
  return { withRuns: systems.map((e, i) => (taken.has(i) ? undefined : e)), answerOnly };
}

/** A path param that must name an existing file, resolved against the config's folder. */
function filePath(dir: string, written: string, at: string, problems: string[]): string {
  const path = resolvePath(dir, written);
  if (!existsSync(path) || !statSync(path).isFile()) problems.push(`${at}: ${written} is not a file (resolved against the config's folder to ${path})`);
  return path;
}

/** One answer-only entry: its params by its kind, no inputs and no grid. */
function answerOnlySystem(index: number, entry: SystemEntry, dir: string, problems: string[]): AnswerOnlySystem | undefined {
  const at = `systems[${index}]`;
  const inputs = Array.isArray(entry.inputs) ? entry.inputs.length : 1;
  if (inputs > 0) problems.push(`${at}.inputs: a ${entry.kind} system answers without a run, so it takes no inputs; remove inputs`);
  if (entry.grid !== undefined) problems.push(`${at}.grid: a ${entry.kind} system has no grid; list one system per setting`);
  const base = { at, id: entry.id, ...(entry.label === undefined ? {} : { label: entry.label }) };
  const schema = entry.kind === 'full-context' ? fullContextParamsSchema : answersFileParamsSchema;
  const parsed = schema.safeParse(entry.params);
  if (!parsed.success) {
    problems.push(...zodProblems(parsed.error.issues, [at, 'params'], (p) => keysOf(schema, p), entry.params));
    return undefined;
  }
  if (entry.kind === 'full-context') {
    const p = parsed.data as z.output<typeof fullContextParamsSchema>;
    return { ...base, kind: 'full-context', ...(p.budgetTokens === undefined ? {} : { budgetTokens: p.budgetTokens }) };
  }
  const p = parsed.data as z.output<typeof answersFileParamsSchema>;
  const path = filePath(dir, p.path, `${at}.params.path`, problems);
  if (p.labels !== undefined && p.format !== 'longmemeval')
    problems.push(`${at}.params.labels: a labels file is LongMemEval's judged log; a ${p.format} file records its grades in its own rows`);
  const labels = p.labels === undefined ? undefined : { path: filePath(dir, p.labels, `${at}.params.labels`, problems), asWritten: p.labels };
  return { ...base, kind: 'answers-file', format: p.format, path, pathAsWritten: p.path, ...(labels === undefined ? {} : { labels }) };
}

/** What the answer block is checked against: the blocks resolved before it. */
export interface AnswerContext {
  /** The measures block as the loader read it; undefined when it is missing or failed (its own problem). */
  readonly measures: readonly ReportedMeasure[] | undefined;
  readonly plan: SystemsPlan;
  readonly tune: ResolvedTune | undefined;
  /** The run ids of the plan and tuned systems (before the answer block picks among them). */
  readonly runIds: readonly string[];
  readonly answerOnly: readonly { readonly index: number; readonly entry: SystemEntry }[];
  /** Answer-only entries that failed to parse (their own problems): counted as there, so no second problem blames their absence. */
  readonly failedAnswerOnly?: number;
  /** How many results each system returns per query (`topK:`). */
  readonly topK: number;
  readonly dir: string;
}

/**
 * The answer measures and the retrieval measures of a measure list, by spelling. It takes the measures as the
 * loader read them (an unreadable one never gets here: it is the measures block's problem), so no spelling is read again.
 */
export function splitMeasures(measures: readonly ReportedMeasure[]): { readonly answer: string[]; readonly retrieval: string[] } {
  const spellings = (answer: boolean) => measures.filter((m) => isAnswerMeasure(m.measure) === answer).map((m) => m.spelling);
  return { answer: spellings(true), retrieval: spellings(false) };
}

/** The parsed block, or its problems. */
function parseBlock(raw: unknown): Resolved<z.output<typeof answerBlockSchema> | undefined> {
  if (raw === undefined) return { value: undefined, problems: [] };
  const r = answerBlockSchema.safeParse(raw);
  if (r.success) return { value: r.data, problems: [] };
  return { value: undefined, problems: zodProblems(r.error.issues, ['answer'], (p) => keysOf(answerBlockSchema, p), raw) };
}

/** The block's prompt paths resolved against the config's folder, each checked to be a file. */
function withPaths(block: z.output<typeof answerBlockSchema>, dir: string, problems: string[]) {
  const r = block.reader;
  const reader: AnswerReaderConfig | undefined =
    r === undefined
      ? undefined
      : { ...r, ...(r.promptFile === undefined ? {} : { promptPath: filePath(dir, r.promptFile, 'answer.reader.promptFile', problems) }) };
  const j = block.judge;
  const judge: AnswerJudgeConfig | undefined =
    j === undefined
      ? undefined
      : {
          ...j,
          promptFiles: Object.fromEntries(
            Object.entries(j.promptFiles ?? {}).map(([key, file]) => [key, filePath(dir, file, `answer.judge.promptFiles.${key}`, problems)] as const),
          ),
        };
  return { reader, judge };
}

/** The answered systems with a run: `answer.systems` (checked) or every run, never a tuned one (see ADR 0045). */
function answeredRuns(listed: readonly string[] | undefined, ctx: AnswerContext, problems: string[]): string[] {
  const onlyIds = new Set(ctx.answerOnly.map((a) => a.entry.id));
  if (listed === undefined) return [...ctx.runIds];
  const seen = new Set<string>();
  listed.forEach((id, i) => {
    if (seen.has(id)) problems.push(`answer.systems[${i}]: "${id}" is listed twice`);
    seen.add(id);
    if (!ctx.runIds.includes(id) && !onlyIds.has(id))
      problems.push(`answer.systems[${i}]: "${id}" is not a system id (systems: ${[...ctx.runIds, ...onlyIds].join(', ')})`);
  });
  return ctx.runIds.filter((id) => seen.has(id));
}

/** Which measures need what: a reader for systems with runs and full-context ones, a judge (or recorded grades) for Acc. */
function needProblems(measures: readonly string[], answered: AnsweredParts): string[] {
  const problems: string[] = [];
  const readerAnswered = [...answered.runs, ...answered.only.filter((s) => s.kind === 'full-context').map((s) => s.id)];
  if (readerAnswered.length > 0 && answered.reader === undefined)
    problems.push(
      `answer.reader: systems ${readerAnswered.join(', ')} are answered by a reader; add answer.reader (kind: extractive answers offline, kind: chat asks a model)`,
    );
  if (measures.includes('Acc') && answered.judge === undefined && readerAnswered.length > 0)
    problems.push(
      `measures: Acc is the answer judge's accuracy and there is no answer.judge to grade the answers of ${readerAnswered.join(', ')}; ` +
        'add answer.judge (profile, model), or ask only lexical measures (F1-LoCoMo, F1-set, EM)',
    );
  return problems;
}

interface AnsweredParts {
  readonly runs: readonly string[];
  readonly only: readonly AnswerOnlySystem[];
  readonly reader?: AnswerReaderConfig;
  readonly judge?: AnswerJudgeConfig;
}

/** Rules that hold between the answer level and the rest of the config (tuning, retrieval measures, arms). */
function studyProblems(ctx: AnswerContext, measures: { answer: readonly string[]; retrieval: readonly string[] }, only: readonly AnswerOnlySystem[]): string[] {
  const problems: string[] = [];
  if (ctx.tune !== undefined)
    problems.push(
      `tune: answer measures (${measures.answer.join(', ')}) and tuned grids are not combined: a tuned system's questions are answered by different grid points; ` +
        'tune on retrieval in a study of its own, then answer the picked point as a plain system',
    );
  if (only.length > 0 && measures.retrieval.length > 0)
    problems.push(
      `measures: ${measures.retrieval.join(', ')} are retrieval measures and ${only.map((s) => `${s.at} "${s.id}" (${s.kind})`).join(', ')} has no run to score; ` +
        'a config with answer-only systems asks only answer measures (Acc, F1-LoCoMo, F1-set, EM): study retrieval in a config of its own',
    );
  const runIds = new Set(ctx.plan.systems.map((s) => s.id));
  for (const s of only) if (runIds.has(s.id)) problems.push(`${s.at}.id: "${s.id}" is also the id of another system; ids are unique`);
  return problems;
}

/**
 * `answer:` and the answer-only systems, against the measures: an answer measure needs the block (or
 * answers-file systems), the block needs an answer measure, Acc needs a judge for whatever a reader answers,
 * answer-only systems allow only answer measures, and answer measures are not tuned on. Undefined (with no
 * problem) when the config asks no answer measure and has no answer block nor answer-only system.
 */
export function resolveAnswer(raw: unknown, ctx: AnswerContext): Resolved<ResolvedAnswer | undefined> {
  const parsed = parseBlock(raw);
  const problems = [...parsed.problems];
  const only = ctx.answerOnly.flatMap(({ index, entry }) => answerOnlySystem(index, entry, ctx.dir, problems) ?? []);
  const measures = splitMeasures(ctx.measures ?? []);
  if (ctx.measures === undefined) return { value: undefined, problems };
  if (measures.answer.length === 0) {
    if (raw !== undefined) problems.push('answer: no answer measure in measures; add Acc, F1-LoCoMo, F1-set or EM, or remove the answer block');
    for (const s of ctx.answerOnly)
      problems.push(`systems[${s.index}]: a ${s.entry.kind} system only answers; add an answer measure (Acc, F1-LoCoMo, F1-set, EM) to measures`);
    return { value: undefined, problems };
  }
  if (raw === undefined && ctx.answerOnly.length === 0) {
    if ((ctx.failedAnswerOnly ?? 0) > 0) return { value: undefined, problems };
    problems.push(
      `measures: ${measures.answer.join(', ')} ${measures.answer.length === 1 ? 'is an answer measure' : 'are answer measures'}; ` +
        'add an answer: block (reader, judge), or systems of kind answers-file',
    );
    return { value: undefined, problems };
  }
  const block = parsed.value ?? {};
  const { reader, judge } = parsed.value === undefined ? { reader: undefined, judge: undefined } : withPaths(parsed.value, ctx.dir, problems);
  const runs = answeredRuns(block.systems, ctx, problems);
  problems.push(...studyProblems(ctx, measures, only));
  if (reader !== undefined && runs.length > 0 && reader.topK > ctx.topK)
    problems.push(`answer.reader.topK: ${reader.topK} is deeper than topK: ${ctx.topK}, the results each system returns; lower it or raise topK`);
  if (parsed.problems.length === 0) problems.push(...needProblems(measures.answer, { runs, only, ...(reader ? { reader } : {}), ...(judge ? { judge } : {}) }));
  const humanLabels = labelsOf(block.humanLabels, measures.answer, ctx.dir, problems);
  return {
    value: {
      measures: measures.answer,
      ...(reader === undefined ? {} : { reader }),
      ...(judge === undefined ? {} : { judge }),
      systems: runs,
      answerOnly: only,
      price: block.price ?? {},
      ...(humanLabels === undefined ? {} : { humanLabels }),
    },
    problems,
  };
}

/** The report's runs with an answer level: the answered systems with runs, then the answer-only ones. */
export function answerRunIds(answer: ResolvedAnswer): string[] {
  return [...answer.systems, ...answer.answerOnly.map((s) => s.id)];
}

/**
 * Ids other blocks name (gate, compare, expect) that are not report runs because `answer.systems` left them
 * out: the report could not compare them. A system id that exists nowhere is RunRefs' problem, not this one's.
 */
export function unansweredRefProblems(
  answer: ResolvedAnswer,
  allRunIds: readonly string[],
  refs: readonly { path: string; id: string | undefined }[],
): string[] {
  const reported = new Set(answerRunIds(answer));
  return refs.flatMap(({ path, id }) =>
    id !== undefined && !reported.has(id) && allRunIds.includes(id)
      ? [`${path}: "${id}" is not answered (answer.systems: ${answer.systems.join(', ')}), so it is not in the report; add it to answer.systems`]
      : [],
  );
}

/** `answer.humanLabels` resolved against the config's folder: a file, and only beside `Acc` (the one measure a judge grades). */
function labelsOf(written: string | undefined, answerMeasures: readonly string[], dir: string, problems: string[]) {
  if (written === undefined) return undefined;
  if (!answerMeasures.includes('Acc'))
    problems.push(
      `answer.humanLabels: hand labels of answers check the answer judge's grades, and measures has no Acc (${answerMeasures.join(', ')} read no judge); add Acc or remove answer.humanLabels`,
    );
  return { path: filePath(dir, written, 'answer.humanLabels', problems), asWritten: written };
}

/**
 * Relevance labels (`humanLabels:`) label a judged pool's documents and say nothing about answers, so a gate on an
 * answer measure cannot read them: it reads hand labels of answers (`answer.humanLabels`, {@link answerLabelProblems}).
 */
export function answerGateProblems(answer: ResolvedAnswer, gateMeasure: string | undefined, humanLabels: boolean): string[] {
  if (gateMeasure === undefined || !humanLabels || !answer.measures.includes(gateMeasure) || answer.humanLabels !== undefined) return [];
  return [
    `gate.measure: ${gateMeasure} is an answer measure, and humanLabels label the judged pool's documents, not answers; gate on a retrieval measure, or label answers (harness kappa --answers) and name them in answer.humanLabels instead`,
  ];
}

/** What the rules on answer labels read from the rest of the config. */
export interface AnswerLabelContext {
  readonly gate: Pick<GateConfig, 'measure' | 'judged'> | undefined;
  /** Whether the config names `humanLabels:` (hand grades of a judged pool's documents). */
  readonly humanLabels: boolean;
  /** `qrels:` (default gold). */
  readonly qrels: string;
  /** Every measure of `measures:`, as the loader read it. */
  readonly measures: readonly ReportedMeasure[];
}

/**
 * Hand labels of answers and the gate. The decision stage reads one set of human labels: answer labels give each
 * labelled question's human `Acc`, which PPI on an accuracy difference and the answer judge's validation read. So:
 * not beside `humanLabels:`; `gate.judged: ppi` on an answer measure needs them, and `Acc` (the lexical measures have
 * no judge to correct); and not beside retrieval measures on judged qrels, whose judge they do not check (PPI and
 * the validation would show that judge as checked).
 */
export function answerLabelProblems(answer: ResolvedAnswer, ctx: AnswerLabelContext): string[] {
  const problems: string[] = [];
  const onAnswers = ctx.gate !== undefined && answer.measures.includes(ctx.gate.measure);
  if (answer.humanLabels !== undefined && ctx.humanLabels)
    problems.push(
      'answer.humanLabels: humanLabels is set too, and a study reads one set of human labels (humanLabels check the relevance judge, answer.humanLabels the answer judge); study them in two configs',
    );
  if (onAnswers && ctx.gate?.judged === 'ppi' && ctx.gate.measure !== 'Acc')
    problems.push(`gate.judged: "ppi" corrects a judge's grades, and ${ctx.gate.measure} reads none (only Acc does); remove gate.judged or gate on Acc`);
  else if (onAnswers && ctx.gate?.judged === 'ppi' && answer.humanLabels === undefined)
    problems.push(
      'gate.judged: "ppi" on Acc corrects the answer judge with hand labels of answers; add answer.humanLabels: <answer kappa session or labels file> (harness kappa --answers REPORT_DIR --session FILE)',
    );
  const retrieval = splitMeasures(ctx.measures).retrieval;
  if (answer.humanLabels !== undefined && ctx.qrels !== 'gold' && retrieval.length > 0)
    problems.push(
      `answer.humanLabels: ${retrieval.join(', ')} are scored on qrels: ${ctx.qrels}, a judge these labels of answers do not check; study answers on qrels: gold, or in a config of their own`,
    );
  return problems;
}

/**
 * The gate as the relevance evidence rules read it (`resolveEvidence`): without `judged` when the gate decides on
 * an answer measure, whose PPI reads answer labels and is checked by {@link answerLabelProblems} instead.
 */
export function evidenceGate<G extends Pick<GateConfig, 'measure' | 'judged'>>(gate: G | undefined, answer: ResolvedAnswer | undefined): G | undefined {
  if (gate === undefined || answer === undefined || !answer.measures.includes(gate.measure) || gate.judged === undefined) return gate;
  const { judged: _, ...rest } = gate;
  return rest as G;
}
