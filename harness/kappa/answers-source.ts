import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { loadConfig } from '../config/load.js';
import { InputError, InputProblems, UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { loadConfiguredEvalSet } from '../ablate/scopes.js';
import { answerQuestions } from '../answer/questions.js';
import { readReport } from '../report/write.js';

/**
 * A report folder's graded answers as a human checks them (docs/answer-evaluation.md, "Validating the answer
 * judge"): the questions the report scored (report.json), each system's answer and the judge's grade
 * (`answers/<system>.jsonl`), and the identity of all of it, so a kappa session is tied to one set of grades
 * as a relevance session is tied to one Qrels version.
 */

/** One answer to hand-label. No grade here, so a session cannot show it by mistake; no text, so the file stays small. */
export interface AnswerKappaItem {
  readonly questionId: string;
  readonly system: string;
  readonly stratum: string;
  /** {@link answerSha} of the answer labelled: the label belongs to that text, not to what a later run answers. */
  readonly answerSha: string;
}

/** A labellable answer: shown (not withheld as sensitive) and graded by the report's judge. */
export interface GradedAnswer extends AnswerKappaItem {
  readonly answer: string;
  /** Who graded (`binary/gpt-4o-mini`, `recorded:mem0`), as the answers file names it. */
  readonly judge: string;
  readonly correct: 0 | 1;
}

/** The graded answers of one report folder. */
export interface AnsweredReport {
  readonly dir: string;
  /** Identity of the judge's settings and every labellable answer with its grade; a session records it. */
  readonly gradesVersion: string;
  /** The report's runs, each with an answers file, in report order. */
  readonly systems: readonly string[];
  /** Question id -> its text, for every question the report scored. */
  readonly questionText: ReadonlyMap<string, string>;
  /**
   * The labellable answers: every system's answer to each report question that every system has a shown, graded
   * answer to (so a question's labels can give its human accuracy for every system), in report order.
   */
  readonly answers: readonly GradedAnswer[];
  /** Report questions left out: an answer withheld as sensitive, or not graded. */
  readonly leftOut: number;
  /** The study config the report was made with (absolute), from its manifest. */
  readonly configFile: string;
}

/** The identity of one answer text: the first 16 hex digits of its sha256. */
export function answerSha(text: string): string {
  return sha256Hex(text).slice(0, 16);
}

/** `system\tquestionId`: one answer's key. */
export const answerKey = (system: string, questionId: string) => `${system}\t${questionId}`;

async function readJson(file: string, what: string): Promise<Record<string, unknown>> {
  if (!existsSync(file))
    throw new InputError(file, undefined, `missing: ${what}`, { hint: 'give --answers the report folder written by harness ablate with an answer: block' });
  try {
    const v = JSON.parse(await readFile(file, 'utf8')) as unknown;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // reported below, with the file
  }
  throw new InputError(file, undefined, `not a JSON object (${what})`);
}

/** One line of `answers/<system>.jsonl`, as far as a label needs it. */
interface AnswerLine {
  readonly answer: string | null;
  readonly correct: boolean | null;
  readonly judge: string | null;
}

/** The lines of one answers file by question id; a malformed line is reported at its `file:line`. */
async function answerLines(file: string): Promise<Map<string, AnswerLine>> {
  if (!existsSync(file)) throw new InputError(file, undefined, 'missing: every answered system of a report has its answers file');
  const out = new Map<string, AnswerLine>();
  const problems: InputError[] = [];
  (await readFile(file, 'utf8')).split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return void problems.push(new InputError(file, i + 1, 'not a JSON line'));
    }
    const ok =
      typeof v['question_id'] === 'string' &&
      (v['answer'] === null || typeof v['answer'] === 'string') &&
      (v['correct'] === null || typeof v['correct'] === 'boolean') &&
      (v['judge'] === null || typeof v['judge'] === 'string');
    if (!ok) return void problems.push(new InputError(file, i + 1, 'not an answer line of harness ablate (question_id, answer, correct, judge)'));
    out.set(v['question_id'] as string, { answer: v['answer'] as string | null, correct: v['correct'] as boolean | null, judge: v['judge'] as string | null });
  });
  if (problems.length > 0)
    throw problems.length === 1 ? (problems[0] as InputError) : new InputProblems(problems.slice(0, 50), { truncated: problems.length > 50 });
  return out;
}

