import { basename } from 'node:path';
import { z } from 'zod';
import { InputError } from '../../harness/errors.js';
import { describeIssues, type JsonArrayOptions, nameList, readJsonArray } from '../lines.js';
import type { Document, EvalSet, JsonValue, Query } from '../types.js';

/**
 * LongMemEval (Wu et al., ICLR 2025, arXiv 2410.10813; xiaowu0162/LongMemEval) as an eval set, mirroring the
 * official retrieval protocol in src/retrieval/run_retrieval.py (docs/adr/0007-locomo-strata.md):
 *
 * - One scope per question: its haystack (`haystack_session_ids` / `haystack_sessions`), scope id = question_id.
 * - `unit: session`: one document per session, id = the session id, text = its indexed turns' contents joined
 *   by single spaces. `unit: turn`: one document per indexed turn, id `<session_id>_<j>` with j the 1-based
 *   index over ALL turns of the session (assistant turns keep their numbers even when not indexed).
 * - `roles: user` (default) indexes user turns only, as the official code does; `all` indexes every turn.
 * - Relevance (grade 1), as the official code decides it: a turn is relevant when `has_answer` is true and its
 *   session is in `answer_session_ids`; a session is relevant when it is in `answer_session_ids` and has at least
 *   one indexed `has_answer` turn (the official code renames the others `noans`).
 * - Abstention questions (`question_id` ending in `_abs`) are skipped and counted: they have no right memory.
 * - Questions with no indexed turn marked `has_answer` anywhere in their haystack (single-session-assistant ones
 *   under `roles: user`: their evidence is an assistant turn) are skipped and counted, as the official averages
 *   skip them ("no target turns from the user side", run_retrieval.py): every measure is then averaged over the
 *   questions LongMemEval averages. Questions that have such a turn but none in an answer session are kept
 *   (they score 0, as officially) and counted in the notes.
 * - For answer measures, which need every question with an answer, two options keep skipped questions as
 *   answer-only queries (their haystack is their scope, no qrels, `metadata.answerOnly: true`; the answer stage
 *   turns both on): `includeAbstention` the `_abs` ones (`metadata.abstention: true`), `keepWithoutEvidence`
 *   those without a `has_answer` turn. A question without an answer stays skipped.
 * - `answer` (a number becomes its decimal string) is the query's gold answer; `question_date` is kept in
 *   `metadata.questionDate` as written.
 * - Strata: `question_type`, with `multi-session` renamed `multi-hop`.
 * - The same session id in several haystacks (longmemeval_s reuses filler sessions) is one document shared by
 *   those scopes when its text is identical; a different text under the same id gets the id
 *   `<id>@<question_id>` and is counted in the notes, never merged silently.
 * - Timestamps: `2023/05/25 (Thu) 20:21` -> `2023-05-25T20:21:00`.
 */
export const longMemEvalOptions = z
  .object({
    unit: z.enum(['session', 'turn']).default('session'),
    roles: z.enum(['user', 'all']).default('user'),
    /** Keep `_abs` questions as answer-only queries (no qrels) for answer measures. */
    includeAbstention: z.boolean().default(false),
    /** Keep questions without an indexed `has_answer` turn as answer-only queries (no qrels) for answer measures. */
    keepWithoutEvidence: z.boolean().default(false),
  })
  .strict();
export type LongMemEvalOptions = z.output<typeof longMemEvalOptions>;

const turnSchema = z.looseObject({
  role: z.string(),
  content: z.string(),
  has_answer: z.boolean().optional(),
});
const itemSchema = z.looseObject({
  question_id: z.string().regex(/^\S+$/, 'must be non-empty without whitespace'),
  question_type: z.string().min(1),
  question: z.string().min(1),
  answer: z.union([z.string(), z.number()]).nullish(),
  question_date: z.string().optional(),
  haystack_session_ids: z.array(z.string().regex(/^\S+$/, 'must be non-empty without whitespace')),
  haystack_dates: z.array(z.string()),
  haystack_sessions: z.array(z.array(turnSchema)),
  answer_session_ids: z.array(z.string()),
});

export interface LongMemEvalStats {
  questions: number;
  /** Haystack sessions read, over every question (`_abs` ones included; a shared session once per haystack). */
  sessions: number;
  /** Turns of those sessions. */
  turns: number;
  /** Abstention questions (`_abs`), skipped unless kept for answer measures (see `answerOnly`). */
  abstention: string[];
  /** Questions kept for answer measures only (no qrels): `_abs` ones, and ones without a `has_answer` turn. */
  answerOnly: string[];
  /**
   * Questions with no indexed turn of their haystack marked `has_answer`: skipped, as the official averages skip
   * them, unless kept for answer measures (see `answerOnly`).
   */
  noTarget: string[];
  /** Questions kept with no relevant unit under the chosen unit/roles. */
  noRelevant: string[];
  /** Session ids reused with a different text, renamed `<id>@<question_id>`. */
  renamed: number;
  /** Documents shared by several scopes. */
  shared: number;
  perStratum: Record<string, number>;
}

