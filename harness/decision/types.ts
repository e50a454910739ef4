import type { JsonValue, QrelsCompleteness } from '../../evalset/types.js';
import type { Deviation } from '../recipes/fidelity.js';
import type { ResultCheck, SystemDiagnostics } from '../systems/types.js';
import type { CompareConfig, GateConfig } from '../compare/config.js';
import type { Comparison, FamilyInfo } from '../compare/types.js';
import type { HumanLabelsInput, PpiRow, Validation } from './evidence-types.js';
import type { AnswerLevel } from './answer-level.js';

export type { Comparison, ComparisonRole, FamilyInfo } from '../compare/types.js';

/** Version of the `report.json` layout; `harness report` refuses any other. Bump on an incompatible change. */
export const REPORT_VERSION = 3;

/** Name of the overall row added when a report has two or more strata. A stratum may not use it. */
export const OVERALL = 'all';

/** The eval set as the report describes it: provenance only, never document text. */
export interface ReportEvalSet {
  readonly name: string;
  readonly format: string;
  /** As written in the config (relative), so the report carries no absolute path. */
  readonly path: string;
  readonly fingerprint: string;
  readonly queries: number;
  readonly documents: number;
  readonly strata: Readonly<Record<string, number>>;
  /** Loading notes (items fixed, dropped, zero-filled), printed verbatim. */
  readonly notes: readonly string[];
  /** `gold`: human qrels only; `judged`: an LLM judge's grades only; `gold+judged`: holes filled by the judge named in `judge`. */
  readonly qrelsSource: 'gold' | 'judged' | 'gold+judged';
  /**
   * True when the qrels hold judgments below the relevance level (a pooled qrels), false when they list only
   * relevant documents (LoCoMo, LongMemEval), absent when the producer did not say. Judged@k reads as coverage
   * of the judged pool only when true; with relevant-only qrels it equals precision.
   */
  readonly qrelsJudgesNonRelevant?: boolean;
  /**
   * `complete`: every unlisted document is known non-relevant, so there are no judgment holes and no holes
   * check; `pooled`: unlisted documents are unknown. Absent in reports written before it was declared (read as
   * pooled).
   */
  readonly qrelsCompleteness?: QrelsCompleteness;
  /**
   * The judge, its prompt (name@sha256 prefix) and the qrels version of the judgments scored with; with the
   * pool's depth, the systems pooled, and its holes (pairs pooled but left ungraded: parse failures and
   * sensitive memories not sent), so a report knows which runs the judgments cover to which depth.
   */
  readonly judge?: {
    readonly model: string;
    readonly prompt: string;
    readonly qrelsVersion?: string;
    readonly depth?: number;
    readonly pooled?: readonly string[];
    readonly holes?: number;
    /** The judge audit of these judgments (`harness judge --audit`), when its qrels version is the one scored with. */
    readonly audit?: JudgeAudit;
    /**
     * How many pairs the judge gave each grade, per stratum (and `all`): `grades[stratum][g]` pairs at grade g.
     * A judge that gives one grade to everything shows here before any number is read.
     */
    readonly grades?: Readonly<Record<string, readonly number[]>>;
  };
}

export interface ReportRun {
  readonly id: string;
  /** Arm kind or fusion method, e.g. `bm25`, `rrf`, or `trec-file` for `harness compare`. */
  readonly kind: string;
  readonly fingerprint: string;
  readonly label?: string;
  /** Set when the run stands in for something else, e.g. "GloVe stands in for bge-large". Always warned. */
  readonly substitute?: string;
  /**
   * A Recipe's deviations from its source document (`substitute`: something stands in for what the source
   * specifies; `assumption`: the source is silent), each with the stage concerned and the system whose entry
   * declared it; a recipe's row carries those of every stage under it. Absent when there are none.
   */
  readonly deviations?: readonly Deviation[];
  /**
   * How the run was made: `retrieve` (an arm), `fuse` (from the runs in `inputs`), `tune` (a grid's point
   * picked without the test queries). Absent for runs read from files (`harness compare`).
   */
  readonly node?: string;
  readonly inputs?: readonly string[];
  /** Params with defaults filled, as the system ran. */
  readonly params?: JsonValue;
  /** The config entry (grid) the system was expanded from, and its point in that grid. */
  readonly group?: string;
  readonly point?: Readonly<Record<string, JsonValue>>;
  /** Fusions: how much of the fused top-k each input contributed, and whether it can reach it at all. */
  readonly diagnostics?: SystemDiagnostics;
  /** Set only when the Result check found the run empty for most queries or mostly ids the eval set lacks. */
  readonly resultCheck?: ResultCheck;
  /** Set for a system whose results hold text mapped to Documents or Returned items (a rewriting memory server). */
  readonly textMapping?: TextMappingShares;
  /** Tuned systems: the measure, how the point was picked, the picks and the oracle (best on test). */
  readonly tuning?: ReportTuning;
  /**
   * A system that sends text off this machine: how the eval set's Sensitive Documents were kept from it
   * (`skip`: left out of its corpus; `route`: retrieved by the local arm `route`), and how many there were.
   */
  readonly sensitive?: { readonly policy: 'skip' | 'route'; readonly route?: string; readonly documents: number };
}

