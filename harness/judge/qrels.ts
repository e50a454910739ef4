import { isReturnedId } from '../../arms/remote/text-match.js';
import type { EvalSet } from '../../evalset/types.js';
import { ConfigError } from '../errors.js';
import { type JudgeAudit, judgedQrels, mergeQrels, readJudgments } from './store.js';

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
  };
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
      },
    },
  };
}