/**
 * Reads a LongMemEval file as a stream, one question at a time (docs/adr/0042-streamed-json-datasets.md): memory
 * holds one question's raw haystack and the eval set built so far, never the file's text, so LongMemEval-M
 * (2.7 GB) loads. The eval set is the one {@link longMemEvalFromJson} builds from the parsed file.
 */
export async function loadLongMemEval(file: string, options: LongMemEvalOptions): Promise<EvalSet> {
  return (await readLongMemEval(file, options)).evalSet;
}

/** {@link loadLongMemEval} with the counts it kept; `json` sets the reader's string limit (tests). */
export async function readLongMemEval(
  file: string,
  options: LongMemEvalOptions,
  json: JsonArrayOptions = {},
): Promise<{ evalSet: EvalSet; stats: LongMemEvalStats }> {
  const builder = new LongMemEvalBuilder(file, options);
  for await (const { value, index } of readJsonArray(file, json)) builder.add(value, index);
  return builder.finish();
}

/** "2023/05/25 (Thu) 20:21" -> "2023-05-25T20:21:00"; undefined when the text has another shape. */
export function parseLongMemEvalDate(text: string): string | undefined {
  const m = /^(\d{4})\/(\d{2})\/(\d{2})(?:\s*\([A-Za-z]{3}\))?\s+(\d{2}):(\d{2})$/.exec(text.trim());
  return m === null ? undefined : `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:00`;
}

type Item = z.output<typeof itemSchema>;
type Turn = z.output<typeof turnSchema>;

/** What every haystack adds to: the documents, one per id and text in first-seen order, and the session of each turn. */
interface Corpus {
  readonly documents: Document[];
  readonly byId: Map<string, Document>;
  readonly sessionUnit: Map<string, string>;
}

/** One question's haystack as it is read: the ids in its scope, in order, and its relevant ones. */
interface Haystack {
  readonly qid: string;
  readonly where: string;
  readonly inScope: Set<string>;
  readonly scopeDocs: string[];
  readonly relevant: Map<string, number>;
}

/**
 * Adds a document to the corpus and the haystack, sharing one already read under the same id with the same
 * text, renaming one with another text `<id>@<question_id>`; returns the id it has in the scope.
 */
function addDocument(file: string, doc: Document, corpus: Corpus, hay: Haystack, stats: LongMemEvalStats): string {
  let id = doc.id;
  const prior = corpus.byId.get(id);
  if (prior !== undefined && prior.text !== doc.text) {
    id = `${doc.id}@${hay.qid}`;
    stats.renamed += 1;
  }
  if (hay.inScope.has(id)) throw new InputError(file, undefined, `${hay.where}: haystack lists "${doc.id}" twice`);
  hay.inScope.add(id);
  const existing = corpus.byId.get(id);
  if (existing === undefined) {
    const d = id === doc.id ? doc : { ...doc, id };
    corpus.byId.set(id, d);
    corpus.documents.push(d);
  } else {
    stats.shared += 1;
  }
  hay.scopeDocs.push(id);
  return id;
}

/** Options and sinks shared by every session of one haystack. */
interface SessionContext {
  readonly file: string;
  readonly options: LongMemEvalOptions;
  readonly corpus: Corpus;
  readonly hay: Haystack;
  readonly stats: LongMemEvalStats;
}

/** Whether a turn of this role is a document (or part of one) under `roles`. */
function isIndexed(options: LongMemEvalOptions, role: string): boolean {
  return options.roles === 'all' || role === 'user';
}

/**
 * Whether an indexed turn of the haystack carries `has_answer: true`. The official averages (run_retrieval.py)
 * leave out a question without one, whatever its unit, as they leave out `_abs` ones; under `roles: all` an
 * assistant turn counts, since it is then a document that can be relevant.
 */
function hasTargetTurn(item: Item, options: LongMemEvalOptions): boolean {
  return item.haystack_sessions.some((turns) => turns.some((t) => t.has_answer === true && isIndexed(options, t.role)));
}