export interface RecallCurves {
  readonly cutoffs: readonly number[];
  /** run -> stratum (and `all`) -> mean R@k for each cutoff. */
  readonly means: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;
}

export type ReportCosts = Readonly<
  Record<
    string,
    {
      readonly indexMs: number;
      readonly searchMs: number;
      readonly queryMsP50: number;
      readonly queryMsP95: number;
      readonly indexStats: Readonly<Record<string, number>>;
    }
  >
>;

/** A document as an example shows it: its text, or only its id when it is sensitive. */
export interface ExampleDoc {
  readonly docId: string;
  readonly text?: string;
  readonly sensitive?: boolean;
}

export interface QueryExample {
  readonly stratum: string;
  readonly kind: 'gain' | 'loss';
  readonly queryId: string;
  readonly text: string;
  readonly baselineValue: number;
  readonly systemValue: number;
  readonly baselineTop: readonly ExampleDoc[];
  readonly systemTop: readonly ExampleDoc[];
}

export interface ReportTuning {
  readonly measure: string;
  readonly method: 'folds' | 'split';
  readonly choices: readonly { readonly fold: string; readonly member: string; readonly trainMean: number; readonly queries: number }[];
  readonly oracle: { readonly member: string; readonly mean: number };
}

/**
 * Everything the report is computed from: plain, serializable data. `perQuery[run][measure][i]` is the score of
 * `queries[i]`, already zero-filled for queries the run missed.
 */
export interface ReportInput {
  readonly name: string;
  /** The question the study asks (the config's `description`), which every rendering opens with. */
  readonly description?: string;
  readonly configHash: string;
  readonly evalset: ReportEvalSet;
  readonly runs: readonly ReportRun[];
  /** Canonical spellings (`nDCG@10`, `R@100`, `Judged@10`). */
  readonly measures: readonly string[];
  /** Query text is present when the report was made from an eval set (not from TREC files). */
  readonly queries: readonly { readonly id: string; readonly stratum: string; readonly text?: string }[];
  readonly perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;
  /** Mean recall at the usual depths up to topK, per run and stratum (independent of `measures`). */
  readonly curves?: RecallCurves;
  /** Cost of each run's system: index size and time, per-query latency (from the run cache, so reruns repeat them). */
  readonly costs?: ReportCosts;
  /** The queries where the gate's (or the best) system differs most from its baseline, with what each retrieved. */
  readonly examples?: { readonly baseline: string; readonly system: string; readonly measure: string; readonly queries: readonly QueryExample[] };
  readonly compare: CompareConfig;
  readonly gate?: GateConfig;
  /** Human labels of the judged pool (the config's `humanLabels:`): PPI-corrected deltas and the validation read them. */
  readonly humanLabels?: HumanLabelsInput;
  /** The exact command that regenerates this report, printed in every rendering. */
  readonly command: string;
  /** On judged or pooled qrels: the primary measure beside its Condensed list form and Bpref, and the decisions re-made on it. */
  readonly holes?: HolesCheck;
  /** On judged qrels with gold beside them: the gate's verdict by the same rule on gold qrels alone. */
  readonly goldOnly?: GoldOnlyVerdict;
  // answer level (issue 43): answered systems' accuracy, judge variance, attribution, failures, cost (answer-level.ts).
  readonly answerLevel?: AnswerLevel;
}

