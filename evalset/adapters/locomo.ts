import { basename } from 'node:path';
import { z } from 'zod';
import { InputError } from '../../harness/errors.js';
import { describeIssues, nameList, readJsonFile } from '../lines.js';
import type { Document, EvalSet, JsonValue, Query } from '../types.js';
import { DEFAULT_EXACT_THRESHOLD, exactOrParaphrase } from './overlap.js';

/**
 * LoCoMo (Maharana et al., ACL 2024, arXiv 2402.17753; snap-research/locomo `data/locomo10.json`) as an eval set.
 * Conventions (docs/adr/0007-locomo-strata.md, ../shared/design/DATA.md §2):
 *
 * - Units. `turn`: one document per dialogue turn, id `<sample_id>:<dia_id>` (dia_ids repeat across
 *   conversations), text `<speaker>: <text>` plus ` [image: <blip_caption>]` when the turn has a caption,
 *   timestamp = the session's `date_time` as ISO 8601 local time. `session`: one document per session, id
 *   `<sample_id>:session_<n>`, text = its turns' texts joined by newlines. `observation`: one document per
 *   LLM-generated observation fact, id `<sample_id>:O<n>:<i>` (session n, i 1-based in file order), relevant
 *   when one of its dia_ids is evidence.
 * - `units.session` maps every turn/observation id to its session id, so turn runs can be scored per session.
 * - Scope: each query sees only its own conversation (`scopes`: sample_id -> doc ids) unless `scope: pooled`.
 * - Evidence ids are normalised ({@link normalizeEvidence}); ids that still name no turn of the conversation
 *   are dropped and counted; a QA left without valid evidence (or, at unit `observation`, without a document
 *   holding it) is excluded and counted, unless `keepWithoutEvidence`: then a QA with an answer is kept for
 *   answer measures only (no qrels, `metadata.answerOnly: true`), so that every question with an answer
 *   reaches the answer level (1,540 of categories 1-4 in locomo10.json), and counted.
 * - Categories as the repo's task_eval/evaluation.py reads them (not the paper's list order): 1 multi-hop,
 *   2 temporal, 3 open-domain, 4 single-hop, 5 adversarial. Adversarial QAs are excluded unless
 *   `includeAdversarial` (their evidence is topical but the question is a trap: there is no right memory).
 * - Answers: `answer` (a number becomes its decimal string) is the query's gold answer. An adversarial QA is an
 *   abstention question (`metadata.abstention: true`): its gold is {@link LOCOMO_ABSTENTION_ANSWER}, and the
 *   trap answer it baits (`adversarial_answer`) is kept in `metadata.adversarialAnswer`.
 * - `metadata.conversationIndex`: the 0-based index of the conversation in the file, the key mem0's evaluation
 *   files use for a conversation.
 * - Strata: `multi-hop` (1), `temporal` (2), `open-domain` (3), `exact` / `paraphrase` (4, by the overlap rule
 *   in ./overlap.ts against the evidence turns' texts, whatever the unit), `adversarial` (5, when included).
 * - Query id `<sample_id>:q<i>`, i the 0-based position in the sample's `qa` list (stable across options).
 *   Qrels grade 1.
 */
export const locomoOptions = z
  .object({
    unit: z.enum(['turn', 'session', 'observation']).default('turn'),
    scope: z.enum(['conversation', 'pooled']).default('conversation'),
    includeAdversarial: z.boolean().default(false),
    imageCaptions: z.boolean().default(true),
    exactThreshold: z.number().min(0).max(1).default(DEFAULT_EXACT_THRESHOLD),
    /** Keep QAs without valid evidence as answer-only queries (no qrels); the answer stage turns it on. */
    keepWithoutEvidence: z.boolean().default(false),
  })
  .strict();
export type LocomoOptions = z.output<typeof locomoOptions>;

export const LOCOMO_CATEGORIES = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' } as const;
type Category = keyof typeof LOCOMO_CATEGORIES;

/**
 * The gold answer of an adversarial (category 5) question: the conversation does not hold it, and a right
 * answer says so. LoCoMo's own scoring counts a reply as right when it says the information is not there.
 */
export const LOCOMO_ABSTENTION_ANSWER = 'Not answerable: the conversation does not contain this information';

/** A gold answer as the source writes it: text, or a number (a year, a count). */
const answerValue = z.union([z.string(), z.number()]).nullish();