/** One haystack session: a document, or one per indexed turn, with relevance as the official code decides it. */
function addSession(ctx: SessionContext, sid: string, turns: readonly Turn[], timestamp: string, isAnswer: boolean): void {
  const { options, hay } = ctx;
  const indexed = (role: string) => isIndexed(options, role);
  const add = (doc: Document) => addDocument(ctx.file, doc, ctx.corpus, hay, ctx.stats);
  if (options.unit === 'session') {
    const texts = turns.filter((t) => indexed(t.role)).map((t) => t.content);
    const id = add({ id: sid, text: texts.join(' '), timestamp });
    if (isAnswer && turns.some((t) => indexed(t.role) && t.has_answer === true)) hay.relevant.set(id, 1);
    return;
  }
  const sessionIds: string[] = [];
  turns.forEach((t, ti) => {
    if (!indexed(t.role)) return;
    const id = add({ id: `${sid}_${ti + 1}`, text: t.content, timestamp, metadata: { role: t.role } });
    sessionIds.push(id);
    if (isAnswer && t.has_answer === true) hay.relevant.set(id, 1);
  });
  for (const id of sessionIds) ctx.corpus.sessionUnit.set(id, sid);
}

/** Reads one question's haystack into the corpus: its scope and its relevant documents. */
function readHaystack(item: Item, where: string, ctx: Omit<SessionContext, 'hay'>): Haystack {
  const { file } = ctx;
  const n = item.haystack_session_ids.length;
  if (item.haystack_sessions.length !== n || item.haystack_dates.length !== n) {
    throw new InputError(
      file,
      undefined,
      `${where}: haystack_session_ids (${n}), haystack_sessions (${item.haystack_sessions.length}) and haystack_dates (${item.haystack_dates.length}) differ in length`,
    );
  }
  const answerSessions = new Set(item.answer_session_ids);
  const hay: Haystack = { qid: item.question_id, where, inScope: new Set(), scopeDocs: [], relevant: new Map() };
  item.haystack_session_ids.forEach((sid, si) => {
    const rawDate = item.haystack_dates[si]!;
    const timestamp = parseLongMemEvalDate(rawDate);
    if (timestamp === undefined) throw new InputError(file, undefined, `${where}.haystack_dates[${si}]: unparsable date ${JSON.stringify(rawDate)}`);
    addSession({ ...ctx, hay }, sid, item.haystack_sessions[si]!, timestamp, answerSessions.has(sid));
  });
  return hay;
}

/** The question's gold answer as text (a count may be a JSON number); undefined when it has none. */
function goldAnswer(item: Item): string | undefined {
  if (item.answer === undefined || item.answer === null) return undefined;
  const text = String(item.answer);
  return text.trim() === '' ? undefined : text;
}

function itemQuery(item: Item, stratum: string, answerOnly: boolean): Query {
  const answer = goldAnswer(item);
  const forAnswers: Record<string, JsonValue> = {
    ...(item.question_id.endsWith('_abs') ? { abstention: true } : {}),
    ...(answerOnly ? { answerOnly: true } : {}),
  };
  return {
    id: item.question_id,
    text: item.question,
    stratum,
    scope: item.question_id,
    ...(answer === undefined ? {} : { answer }),
    metadata: {
      questionType: item.question_type,
      ...(item.question_date === undefined ? {} : { questionDate: item.question_date }),
      answerSessionIds: item.answer_session_ids,
      ...forAnswers,
    },
  };
}

function longMemEvalNotes(stats: LongMemEvalStats, options: LongMemEvalOptions): string[] {
  const kept = new Set(stats.answerOnly);
  const abstention = stats.abstention.filter((q) => !kept.has(q));
  const noTarget = stats.noTarget.filter((q) => !kept.has(q));
  const notes = [
    `LongMemEval: ${stats.questions} questions, ${stats.questions - abstention.length - noTarget.length} kept, unit ${options.unit}, ${options.roles === 'user' ? 'user turns only' : 'all turns'}`,
  ];
  if (abstention.length > 0) notes.push(`${abstention.length} abstention questions (_abs) skipped: ${nameList(abstention)}`);
  if (noTarget.length > 0) {
    const turns = options.roles === 'user' ? 'user turn' : 'turn';
    notes.push(`${noTarget.length} questions with no ${turns} marked has_answer skipped, as LongMemEval's averages skip them: ${nameList(noTarget)}`);
  }
  if (stats.answerOnly.length > 0) {
    notes.push(
      `${stats.answerOnly.length} questions kept for answer measures only, without qrels (abstention, or no has_answer turn): ${nameList(stats.answerOnly)}`,
    );
  }
  if (stats.noRelevant.length > 0) {
    notes.push(`${stats.noRelevant.length} questions have no relevant ${options.unit} under this protocol (they score 0): ${nameList(stats.noRelevant)}`);
  }
  if (stats.renamed > 0) notes.push(`${stats.renamed} reused session ids carried a different text and were renamed <id>@<question_id>`);
  return notes;
}

/** A question read as a retrieval query, kept for answer measures only (no qrels), or skipped. */
type QuestionFate = 'query' | 'answer-only' | 'skip';

