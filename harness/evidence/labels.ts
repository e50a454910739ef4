import { readFile } from 'node:fs/promises';
import type { Qrels } from '../../evalset/types.js';
import { InputError } from '../errors.js';
import { type Judgments, readJudgments } from '../judge/store.js';
import { queryCoverage } from '../kappa/coverage.js';
import type { LabelledPair } from '../kappa/report.js';
import { filePairs, sessionPairs } from '../kappa/run.js';
import { loadSession } from '../kappa/session.js';

/** Human labels read and checked against the judgments they label. */
export interface HumanLabelSet {
  readonly kind: 'session' | 'qrels';
  readonly qrelsVersion: string;
  /** Every labelled pair (a grade 0-3; skips and unreached session items left out), with the judge's grade. */
  readonly pairs: readonly LabelledPair[];
  /** Queries whose every judged pair is labelled, in the judgments' order. */
  readonly complete: readonly string[];
  readonly incomplete: readonly string[];
}

/**
 * Human labels from a kappa session (a JSON object; one made for another qrels version is refused: its pairs and
 * the judge's grades it is compared with belong to another pool or judge) or TREC qrels (`queryId 0 docId grade`,
 * each line checked against the judged pairs). Problems name the file and line.
 */
export async function readHumanLabels(file: string, judgmentsDir: string | Judgments): Promise<HumanLabelSet> {
  const j = typeof judgmentsDir === 'string' ? await readJudgments(judgmentsDir) : judgmentsDir;
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(file, undefined, `cannot be read (${err.code ?? err.message})`, { hint: 'humanLabels: give a kappa session or TREC qrels' });
  });
  const graded = j.records.filter((r) => r.status === 'judged');
  const llm = new Map(graded.map((r) => [`${r.queryId}\t${r.docId}`, r.grade as number] as const));
  let pairs: LabelledPair[];
  let kind: HumanLabelSet['kind'];
  if (text.trimStart().startsWith('{')) {
    const strata = new Map(graded.map((r) => [`${r.queryId}\t${r.docId}`, r.stratum] as const));
    const s = await loadSession(file, { qrelsVersion: j.manifest.qrelsVersion, judged: strata });
    pairs = s === undefined ? [] : sessionPairs(s, llm);
    kind = 'session';
  } else {
    pairs = await filePairs(file, j);
    kind = 'qrels';
  }
  const { complete, incomplete } = queryCoverage(pairs, j.records);
  if (complete.length === 0)
    throw new InputError(file, undefined, `no query has every judged pair labelled (${incomplete.length} labelled in part)`, {
      hint: 'label whole queries: harness kappa --by query --session FILE',
    });
  return { kind, qrelsVersion: j.manifest.qrelsVersion, pairs, complete, incomplete };
}

/**
 * The human qrels of the labelled queries: the scoring qrels of each, with every pair the judge graded replaced
 * by its human grade. Documents the judge did not grade keep what the scoring qrels give them (a gold grade under
 * gold+judged, nothing in a hole), so the two qrels differ only where the judge's grade could be wrong.
 */
export function humanQrels(scoring: Qrels, labels: Pick<HumanLabelSet, 'pairs' | 'complete'>): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const q of labels.complete) out.set(q, new Map(scoring.get(q) ?? []));
  for (const p of labels.pairs) out.get(p.queryId)?.set(p.docId, p.human);
  return out;
}
