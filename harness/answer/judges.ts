import { readFile } from 'node:fs/promises';
import { sha256Hex } from '../cache/index.js';
import { InputError, UsageError } from '../errors.js';
import { loadPrompt, type PromptTemplate, renderPrompt } from '../judge/prompt.js';
import type { AnswerQuestion } from './types.js';

/** The answer judges' protocols: LongMemEval's yes/no judge, mem0's LoCoMo JSON label, a plain verdict word. */
export type AnswerJudgeProfileId = 'longmemeval' | 'locomo' | 'binary';

export const ANSWER_JUDGE_PROFILE_IDS: readonly AnswerJudgeProfileId[] = ['longmemeval', 'locomo', 'binary'];

/** How one protocol's judge is asked about an answer and how its reply is read. */
export interface AnswerJudgeProfile {
  readonly id: AnswerJudgeProfileId;
  /** The prompt for one answer. */
  prompt(q: AnswerQuestion, answer: string): string;
  /** Correct, wrong, or undefined when the reply cannot be read. */
  parse(reply: string): boolean | undefined;
  /** Decoding the protocol prescribes. */
  readonly maxTokens: number;
  /** The format instruction added when a reply could not be read and the judge is asked again. */
  readonly reask?: string;
  /** sha256 over the profile, its decoding and every prompt it routes to: changes whenever a grade may. */
  readonly fingerprint?: string;
}

/** LongMemEval's question types, each a key of the longmemeval profile's prompt files. */
export const LONGMEMEVAL_QUESTION_TYPES = [
  'single-session-user',
  'single-session-assistant',
  'multi-session',
  'temporal-reasoning',
  'knowledge-update',
  'single-session-preference',
] as const;

/** The placeholders a prompt must have and may have; any other `{{...}}` is a mistake worth stopping for. */
export interface PromptSlots {
  readonly required: readonly string[];
  readonly optional?: readonly string[];
}

/** Every `{{...}}` in a text, with its 1-based line, spacing and case as written. */
function placeholders(text: string): { readonly name: string; readonly line: number }[] {
  return [...text.matchAll(/\{\{([^{}]*)\}\}/g)].map((m) => ({ name: m[1] as string, line: text.slice(0, m.index).split('\n').length }));
}

/**
 * Checks a prompt's placeholders: every required one present, no other than the required and optional ones
 * (a `{{ Question }}` would be sent to the model as is). The error names the file and the line.
 */
export function checkPlaceholders(t: PromptTemplate, slots: PromptSlots, file: string): void {
  const allowed = [...slots.required, ...(slots.optional ?? [])];
  const list = allowed.map((s) => `{{${s}}}`).join(', ');
  const found = placeholders(t.text);
  const stray = found.find((p) => !allowed.includes(p.name));
  if (stray) throw new InputError(file, stray.line, `unknown placeholder {{${stray.name}}}: this prompt takes ${list}`);
  const missing = slots.required.filter((s) => !found.some((p) => p.name === s));
  if (missing.length > 0) {
    throw new InputError(file, undefined, `the prompt has no ${missing.map((s) => `{{${s}}}`).join(', ')}: this prompt takes ${list}`, {
      hint: 'a prompt copied from Python code has {} or {name} fields: write each as one of the placeholders, in double braces',
    });
  }
}

/** A user's prompt file as a template named by its path, its placeholders checked. */
export async function promptFile(file: string, slots: PromptSlots): Promise<PromptTemplate> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new InputError(file, undefined, `cannot read the prompt file (${typeof code === 'string' ? code : String(err)})`);
  }
  const t: PromptTemplate = { name: file, text, sha256: sha256Hex(text) };
  checkPlaceholders(t, slots, file);
  return t;
}

const JUDGE_SLOTS: PromptSlots = { required: ['question', 'gold', 'answer'] };

/**
 * LongMemEval's verdict: correct when the reply, lower-cased, contains "yes" (its official rule, kept so
 * accuracies compare; "yesterday" would count too). An empty reply says nothing and cannot be read.
 */
export function parseYes(reply: string): boolean | undefined {
  if (reply.trim() === '') return undefined;
  return reply.toLowerCase().includes('yes');
}

/** The text inside a Markdown code fence when the reply is fenced, else the reply. */
function unfenced(reply: string): string {
  const m = /^```[\w-]*\s*\n?([\s\S]*?)\n?```\s*$/.exec(reply.trim());
  return m ? (m[1] as string) : reply.trim();
}

/** The `label` of a JSON object, read case-free, when it is CORRECT or WRONG. */
function labelOf(json: string): boolean | undefined {
  try {
    const o = JSON.parse(json) as unknown;
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return undefined;
    const key = Object.keys(o).find((k) => k.toLowerCase() === 'label');
    const v = key === undefined ? undefined : (o as Record<string, unknown>)[key];
    const label = typeof v === 'string' ? v.trim().toUpperCase() : '';
    return label === 'CORRECT' ? true : label === 'WRONG' ? false : undefined;
  } catch {
    return undefined;
  }
}

/**
 * mem0's LoCoMo verdict: the `label` of the JSON object in the reply, CORRECT or WRONG (case-free), the
 * object alone, inside a code fence, or the first `{...}` in surrounding prose. Anything else (a bare word,
 * another label, broken JSON) cannot be read: guessing would give a label the judge never gave.
 */
export function parseLabel(reply: string): boolean | undefined {
  const body = unfenced(reply);
  const whole = labelOf(body);
  if (whole !== undefined) return whole;
  const first = /\{[^{}]*\}/.exec(body);
  return first ? labelOf(first[0]) : undefined;
}

/**
 * The binary verdict: the reply's first word, after any leading quotes, asterisks or other marks, case-free:
 * CORRECT or YES is correct, WRONG, INCORRECT or NO is wrong; any other first word cannot be read.
 */