/** The gate decided on the eval set's gold qrels alone (what the judge filled in counts as not relevant). */
export interface GoldOnlyVerdict {
  readonly verdict: Verdict;
  readonly reason: string;
  /** Test queries with at least one gold judgment. */
  readonly judgedQueries: number;
}

/**
 * Whether judgment holes could decide (ADR 0040): each system's overall mean on the primary measure, on its
 * Condensed list form and on Bpref; the gate's verdict and the tuned picks made on plain and condensed scores.
 */
export interface HolesCheck {
  readonly measure: string;
  /** The condensed measure's name, e.g. `nDCG'@10`. */
  readonly condensed: string;
  /**
   * Per system over every test query, grid members left out (their tuned system stands for them); a tuned
   * system's condensed value is the one re-tuned on condensed scores.
   */
  readonly rows: readonly { readonly run: string; readonly measure: number; readonly condensed: number; readonly bpref: number }[];
  /** The gate decided on plain and on condensed per-query values of its measure, by the same rule. */
  readonly gate?: { readonly plain: Verdict; readonly condensed: Verdict; readonly plainReason: string; readonly condensedReason: string };
  /** Each tuned grid's picked members (one per fold, or the split's), tuned on plain and on condensed scores. */
  readonly picks: readonly { readonly tuned: string; readonly measure: string; readonly plain: readonly string[]; readonly condensed: readonly string[] }[];
}

export interface StratumInfo {
  readonly id: string;
  readonly n: number;
  /** True for the `all` row that pools every stratum. */
  readonly overall: boolean;
}

/** Mean of one run on one measure in one stratum. */
export interface SummaryRow {
  readonly stratum: string;
  readonly run: string;
  readonly measure: string;
  readonly n: number;
  readonly mean: number;
}

/**
 * `confirmatory`: one of the gate's comparisons, declared in the config before the data were seen and corrected
 * only within the gate's family. `exploratory`: every other comparison, corrected within its own families.
 */

export type WarningSeverity = 'info' | 'warning' | 'serious';

/**
 * A caveat the report derived from its own numbers; `code` is stable, `subject` names what it is about;
 * `gate` is true when it bears on the gate's verdict (the ADR quotes only those).
 */
export interface ReportWarning {
  readonly code: string;
  readonly severity: WarningSeverity;
  readonly message: string;
  readonly subject: string;
  readonly gate: boolean;
}

export type Verdict = 'ADOPT' | 'REJECT' | 'INCONCLUSIVE';

export interface GateResult {
  readonly verdict: Verdict;
  readonly reason: string;
  readonly config: GateConfig & { readonly baseline: string };
}

/** The content of `report.json`: the input, plus everything derived from it. Contains no timestamp. */
export interface ReportData extends ReportInput {
  readonly version: typeof REPORT_VERSION;
  readonly baseline: string;
  /** Superscript letter of each run, in run order (a, b, c, ...), used by significance marks. */
  readonly letters: Readonly<Record<string, string>>;
  /** Strata in order of first appearance, then the overall row when there are two or more. */
  readonly strata: readonly StratumInfo[];
  /** Measures that are tested (all but `Judged@k`). */
  readonly testedMeasures: readonly string[];
  readonly summary: readonly SummaryRow[];
  readonly comparisons: readonly Comparison[];
  readonly families: readonly FamilyInfo[];
  readonly warnings: readonly ReportWarning[];
  readonly gateResult?: GateResult;
  /** With human labels: every comparison's plain and PPI-corrected delta side by side (docs/adr/0038). */
  readonly ppi?: readonly PpiRow[];
  /** With human labels: whether the decision reproduces under them (docs/adr/0038). */
  readonly validation?: Validation;
  /** With a gate: the one verdict every rendering and the CLI print, with its qualifiers and exit status. */
  readonly decision?: Decision;
  /** The head-to-head questions' answers and the best systems per stratum. */
  readonly answers: Answers;
}