const turnSchema = z.looseObject({
  speaker: z.string(),
  dia_id: z.string(),
  text: z.string(),
  blip_caption: z.string().optional(),
});
const qaSchema = z.looseObject({
  question: z.string().min(1),
  evidence: z.array(z.string()),
  category: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(4), z.literal(5)]),
  answer: answerValue,
  adversarial_answer: answerValue,
});
const sampleSchema = z.looseObject({
  sample_id: z.string().regex(/^\S+$/, 'must be non-empty without whitespace'),
  conversation: z.record(z.string(), z.unknown()),
  qa: z.array(qaSchema),
  observation: z.record(z.string(), z.record(z.string(), z.array(z.tuple([z.string(), z.union([z.string(), z.array(z.string())])])))).optional(),
});
const fileSchema = z.array(sampleSchema).min(1);

export interface LocomoStats {
  conversations: number;
  sessions: number;
  turns: number;
  qas: number;
  byCategory: Record<Category, number>;
  evidence: {
    /** Raw evidence strings that held several ids (`"D8:6; D9:17"`) and were split. */
    split: number;
    /** Ids rewritten into canonical form (`D:11:26` -> `D11:26`, `D30:05` -> `D30:5`). */
    fixed: number;
    /** Ids dropped because, after normalisation, they name no turn of their conversation: `sample:qN "id"`. */
    dropped: string[];
    /** Ids listed twice in one QA (kept once). */
    duplicates: number;
  };
  excluded: { adversarial: number; noEvidence: string[]; noUnitEvidence: string[] };
  /** QAs without valid evidence (or without a document of the unit holding it) kept for answers only. */
  answerOnly: { noEvidence: string[]; noUnitEvidence: string[] };
  queriesPerStratum: Record<string, number>;
}

export async function loadLocomo(file: string, options: LocomoOptions): Promise<EvalSet> {
  return locomoFromJson(file, await readJsonFile(file), options).evalSet;
}

/**
 * Splits evidence strings on `;`, `,` and whitespace, then canonicalises each id: `D:11:26` -> `D11:26` and
 * leading zeros removed (`D30:05` -> `D30:5`). Returns canonical ids (or the raw token when it has no `D<n>:<i>`
 * shape, so the caller can drop and name it), and how many strings were split and ids fixed.
 */
export function normalizeEvidence(raw: readonly string[]): { ids: string[]; split: number; fixed: number } {
  const ids: string[] = [];
  let split = 0;
  let fixed = 0;
  for (const entry of raw) {
    const parts = entry.split(/[;,\s]+/).filter((p) => p !== '');
    if (parts.length > 1) split += 1;
    for (const p of parts) {
      const m = /^D:?0*(\d+):0*(\d+)$/.exec(p);
      if (m === null) {
        ids.push(p);
        continue;
      }
      const canonical = `D${m[1]}:${m[2]}`;
      if (canonical !== p) fixed += 1;
      ids.push(canonical);
    }
  }
  return { ids, split, fixed };
}