/** Why a file is not LongMemEval's: the message and hint every structural error shares. */
function schemaError(file: string, what: string): InputError {
  return new InputError(file, undefined, `not LongMemEval's schema: ${what}`, {
    hint: 'expected longmemeval_oracle.json / longmemeval_s*.json / longmemeval_m*.json (an array of {question_id, question_type, haystack_sessions, ...})',
  });
}

/**
 * The eval set built one question at a time, in file order: what the streamed reader and the in-memory one share,
 * so both give the same eval set. Each question is checked against the schema when it is added.
 */
class LongMemEvalBuilder {
  private readonly stats: LongMemEvalStats = {
    questions: 0,
    sessions: 0,
    turns: 0,
    abstention: [],
    answerOnly: [],
    noTarget: [],
    noRelevant: [],
    renamed: 0,
    shared: 0,
    perStratum: {},
  };
  private readonly corpus: Corpus = { documents: [], byId: new Map(), sessionUnit: new Map() };
  private readonly queries: Query[] = [];
  private readonly qrels = new Map<string, Map<string, number>>();
  private readonly scopes = new Map<string, string[]>();
  private readonly seenQuestions = new Set<string>();

  constructor(
    private readonly file: string,
    private readonly options: LongMemEvalOptions,
  ) {}

  add(value: unknown, qi: number): void {
    const parsed = itemSchema.safeParse(value);
    if (!parsed.success) {
      throw schemaError(this.file, describeIssues(parsed.error.issues.map((i) => ({ ...i, path: [qi, ...i.path] }))));
    }
    const item = parsed.data;
    const { file, options, corpus, stats } = this;
    const qid = item.question_id;
    const where = `[${qi}] (${qid})`;
    stats.questions += 1;
    stats.sessions += item.haystack_sessions.length;
    for (const turns of item.haystack_sessions) stats.turns += turns.length;
    if (this.seenQuestions.has(qid)) throw new InputError(file, undefined, `${where}: duplicate question_id`);
    this.seenQuestions.add(qid);
    const fate = this.fateOf(item);
    if (fate === 'skip') return;
    const answerOnly = fate === 'answer-only';
    const hay = readHaystack(item, where, { file, options, corpus, stats });
    this.scopes.set(qid, hay.scopeDocs);
    const stratum = item.question_type === 'multi-session' ? 'multi-hop' : item.question_type;
    stats.perStratum[stratum] = (stats.perStratum[stratum] ?? 0) + 1;
    // An answer-only question has no right memory under the protocol: no qrels, whatever its haystack flags.
    if (answerOnly) stats.answerOnly.push(qid);
    else if (hay.relevant.size === 0) stats.noRelevant.push(qid);
    else this.qrels.set(qid, hay.relevant);
    this.queries.push(itemQuery(item, stratum, answerOnly));
  }

  /**
   * What becomes of a question: `_abs` ones and those without an indexed `has_answer` turn are counted, and
   * skipped unless their option keeps them for answer measures and they have an answer.
   */
  private fateOf(item: Item): QuestionFate {
    const { options, stats } = this;
    const qid = item.question_id;
    let keep: boolean;
    if (qid.endsWith('_abs')) {
      stats.abstention.push(qid);
      keep = options.includeAbstention;
    } else if (!hasTargetTurn(item, options)) {
      stats.noTarget.push(qid);
      keep = options.keepWithoutEvidence;
    } else {
      return 'query';
    }
    return keep && goldAnswer(item) !== undefined ? 'answer-only' : 'skip';
  }

  finish(): { evalSet: EvalSet; stats: LongMemEvalStats } {
    const { file, options, corpus, stats } = this;
    if (stats.questions === 0) throw schemaError(file, '(root): the array holds no questions');
    const evalSet: EvalSet = {
      name: `${basename(file).replace(/\.json$/, '')}/${options.unit}`,
      format: 'longmemeval',
      documents: corpus.documents,
      queries: this.queries,
      qrels: this.qrels,
      scopes: this.scopes,
      ...(options.unit === 'turn' ? { units: new Map([['session', corpus.sessionUnit]]) } : {}),
      notes: longMemEvalNotes(stats, options),
    };
    return { evalSet, stats };
  }
}

/** The eval set of an already parsed LongMemEval file (tests, small files); {@link loadLongMemEval} streams. */
export function longMemEvalFromJson(file: string, data: unknown, options: LongMemEvalOptions): { evalSet: EvalSet; stats: LongMemEvalStats } {
  if (!Array.isArray(data)) throw schemaError(file, `(root): expected an array, got ${data === null ? 'null' : typeof data}`);
  const builder = new LongMemEvalBuilder(file, options);
  data.forEach((item, qi) => builder.add(item, qi));
  return builder.finish();
}