/** The judge as the verdict reads it (on judged or gold+judged qrels). */
export interface JudgeHealth {
  /** The qrels the relevance judge graded, or `answers`: the gate decides on `Acc`, the answer judge's grades. */
  readonly qrels: 'judged' | 'gold+judged' | 'answers';
  /** `missing`: no human labels; `stale`: labels of another qrels version; then the validation's own result. */
  readonly validation: 'passed' | 'failed' | 'missing' | 'stale';
  readonly failures: readonly string[];
  /** Under `gate.judged: ppi`: why the gate's pooled comparison has no PPI interval. */
  readonly ppiUnavailable?: string;
  /** Pairs per grade the judge gave, per stratum (ReportEvalSet.judge.grades). */
  readonly grades?: Readonly<Record<string, readonly number[]>>;
  /** The gate by its own rule on gold qrels alone. */
  readonly goldOnly?: GoldOnlyVerdict;
}

/** How a `compare.questions` entry came out: the comparison it asks for (role, pair, measure) and the sentence the report states. */
export interface QuestionAnswer extends Pick<Comparison, 'role' | 'baseline' | 'system' | 'measure'> {
  readonly id: string;
  readonly sentence: string;
}

/**
 * The best system of one stratum on the primary measure (its summary row's stratum, measure and mean), and where
 * every other stands against it.
 */
export interface BestInStratum extends Pick<SummaryRow, 'stratum' | 'measure' | 'mean'> {
  /** The best system's id. */
  readonly best: string;
  /** Tested against the best (a family of their own per stratum) and not significantly worse. */
  readonly notWorse: readonly string[];
  readonly worse: readonly string[];
}

/** What a study answers besides its gate's verdict (docs/adr/0044). */
export interface Answers {
  readonly questions: readonly QuestionAnswer[];
  readonly best: readonly BestInStratum[];
}

/** The verdict of a gated report (docs/adr/0044). */
export interface Decision {
  readonly verdict: Verdict;
  /** What the gate decided on: gold qrels, the judge's grades, or the judge's grades corrected by PPI. */
  readonly basis: 'gold' | 'judge' | 'ppi';
  /** `ADOPT on judge labels; judge not validated (no human labels)`: the verdict with every qualifier. */
  readonly headline: string;
  /** The gate's reason: the comparison that decided. */
  readonly reason: string;
  readonly qualifiers: readonly string[];
  /** What `--gate-exit` exits with (GATE_EXIT). */
  readonly exitCode: 0 | 3 | 4;
  readonly judge?: JudgeHealth;
}

/**
 * How a system's returned text became results (Text mapping): the arm's hits mapped by id, by equal or
 * contained text, by fuzzy match, or left as Returned items; and of its results over every query, those that
 * are Returned items and how many of them the scoring qrels grade (the judge's), the rest scoring 0 unjudged.
 */
export interface TextMappingShares {
  /** Hits as the arm mapped them (absent for a derived system, which maps nothing itself). */
  readonly hits?: { readonly byId: number; readonly byText: number; readonly byFuzzy: number; readonly returned: number };
  /** Result entries over every query, those that are Returned items, and those of them with a grade. */
  readonly results: number;
  readonly returnedResults: number;
  readonly returnedJudged: number;
}

/** A judge robustness probe: a change to a judged passage that should not raise its grade (ADR 0040). */
export type AuditProbe = 'stuffing' | 'injection' | 'padding';

/** What one probe did to the grades of its sampled pairs. */
export interface AuditProbeResult {
  readonly probe: AuditProbe;
  /** How the passage was changed, in words (printed beside the numbers). */
  readonly change: string;
  /** Judged pairs the probe applies to (by original grade), and those drawn. */
  readonly eligible: number;
  readonly drawn: number;
  /** Drawn pairs the probed passage got a grade for (the rest: parse failures, or sensitive and not sent). */
  readonly probed: number;
  readonly moved: number;
  readonly up: number;
  /** Mean of probed grade - original grade over the probed pairs; null when none was probed. */
  readonly meanShift: number | null;
  /** Wilson 95% intervals of up / probed and moved / probed; null when none was probed. */
  readonly upInterval: readonly [number, number] | null;
  readonly movedInterval: readonly [number, number] | null;
}

/** The `audit` block of a judgments manifest: `harness judge --audit` over the judgments of `qrelsVersion`. */
export interface JudgeAudit {
  readonly qrelsVersion: string;
  readonly pairs: number;
  readonly seed: number;
  /** The `judge.audit.maxUpRate` the audit was run under (a report reading a config uses that config's). */
  readonly maxUpRate: number;
  readonly probes: readonly AuditProbeResult[];
  readonly requests: number;
  readonly cachedReplies: number;
  readonly at: string;
}