/** Every system's graded, shown answer to one question, or undefined when some system has none. */
function wholeQuestion(
  q: { id: string; stratum: string },
  systems: readonly string[],
  lines: ReadonlyMap<string, ReadonlyMap<string, AnswerLine>>,
): GradedAnswer[] | undefined {
  const out: GradedAnswer[] = [];
  for (const system of systems) {
    const l = lines.get(system)?.get(q.id);
    if (l === undefined || l.answer === null || l.correct === null) return undefined;
    out.push({
      questionId: q.id,
      system,
      stratum: q.stratum,
      answerSha: answerSha(l.answer),
      answer: l.answer,
      judge: l.judge ?? 'unknown',
      correct: l.correct ? 1 : 0,
    });
  }
  return out;
}

/**
 * Reads a report folder's graded answers. Refused (exit 2): a folder that is not a report, a report without an
 * answer level, and one whose answers carry no grade (nothing for a human to check the judge against).
 */
export async function readAnsweredReport(dir: string): Promise<AnsweredReport> {
  const manifest = await readJson(join(dir, 'manifest.json'), 'the manifest of a report folder');
  // The report as every reader of a report folder gets it: recovered from an interrupted write, version-checked.
  const report = await readReport(dir);
  const answer = manifest['answer'] as Record<string, JsonValue> | undefined;
  if (answer === undefined || report.answerLevel === undefined)
    throw new UsageError(`${dir} has no answer level: its study asked no answer measure`, {
      hint: 'run harness ablate with Acc in measures and an answer: block with a judge, then label that report',
    });
  const systems = report.runs.map((r) => r.id);
  const queries = report.queries.map((q) => ({ id: q.id, stratum: q.stratum, text: q.text ?? '' }));
  const lines = new Map<string, Map<string, AnswerLine>>();
  for (const s of systems) lines.set(s, await answerLines(join(dir, 'answers', `${s}.jsonl`)));
  const answers: GradedAnswer[] = [];
  let leftOut = 0;
  for (const q of queries) {
    const whole = wholeQuestion(q, systems, lines);
    if (whole === undefined) leftOut++;
    else answers.push(...whole);
  }
  if (answers.length === 0)
    throw new UsageError(`${dir}: no question has a graded answer from every system (${leftOut} left out: ungraded or withheld as sensitive)`, {
      hint: 'the answer judge grades answers when Acc is in measures and answer.judge is set',
    });
  const graded = answers.map((a) => [a.system, a.questionId, a.answerSha, a.judge, a.correct]);
  const gradesVersion = sha256Hex(canonicalJson({ judge: answer['judge'] ?? null, graded })).slice(0, 16);
  const configFile = resolve(dir, typeof manifest['configFile'] === 'string' ? manifest['configFile'] : '');
  return { dir, gradesVersion, systems, questionText: new Map(queries.map((q) => [q.id, q.text] as const)), answers, leftOut, configFile };
}

/**
 * The gold answer of every question, read from the eval set of the study config (the report's own, or
 * `config`): the report folder keeps answers and grades, not golds, which only a session shows.
 */
export async function goldAnswers(
  r: AnsweredReport,
  opts: { config?: string; env: NodeJS.ProcessEnv; cwd: string; log: Logger },
): Promise<Map<string, string>> {
  const file = opts.config ?? r.configFile;
  if (!existsSync(file))
    throw new UsageError(`${file}: the study config of ${r.dir} is not there; a session shows each question's gold answer from its eval set`, {
      hint: 'give the study config with --config',
    });
  const cfg = loadConfig(file, { env: opts.env, cwd: opts.cwd });
  const es = await loadConfiguredEvalSet(cfg, opts.log);
  const gold = new Map(answerQuestions(es).questions.map((q) => [q.id, q.gold] as const));
  const missing = [...new Set(r.answers.map((a) => a.questionId))].filter((q) => !gold.has(q));
  if (missing.length > 0)
    throw new UsageError(
      `${file}: its eval set has no gold answer for ${missing.length} question${missing.length === 1 ? '' : 's'} of ${r.dir} (${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''})`,
      { hint: 'the eval set changed since the report was made: ablate again, or give the config it was made with (--config)' },
    );
  return gold;
}
