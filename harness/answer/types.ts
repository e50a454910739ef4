import type { TokenCount } from '../llm/price.js';
/**
 * The answer level's vocabulary (CONTEXT.md, "Answer evaluation"): a Question with its gold Answer, a Reader
 * that answers it from a context, an AnswerJudge that grades the answer against the gold under a protocol's
 * profile, and the per-question outcomes the decision stage scores (`Acc`, `F1-LoCoMo`, `F1-set`, `EM`).
 *
 * These types are the contract between the answer stage's parts: the readers and judge profiles
 * (reader.ts, judges.ts), answers files (files.ts), the stage that runs them (stage.ts) and the report.
 */

/** The protocol a question comes from: it picks the judge's routing and the protocol's aggregates. */
export type AnswerProtocol = 'longmemeval' | 'locomo' | 'generic';

/** One question to answer, as the answer stage and the judges see it. Ids are eval-set query ids. */
export interface AnswerQuestion {
  readonly id: string;
  readonly text: string;
  /** The gold answer (LoCoMo's `answer`, LongMemEval's `answer`, a memory store's `answer`). */
  readonly gold: string;
  readonly stratum: string;
  /** The retrieval scope the question searches in (one LoCoMo conversation, one LongMemEval haystack). */
  readonly scope?: string;
  /** ISO date-time of the question (LongMemEval's `question_date`), shown to the reader after the history. */
  readonly date?: string;
  /** LongMemEval's `question_type` (routes the judge's prompt). */
  readonly questionType?: string;
  /** LoCoMo's category 1-5 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial). */
  readonly category?: number;
  /** The question has no answer in the history (LongMemEval `_abs`, LoCoMo category 5): correct is saying so. */
  readonly abstention: boolean;
  /** Document ids of the question's evidence (its qrels' relevant documents), for attribution. */
  readonly evidence: readonly string[];
}

/** One piece of the context a reader sees: a memory, turn or session, with its date when it has one. */
export interface ContextItem {
  readonly id: string;
  readonly text: string;
  /** ISO 8601 date or date-time. */
  readonly timestamp?: string;
  readonly title?: string;
}

/** Prompt and completion tokens of one request (or a sum of them). */
export type { TokenCount } from '../llm/price.js';

/** A reader's answer to one question, or why there is none. A failure is counted, never graded. */
export type ReaderOutcome =
  | { readonly status: 'answered'; readonly text: string; readonly tokens: TokenCount; readonly model: string; readonly context: readonly string[] }
  | { readonly status: 'failed'; readonly reason: string; readonly tokens: TokenCount };

/** One judge reply read as a grade: correct or wrong, or unparsable (counted apart, never graded as wrong). */
export type GradeSample =
  | { readonly status: 'graded'; readonly correct: boolean; readonly reply: string }
  | { readonly status: 'failed'; readonly reason: string };

/** A judged answer: the majority of `samples` replies (ties count as wrong), and how the samples split. */
export interface AnswerGrade {
  /** Undefined when no sample could be graded: the question is a failure, not a wrong answer. */
  readonly correct?: boolean;
  readonly samples: readonly GradeSample[];
  /** Graded samples that disagree with the majority, over the graded samples (0 with one sample). */
  readonly flipRate: number;
  readonly tokens: TokenCount;
  /** Who graded: a configured judge (`profile/model`) or a recorded one from an answers file (`recorded:mem0`). */
  readonly judge: string;
}

/** Everything one system's answer to one question came to. */
export interface QuestionOutcome {
  readonly questionId: string;
  readonly answer: ReaderOutcome;
  /** Absent when the answer failed, or when no judge is configured and none was recorded. */
  readonly grade?: AnswerGrade;
  /** Lexical measures of the answer against the gold: `F1-LoCoMo`, `F1-set` (mem0's), `EM`. */
  readonly lexical?: Readonly<Record<string, number>>;
  /** Whether any evidence document was in the context the reader saw (undefined: the question has no evidence ids). */
  readonly evidenceInContext?: boolean;
  /**
   * The answer came from a context holding a Sensitive memory, or the question's evidence is one: the answer may
   * restate it, so its text is kept out of the cache and withheld from the report folder's files.
   */
  readonly sensitive?: true;
}

/** One answered system: its outcomes in question order. */
export interface AnsweredSystem {
  readonly id: string;
  /** How it answered: `reader` (its own top-k), `full-context`, or `answers-file`. */
  readonly source: 'reader' | 'full-context' | 'answers-file';
  readonly outcomes: readonly QuestionOutcome[];
}

/**
 * The formats of an answers file (files.ts, docs/answers-files.md): mem0's LoCoMo evaluation JSON, LongMemEval's
 * hypothesis JSONL (with its judged log), or the workbench's own JSONL.
 */
export type AnswersFileFormat = 'mem0' | 'longmemeval' | 'jsonl';

/** A grade another tool recorded beside an answer: counted as that tool's judge, never re-graded silently. */
export interface RecordedGrade {
  readonly correct?: boolean;
  /** The tool's own F1 (mem0's `f1_score`, over token sets), kept for comparison; the workbench recomputes its own `F1-set`. */
  readonly f1?: number;
  /** The model the label came from, where the file names one (LongMemEval's `autoeval_label.model`). */
  readonly judge?: string;
}

/** One answer read from an answers file, before it is mapped onto a question. */
export interface AnswerRow {
  /** Where it was read, for messages and counts: `file:line` (JSONL) or `file:key[i]` (mem0's JSON). */
  readonly where: string;
  /** 0-based position of the LoCoMo conversation in its file (mem0's keys). */
  readonly conversationIndex?: number;
  /** The eval-set query id, where the file names one (LongMemEval, our JSONL). */
  readonly questionId?: string;
  readonly question?: string;
  readonly response: string;
  /** The gold answer as the file has it (mem0 writes LoCoMo's `answer`); the eval set's own gold is what grades. */
  readonly gold?: string;
  readonly category?: number;
  readonly recorded?: RecordedGrade;
}