/** "1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00" (LoCoMo dates carry no time zone; none is invented). */
export function parseLocomoDate(text: string): string | undefined {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(text.trim());
  if (m === null) return undefined;
  const month = MONTHS.indexOf(m[5]!.toLowerCase().slice(0, 3)) + 1;
  let hour = Number(m[1]);
  const minute = Number(m[2]);
  const day = Number(m[4]);
  if (month === 0 || hour < 1 || hour > 12 || minute > 59 || day < 1 || day > 31) return undefined;
  const pm = m[3]!.toLowerCase() === 'pm';
  if (hour === 12) hour = pm ? 12 : 0;
  else if (pm) hour += 12;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${m[6]}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:00`;
}
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

interface Turn {
  doc: Document;
  session: number;
}

type Sample = z.output<typeof sampleSchema>;
type Qa = z.output<typeof qaSchema>;

/** One conversation read: its turns by dia_id, one document per session, and the session numbers in order. */
interface Conversation {
  readonly sid: string;
  /** 0-based position of the conversation in the file. */
  readonly index: number;
  readonly turns: ReadonlyMap<string, Turn>;
  readonly sessionDocs: readonly Document[];
  readonly sessionNumbers: readonly number[];
}

/** The documents a conversation gives at the chosen unit, and (observations) the ones citing each dia_id. */
interface UnitDocuments {
  readonly documents: readonly Document[];
  /** Document id -> its session id, for turns and observations, in document order. */
  readonly sessionUnit: readonly (readonly [string, string])[];
  readonly obsByTurn: ReadonlyMap<string, readonly string[]>;
}

function emptyStats(): LocomoStats {
  return {
    conversations: 0,
    sessions: 0,
    turns: 0,
    qas: 0,
    byCategory: { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 },
    evidence: { split: 0, fixed: 0, dropped: [], duplicates: 0 },
    excluded: { adversarial: 0, noEvidence: [], noUnitEvidence: [] },
    answerOnly: { noEvidence: [], noUnitEvidence: [] },
    queriesPerStratum: {},
  };
}

/** One session's turns, added to `turns`, and its session document. */
function readSession(file: string, sample: Sample, n: number, where: string, options: LocomoOptions, turns: Map<string, Turn>): Document {
  const sid = sample.sample_id;
  const key = `session_${n}`;
  const rawTurns = z.array(turnSchema).safeParse(sample.conversation[key]);
  if (!rawTurns.success) {
    throw new InputError(file, undefined, `${where}.conversation.${key}: ${describeIssues(rawTurns.error.issues)}`);
  }
  const rawDate = sample.conversation[`${key}_date_time`];
  const timestamp = typeof rawDate === 'string' ? parseLocomoDate(rawDate) : undefined;
  if (timestamp === undefined) {
    throw new InputError(file, undefined, `${where}.conversation.${key}_date_time: missing or unparsable date ${JSON.stringify(rawDate)}`, {
      hint: 'expected the form "1:56 pm on 8 May, 2023"',
    });
  }
  const texts: string[] = [];
  for (const t of rawTurns.data) {
    const id = `${sid}:${t.dia_id}`;
    if (/\s/.test(t.dia_id)) throw new InputError(file, undefined, `${where}.conversation.${key}: dia_id ${JSON.stringify(t.dia_id)} contains whitespace`);
    if (turns.has(t.dia_id)) throw new InputError(file, undefined, `${where}.conversation.${key}: duplicate dia_id "${t.dia_id}"`);
    const caption = options.imageCaptions && t.blip_caption !== undefined && t.blip_caption !== '' ? ` [image: ${t.blip_caption}]` : '';
    const text = `${t.speaker}: ${t.text}${caption}`;
    texts.push(text);
    turns.set(t.dia_id, { doc: { id, text, timestamp, metadata: { session: key, speaker: t.speaker } }, session: n });
  }
  return { id: `${sid}:${key}`, text: texts.join('\n'), timestamp, metadata: { session: key } };
}

/** Every session of a conversation, in session-number order; `index` is the conversation's place in the file. */
function readConversation(file: string, sample: Sample, index: number, where: string, options: LocomoOptions, stats: LocomoStats): Conversation {
  const turns = new Map<string, Turn>();
  const sessionDocs: Document[] = [];
  const sessionNumbers = Object.keys(sample.conversation)
    .map((k) => /^session_(\d+)$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  for (const n of sessionNumbers) sessionDocs.push(readSession(file, sample, n, where, options, turns));
  stats.sessions += sessionDocs.length;
  stats.turns += turns.size;
  return { sid: sample.sample_id, index, turns, sessionDocs, sessionNumbers };
}

/** One document per observation fact, relevant through the dia_ids it cites. */
function observationDocuments(conv: Conversation, sample: Sample): UnitDocuments {
  const { sid, turns } = conv;
  const documents: Document[] = [];
  const sessionUnit: [string, string][] = [];
  const obsByTurn = new Map<string, string[]>();
  const obs = sample.observation ?? {};
  for (const n of conv.sessionNumbers) {
    const facts = obs[`session_${n}_observation`];
    if (facts === undefined) continue;
    const timestamp = conv.sessionDocs.find((d) => d.id === `${sid}:session_${n}`)?.timestamp;
    let i = 0;
    for (const [speaker, list] of Object.entries(facts)) {
      for (const [fact, diaIds] of list) {
        i += 1;
        const id = `${sid}:O${n}:${i}`;
        const cited = normalizeEvidence(Array.isArray(diaIds) ? diaIds : [diaIds]).ids.filter((d) => turns.has(d));
        documents.push({
          id,
          text: fact,
          ...(timestamp === undefined ? {} : { timestamp }),
          metadata: { session: `session_${n}`, speaker, diaIds: cited },
        });
        sessionUnit.push([id, `${sid}:session_${n}`]);
        for (const d of cited) obsByTurn.set(d, [...(obsByTurn.get(d) ?? []), id]);
      }
    }
  }
  return { documents, sessionUnit, obsByTurn };
}

function unitDocuments(conv: Conversation, sample: Sample, unit: LocomoOptions['unit']): UnitDocuments {
  if (unit === 'session') return { documents: conv.sessionDocs, sessionUnit: [], obsByTurn: new Map() };
  if (unit === 'observation') return observationDocuments(conv, sample);
  const turns = [...conv.turns.values()];
  return {
    documents: turns.map((t) => t.doc),
    sessionUnit: turns.map((t) => [t.doc.id, `${conv.sid}:session_${t.session}`] as const),
    obsByTurn: new Map(),
  };
}

/** A QA's evidence ids that name a turn of the conversation, each once; the others are counted. */
function validEvidence(qid: string, evidence: readonly string[], turns: ReadonlyMap<string, Turn>, stats: LocomoStats): string[] {
  const norm = normalizeEvidence(evidence);
  stats.evidence.split += norm.split;
  stats.evidence.fixed += norm.fixed;
  const valid: string[] = [];
  for (const id of norm.ids) {
    if (!turns.has(id)) {
      stats.evidence.dropped.push(`${qid} ${JSON.stringify(id)}`);
    } else if (valid.includes(id)) {
      stats.evidence.duplicates += 1;
    } else {
      valid.push(id);
    }
  }
  return valid;
}

/** The documents of the chosen unit that hold a QA's evidence turns. */
function relevantUnits(valid: readonly string[], conv: Conversation, units: UnitDocuments, unit: LocomoOptions['unit']): Set<string> {
  const relevant = new Set<string>();
  for (const id of valid) {
    const turn = conv.turns.get(id)!;
    if (unit === 'turn') relevant.add(turn.doc.id);
    else if (unit === 'session') relevant.add(`${conv.sid}:session_${turn.session}`);
    else for (const o of units.obsByTurn.get(id) ?? []) relevant.add(o);
  }
  return relevant;
}

/**
 * A QA's gold answer: category 5 has none in the conversation, so its gold is the abstention answer; otherwise
 * `answer`, a number as its decimal string. Undefined when the QA has no (non-empty) answer.
 */
function goldAnswer(qa: Qa, category: Category): string | undefined {
  if (category === 5) return LOCOMO_ABSTENTION_ANSWER;
  if (qa.answer === undefined || qa.answer === null) return undefined;
  const text = String(qa.answer);
  return text.trim() === '' ? undefined : text;
}

/** The QA's stratum: its category's name, single-hop split by word overlap with the evidence turns' texts. */
function qaStratum(qa: Qa, category: Category, valid: readonly string[], conv: Conversation, options: LocomoOptions): string {
  // Without evidence there is nothing to measure the overlap against: the category's own name, not a guess.
  if (category !== 4 || valid.length === 0) return LOCOMO_CATEGORIES[category];
  return exactOrParaphrase(
    qa.question,
    valid.map((id) => conv.turns.get(id)!.doc.text),
    options.exactThreshold,
  );
}

/** What a query carries for the answer level beside its category: abstention, the trap answer, answer-only. */
function answerMetadata(qa: Qa, category: Category, answerOnly: boolean): Record<string, JsonValue> {
  const trap = qa.adversarial_answer;
  return {
    ...(category === 5 ? { abstention: true } : {}),
    ...(category === 5 && trap !== undefined && trap !== null ? { adversarialAnswer: String(trap) } : {}),
    ...(answerOnly ? { answerOnly: true } : {}),
  };
}

/**
 * A QA as a Query with its relevant documents, or undefined when it is excluded (and counted). Without
 * relevant documents it is kept, answer-only, when `keepWithoutEvidence` is set and it has an answer.
 */
function qaQuery(
  qa: Qa,
  qi: number,
  conv: Conversation,
  units: UnitDocuments,
  options: LocomoOptions,
  stats: LocomoStats,
): { readonly query: Query; readonly relevant: ReadonlySet<string> } | undefined {
  stats.qas += 1;
  const category = qa.category as Category;
  stats.byCategory[category] += 1;
  const qid = `${conv.sid}:q${qi}`;
  const valid = validEvidence(qid, qa.evidence, conv.turns, stats);
  if (category === 5 && !options.includeAdversarial) {
    stats.excluded.adversarial += 1;
    return undefined;
  }
  const answer = goldAnswer(qa, category);
  const relevant = valid.length === 0 ? new Set<string>() : relevantUnits(valid, conv, units, options.unit);
  if (relevant.size === 0) {
    const why = valid.length === 0 ? 'noEvidence' : 'noUnitEvidence';
    if (!options.keepWithoutEvidence || answer === undefined) {
      stats.excluded[why].push(qid);
      return undefined;
    }
    stats.answerOnly[why].push(qid);
  }
  const stratum = qaStratum(qa, category, valid, conv, options);
  stats.queriesPerStratum[stratum] = (stats.queriesPerStratum[stratum] ?? 0) + 1;
  const query: Query = {
    id: qid,
    text: qa.question,
    stratum,
    ...(options.scope === 'conversation' ? { scope: conv.sid } : {}),
    ...(answer === undefined ? {} : { answer }),
    metadata: {
      category,
      categoryName: LOCOMO_CATEGORIES[category],
      conversationIndex: conv.index,
      evidence: valid,
      ...answerMetadata(qa, category, relevant.size === 0),
    },
  };
  return { query, relevant };
}

/** What loading counted, fixed, dropped, excluded and kept for answers only, as the eval set's notes. */
function locomoNotes(stats: LocomoStats, options: LocomoOptions): string[] {
  const { unit } = options;
  const notes: string[] = [
    `LoCoMo: ${stats.conversations} conversations, ${stats.sessions} sessions, ${stats.turns} turns, ${stats.qas} QAs ` +
      `(categories 1-5: ${[1, 2, 3, 4, 5].map((c) => stats.byCategory[c as Category]).join('/')})`,
    `evidence: ${stats.evidence.split} lists split, ${stats.evidence.fixed} ids fixed, ${stats.evidence.duplicates} duplicates merged, ` +
      `${stats.evidence.dropped.length} ids dropped (name no turn)${stats.evidence.dropped.length > 0 ? `: ${nameList(stats.evidence.dropped)}` : ''}`,
  ];
  if (stats.excluded.adversarial > 0) notes.push(`${stats.excluded.adversarial} adversarial QAs (category 5) excluded; set includeAdversarial to keep them`);
  // With keepWithoutEvidence, the QAs still excluded are those without an answer as well.
  const why = options.keepWithoutEvidence ? 'excluded (no answer either)' : 'excluded (keepWithoutEvidence keeps them for answer measures)';
  const counted = (ids: readonly string[], what: string) => {
    if (ids.length > 0) notes.push(`${ids.length} QAs ${what}: ${nameList(ids)}`);
  };
  counted(stats.excluded.noEvidence, `without valid evidence ${why}`);
  counted(stats.excluded.noUnitEvidence, `whose evidence turns have no ${unit} ${why}`);
  counted(stats.answerOnly.noEvidence, 'without valid evidence kept for answer measures only (no qrels)');
  counted(stats.answerOnly.noUnitEvidence, `whose evidence turns have no ${unit} kept for answer measures only (no qrels)`);
  return notes;
}

/** The adapter proper, on already-parsed JSON; `file` is only for messages. */
export function locomoFromJson(file: string, data: unknown, options: LocomoOptions): { evalSet: EvalSet; stats: LocomoStats } {
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    throw new InputError(file, undefined, `not LoCoMo's schema: ${describeIssues(parsed.error.issues)}`, {
      hint: 'expected locomo10.json from snap-research/locomo (an array of {sample_id, conversation, qa, observation})',
    });
  }
  const stats = emptyStats();
  const documents: Document[] = [];
  const queries: Query[] = [];
  const qrels = new Map<string, Map<string, number>>();
  const scopes = new Map<string, string[]>();
  const sessionUnit = new Map<string, string>();
  const seenSamples = new Set<string>();
  parsed.data.forEach((sample, si) => {
    const sid = sample.sample_id;
    const where = `[${si}] (${sid})`;
    if (seenSamples.has(sid)) throw new InputError(file, undefined, `${where}: duplicate sample_id`);
    seenSamples.add(sid);
    stats.conversations += 1;
    const conv = readConversation(file, sample, si, where, options, stats);
    const units = unitDocuments(conv, sample, options.unit);
    for (const d of units.documents) documents.push(d);
    for (const [id, session] of units.sessionUnit) sessionUnit.set(id, session);
    scopes.set(
      sid,
      units.documents.map((d) => d.id),
    );
    sample.qa.forEach((qa, qi) => {
      const q = qaQuery(qa, qi, conv, units, options, stats);
      if (q === undefined) return;
      queries.push(q.query);
      // An answer-only query has no judgments: no qrels entry, so no measure reads it as judged.
      if (q.relevant.size > 0) qrels.set(q.query.id, new Map([...q.relevant].map((d) => [d, 1])));
    });
  });
  const evalSet: EvalSet = {
    name: `${basename(file).replace(/\.json$/, '')}/${options.unit}${options.scope === 'pooled' ? '/pooled' : ''}`,
    format: 'locomo',
    documents,
    queries,
    qrels,
    ...(options.scope === 'conversation' ? { scopes } : {}),
    ...(options.unit === 'session' ? {} : { units: new Map([['session', sessionUnit]]) }),
    notes: locomoNotes(stats, options),
  };
  return { evalSet, stats };
}