export function parseVerdict(reply: string): boolean | undefined {
  const word = /^[^\p{L}\p{N}]*(\p{L}+)/u.exec(reply)?.[1]?.toLowerCase();
  if (word === 'correct' || word === 'yes') return true;
  if (word === 'wrong' || word === 'incorrect' || word === 'no') return false;
  return undefined;
}

/** A profile's routing and reading: its prompt keys, the built-in prompt of each, and how a reply is read. */
interface ProfileSpec {
  readonly keys: readonly string[];
  /** The keys a user's `default` file stands for, besides `default` itself. */
  readonly defaultGroup: readonly string[];
  readonly builtin: (key: string) => string;
  readonly route: (q: AnswerQuestion) => string;
  readonly parse: (reply: string) => boolean | undefined;
  readonly maxTokens: number;
  readonly reask: string;
}

/** LongMemEval's built-in prompt per key: the three fact-recall types share the default one. */
function longmemevalPrompt(key: string): string {
  switch (key) {
    case 'abstention':
      return 'longmemeval-abstention';
    case 'temporal-reasoning':
      return 'longmemeval-temporal';
    case 'knowledge-update':
      return 'longmemeval-knowledge-update';
    case 'single-session-preference':
      return 'longmemeval-preference';
    default:
      return 'longmemeval-default';
  }
}

/** A profile of two prompts, `name` and `name-abstention`, picked by whether the question is an abstention one. */
const withAbstention = (name: string): Pick<ProfileSpec, 'keys' | 'defaultGroup' | 'builtin' | 'route'> => ({
  keys: ['default', 'abstention'],
  defaultGroup: [],
  builtin: (key) => (key === 'abstention' ? `${name}-abstention` : name),
  route: (q) => (q.abstention ? 'abstention' : 'default'),
});

const SPECS: Readonly<Record<AnswerJudgeProfileId, ProfileSpec>> = {
  longmemeval: {
    keys: ['default', 'abstention', ...LONGMEMEVAL_QUESTION_TYPES],
    defaultGroup: ['single-session-user', 'single-session-assistant', 'multi-session'],
    builtin: longmemevalPrompt,
    // `_abs` questions first, whatever their type; then the type; a type LongMemEval does not have gets the default.
    route: (q) =>
      q.abstention ? 'abstention' : (LONGMEMEVAL_QUESTION_TYPES as readonly string[]).includes(q.questionType ?? '') ? (q.questionType as string) : 'default',
    parse: parseYes,
    maxTokens: 10,
    reask: 'Reply with yes or no only.',
  },
  locomo: {
    ...withAbstention('locomo'),
    parse: parseLabel,
    // mem0 sets no limit; room for the JSON object in a code fence, and for the one-sentence reason that a
    // user's copy of mem0's own prompt asks for before the label.
    maxTokens: 200,
    reask: 'Reply with the JSON object {"label": "CORRECT"} or {"label": "WRONG"} and nothing else.',
  },
  binary: {
    ...withAbstention('binary'),
    parse: parseVerdict,
    maxTokens: 10,
    reask: 'Begin your reply with the single word CORRECT or WRONG.',
  },
};

/** The template of every key: the user's file for it (or their `default` for the default group), else ours. */
async function templates(spec: ProfileSpec, files: Readonly<Record<string, string>>): Promise<Map<string, PromptTemplate>> {
  const out = new Map<string, PromptTemplate>();
  for (const key of spec.keys) {
    const file = files[key] ?? (spec.defaultGroup.includes(key) ? files['default'] : undefined);
    const t = file === undefined ? loadPrompt('answer', spec.builtin(key)) : await promptFile(file, JUDGE_SLOTS);
    if (file === undefined) checkPlaceholders(t, JUDGE_SLOTS, `harness/answer/prompts/${t.name}.md`);
    out.set(key, t);
  }
  return out;
}

/** What a slot shows when the question has no gold text (a LoCoMo adversarial question without an answer). */
const NO_GOLD = '(none given)';

/**
 * The answer judge of a protocol. `promptFiles` maps a prompt key to a user's file that replaces the built-in
 * prompt for it: `default`, `abstention`, and for longmemeval each question type (a `default` file also stands
 * for the three fact-recall types unless they have their own). Every file is read and checked here, so a
 * mistake stops the run before any request; an unknown key is a usage error naming the keys there are.
 */
export async function judgeProfile(id: AnswerJudgeProfileId, promptFiles: Readonly<Record<string, string>> = {}): Promise<AnswerJudgeProfile> {
  const spec = SPECS[id];
  if (spec === undefined) throw new UsageError(`answer judge profile "${String(id)}": use one of ${ANSWER_JUDGE_PROFILE_IDS.join(', ')}`);
  const unknown = Object.keys(promptFiles).filter((k) => !spec.keys.includes(k));
  if (unknown.length > 0) {
    throw new UsageError(`answer judge profile ${id}: no prompt key ${unknown.map((k) => `"${k}"`).join(', ')}; its keys are ${spec.keys.join(', ')}`);
  }
  const routes = await templates(spec, promptFiles);
  const shas = [...routes].map(([key, t]) => [key, t.sha256]).sort();
  return {
    id,
    prompt: (q, answer) =>
      renderPrompt(routes.get(spec.route(q)) as PromptTemplate, { question: q.text, gold: q.gold.trim() === '' ? NO_GOLD : q.gold, answer }),
    parse: spec.parse,
    maxTokens: spec.maxTokens,
    reask: spec.reask,
    fingerprint: sha256Hex(JSON.stringify({ id, maxTokens: spec.maxTokens, reask: spec.reask, prompts: shas })),
  };
}
