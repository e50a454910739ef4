import { writeFileAtomic } from '../cache/index.js';
import { InputError, UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { readAnswerLabelRows, throwProblems } from './answers-labels.js';
import { type AnswerKappaReport, answerDisagreementsCsv, answerKappaReport, type LabelledAnswer } from './answers-report.js';
import { answerSample } from './answers-sample.js';
import { type AnswerSessionState, loadAnswerSession, newAnswerSession, runAnswerSession, saveAnswerSession } from './answers-session.js';
import { type AnsweredReport, answerKey, type GradedAnswer, goldAnswers, readAnsweredReport } from './answers-source.js';
import type { KappaIo, KappaOptions } from './run.js';
import { keysOf } from './session.js';

/**
 * `harness kappa --answers REPORT_DIR`: hand-check the answer judge of a report (docs/answer-evaluation.md,
 * "Validating the answer judge"). A blind, resumable session over a stratified sample of the report's questions
 * (question, gold answer and answer shown; never the judge's grade nor the system), or labels from a file, then
 * the kappa check of the judge's grades against the labels.
 */

/** The sampling and check settings (strata, seed, threshold, bootstrap, disagreements file) are the relevance check's. */
export interface AnswerKappaRunOptions
  extends Pick<KappaOptions, 'reportOnly' | 'perStratum' | 'oversample' | 'seed' | 'threshold' | 'resamples' | 'level' | 'disagreements'> {
  /** The report folder (written by `harness ablate` with an answer level). */
  readonly report: string;
  /** The session file; required unless `labels` (the report folder is replaced by the next ablation). */
  readonly session?: string;
  /** An answer labels file (`system questionId correct`) instead of a session. */
  readonly labels?: string;
  /** The study config whose eval set gives the gold answers; default the report's own (its manifest). */
  readonly config?: string;
  /** A new session's question count; default {@link defaultAnswerQuestions}. */
  readonly questions?: number;
}

export interface AnswerKappaIo extends KappaIo {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

export interface AnswerKappaOutcome {
  /** Undefined when the session stopped before the end and no report was asked for. */
  readonly report?: AnswerKappaReport;
  readonly complete: boolean;
  readonly session?: AnswerSessionState;
}

const byKey = (r: AnsweredReport) => new Map<string, GradedAnswer>(r.answers.map((a) => [answerKey(a.system, a.questionId), a] as const));

const labelled = (a: GradedAnswer, human: 0 | 1): LabelledAnswer => ({
  questionId: a.questionId,
  system: a.system,
  stratum: a.stratum,
  judge: a.judge,
  human,
  llm: a.correct,
});

/** A session's labelled answers with the judge's grades (the session was checked against the report on load). */
function sessionLabelled(s: AnswerSessionState, r: AnsweredReport): LabelledAnswer[] {
  const graded = byKey(r);
  return s.items.flatMap((it, i) => {
    const h = s.labels[i];
    const a = graded.get(answerKey(it.system, it.questionId));
    return (h === 0 || h === 1) && a !== undefined ? [labelled(a, h)] : [];
  });
}

/** A labels file's answers, each line checked to be a graded answer of the report (refused at its line otherwise). */
async function fileLabelled(file: string, r: AnsweredReport): Promise<LabelledAnswer[]> {
  const hint = 'give --labels an answer labels file: one "system questionId correct" line per answer, correct 1 or 0';
  const read = await readAnswerLabelRows(file, hint);
  if (read.kind === 'session') throw new UsageError(`${file} is a kappa session: give it with --session, not --labels`);
  const graded = byKey(r);
  const problems: InputError[] = [...read.problems];
  const out: LabelledAnswer[] = [];
  for (const row of read.rows) {
    const a = graded.get(answerKey(row.system, row.questionId));
    if (a !== undefined) out.push(labelled(a, row.correct));
    else
      problems.push(
        new InputError(
          file,
          row.line,
          `system ${row.system}, question ${row.questionId} is not a graded answer of ${r.dir} (systems: ${r.systems.join(', ')}; a question counts when every system's answer is shown and graded)`,
        ),
      );
  }
  throwProblems(problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  return out;
}

/** A new session over the report's graded answers, saved before the first key. */
async function startSession(opts: AnswerKappaRunOptions, r: AnsweredReport, file: string, log: Logger): Promise<AnswerSessionState> {
  const items = answerSample(
    r.answers.map(({ questionId, system, stratum, answerSha }) => ({ questionId, system, stratum, answerSha })),
    {
      seed: opts.seed,
      ...(opts.questions === undefined ? {} : { questions: opts.questions }),
      ...(opts.perStratum === undefined ? {} : { perStratum: opts.perStratum }),
      ...(opts.oversample === undefined ? {} : { oversample: opts.oversample }),
    },
  );
  const s = newAnswerSession(r.gradesVersion, opts.seed, items);
  await saveAnswerSession(file, s);
  const questions = new Set(items.map((it) => it.questionId)).size;
  log.info(`kappa: new session of ${items.length} answers (${questions} questions, every system's answer to each) in ${file}`);
  if (r.leftOut > 0) log.info(`kappa: ${r.leftOut} questions of the report left out: some system's answer is ungraded or withheld as sensitive`);
  return s;
}

/**
 * Hand-checks the answer judge of a report: labels from a file, or a session (new, resumed, or only reported), then
 * the kappa report (the disagreements CSV written when asked). A session of other grades is refused.
 */
export async function runAnswerKappa(opts: AnswerKappaRunOptions, io: AnswerKappaIo): Promise<AnswerKappaOutcome> {
  const r = await readAnsweredReport(opts.report);
  const finish = async (xs: readonly LabelledAnswer[]) => {
    if (opts.disagreements !== undefined) await writeFileAtomic(opts.disagreements, answerDisagreementsCsv(xs));
    const { threshold, resamples, seed, level } = opts;
    return answerKappaReport(xs, { gradesVersion: r.gradesVersion, systems: r.systems, threshold, resamples, seed, level, graded: r.answers.length });
  };
  if (opts.labels !== undefined) return { report: await finish(await fileLabelled(opts.labels, r)), complete: true };
  const file = opts.session;
  if (file === undefined)
    throw new UsageError('--answers: give --session FILE (a session of your own) or --labels FILE', {
      hint: 'the session lives outside the report folder, which the next harness ablate replaces',
    });
  let s = await loadAnswerSession(file, r);
  if (opts.reportOnly) {
    if (s === undefined)
      throw new UsageError(`no session at ${file} to report on`, {
        hint: `label some answers first: harness kappa --answers ${opts.report} --session ${file}`,
      });
    const xs = sessionLabelled(s, r);
    if (xs.length === 0) throw new UsageError(`${file} holds no labels yet`);
    return { report: await finish(xs), complete: s.position >= s.items.length, session: s };
  }
  const gold = await goldAnswers(r, { ...(opts.config === undefined ? {} : { config: opts.config }), env: io.env, cwd: io.cwd, log: io.log });
  if (s === undefined) s = await startSession(opts, r, file, io.log);
  else io.log.info(`kappa: resuming ${file} at answer ${Math.min(s.position + 1, s.items.length)} of ${s.items.length}`);
  const graded = byKey(r);
  const state = s;
  const complete = await runAnswerSession(state, {
    keys: keysOf(io.input),
    write: io.write,
    view: (it) => ({
      question: r.questionText.get(it.questionId) ?? '',
      gold: gold.get(it.questionId) ?? '',
      answer: graded.get(answerKey(it.system, it.questionId))?.answer ?? '',
    }),
    save: (x) => saveAnswerSession(file, x),
  });
  if (!complete) return { complete, session: state };
  const xs = sessionLabelled(state, r);
  if (xs.length === 0) throw new UsageError('every answer was skipped: no labels to compare');
  return { report: await finish(xs), complete, session: state };
}
