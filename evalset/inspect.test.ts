import { describe, expect, it } from 'vitest';
import { answerSummary, formatInspect } from './inspect.js';
import type { EvalSet, Query } from './types.js';
import { validateEvalSet } from './validate.js';

function evalSet(queries: readonly Query[]): EvalSet {
  return {
    name: 't',
    documents: [{ id: 'm1', text: 'green tea' }],
    queries,
    qrels: new Map(queries.filter((q) => q.metadata?.['answerOnly'] !== true).map((q) => [q.id, new Map([['m1', 1]])])),
  };
}

describe('evalset inspect: gold answers', () => {
  const queries: Query[] = [
    { id: 'q1', text: 'what does Ana drink', stratum: 'exact', answer: 'Green tea' },
    { id: 'q2', text: 'where', stratum: 'exact' },
    { id: 'q3', text: 'trap', stratum: 'adversarial', answer: 'Not answerable', metadata: { abstention: true } },
    { id: 'q4', text: 'no evidence', stratum: 'exact', answer: 'Lisbon', metadata: { answerOnly: true } },
  ];

  it('counts queries with a gold answer, abstention ones and answer-only ones', () => {
    expect(answerSummary(evalSet(queries))).toEqual({ withAnswer: 3, abstention: 1, answerOnly: 1 });
  });

  it('prints the counts under the query count, never the answers', () => {
    const es = evalSet(queries);
    const out = formatInspect(es, validateEvalSet(es));
    expect(out).toMatch(/^queries {6}4\nanswers {6}3 with a gold answer, 1 abstention, 1 for answer measures only \(no judgments\)$/m);
    for (const q of queries) if (q.answer !== undefined) expect(out).not.toContain(q.answer);
  });

  it('says so when the eval set has no gold answers', () => {
    const es = evalSet([queries[1]!]);
    expect(formatInspect(es, validateEvalSet(es))).toMatch(/^answers {6}no gold answers \(retrieval measures only\)$/m);
  });
});
