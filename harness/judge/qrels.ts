import { isReturnedId } from '../../arms/remote/text-match.js';
import type { EvalSet, Qrels } from '../../evalset/types.js';
import { ConfigError, InputError } from '../errors.js';
import { type JudgeAudit, type JudgmentRecord, judgedQrels, mergeQrels, readJudgments } from './store.js';

/** What a report says about the qrels it scored with. */
export interface QrelsChoice {
  readonly source: 'gold' | 'judged' | 'gold+judged';
  /** Set unless `gold`: the judge, its prompt and the qrels version of the judgments read. */
  readonly judge?: {
    readonly model: string;
    readonly prompt: string;
    readonly qrelsVersion: string;
    /** Pool depth and systems, and the pooled pairs left ungraded (parse failures, sensitive not sent). */
    readonly depth: number;
    readonly pooled: readonly string[];
    readonly holes: number;
    /** The judge audit of these judgments, when one was made over this qrels version. */
    readonly audit?: JudgeAudit;
    /** The judge's own grades (gold left out), for the report's grade histogram. */
    readonly grades: Qrels;
    /** The eval set's gold qrels alone, for the verdict on gold beside the judged one. */
    readonly gold: Qrels;
  };
}

/** The choice as provenance (manifest.json): the judge's identity without the grade maps it carries for scoring. */
export function qrelsProvenance(
  choice: QrelsChoice,
): Omit<QrelsChoice, 'judge'> & { readonly judge?: Omit<NonNullable<QrelsChoice['judge']>, 'grades' | 'gold'> } {
  if (choice.judge === undefined) return choice;
  const { grades: _grades, gold: _gold, ...judge } = choice.judge;
  return { ...choice, judge };
}

/**
 * Refuses judgments that grade nothing where grades were wanted: `judged` qrels without a grade score every run
 * 0, and `gold+judged` over judgments whose every pair failed is gold under a judged label. (Judgments with no
 * record at all, where gold graded the whole pool, add nothing and need nothing: gold+judged is then gold.)
 */
function checkAddsGrades(source: QrelsChoice['source'], dir: string, records: readonly JudgmentRecord[], graded: number): void {
  if (graded > 0 || (source === 'gold+judged' && records.length === 0)) return;
  const failed = records.filter((r) => r.status === 'parse-failure').length;
  const sensitive = records.filter((r) => r.status === 'skipped-sensitive').length;
  throw new InputError(
    dir,
    undefined,
    `the judgments hold no graded pair (${records.length} records: ${failed} without a grade, ${sensitive} sensitive and not sent), so qrels: ${source} would add no judged grade`,
    { hint: 'run `harness judge` again (pairs without a grade are asked again), or score with qrels: gold' },
  );
}

/**
 * The eval set with the qrels a config chose: `gold` as loaded; `judged` the judge's grades only; `gold+judged`
 * gold with the judge's grades filling the pairs gold leaves out (gold wins where both grade a pair). Judgments
 * of queries or documents the eval set does not hold are refused: they were made for another eval set.
 */
export async function withChosenQrels(
  es: EvalSet,
  choice: { readonly qrels: QrelsChoice['source']; readonly judgments?: string; readonly file: string },
): Promise<{ es: EvalSet; qrels: QrelsChoice }> {
  if (choice.qrels === 'gold') return { es, qrels: { source: 'gold' } };
  if (choice.judgments === undefined) throw new ConfigError(choice.file, [`qrels: "${choice.qrels}" needs judgments: <folder>`]);
  const j = await readJudgments(choice.judgments);
  const queries = new Set(es.queries.map((q) => q.id));
  const docs = new Set(es.documents.map((d) => d.id));
  // A Returned item (text a system returned that no Document holds) is judged under its own id.
  const stray = j.records.find((r) => !queries.has(r.queryId) || (!docs.has(r.docId) && !isReturnedId(r.docId)));
  if (stray) {
    throw new ConfigError(choice.file, [
      `judgments: ${choice.judgments} judges ${queries.has(stray.queryId) ? `document ${stray.docId}` : `query ${stray.queryId}`}, which eval set ${es.name} does not hold; were they made for another eval set?`,
    ]);
  }
  const judged = judgedQrels(j.records);
  checkAddsGrades(choice.qrels, choice.judgments, j.records, judged.size);
  const qrels = choice.qrels === 'judged' ? judged : mergeQrels(es.qrels, judged);
  const m = j.manifest;
  return {
    es: { ...es, qrels },
    qrels: {
      source: choice.qrels,
      judge: {
        model: m.judge.model,
        prompt: `${m.judge.prompt.name}@${m.judge.prompt.sha256.slice(0, 12)}`,
        qrelsVersion: m.qrelsVersion,
        depth: m.pool.depth,
        pooled: m.pool.systems,
        // Judged alone, the pairs gold graded (and the judge was not asked about) are holes too.
        holes: j.records.filter((r) => r.status !== 'judged').length + (choice.qrels === 'judged' ? m.counts.gold : 0),
        ...(m.audit !== undefined && m.audit.qrelsVersion === m.qrelsVersion ? { audit: m.audit } : {}),
        grades: judged,
        gold: es.qrels,
      },
    },
  };
}
