import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { ANSWER_OPTIONS, ANSWER_QUESTIONS, ANSWERED_SYSTEMS, auditOf, systemOf } from '../report/testdata/answer-level.js';
import { adjustPValues } from '../stats/adjust.js';
import { mcnemarExact } from '../stats/mcnemar.js';
import { wilsonInterval } from '../stats/wilson.js';
import { answerPerQuery, failedQuestions } from './score.js';
import { accuracyRow, answerLevelOf, MAJORITY_RULE, SKIPPED_SENSITIVE } from './section.js';
import type { AnswerQuestion } from './types.js';

// Every count below is read off the table in report/testdata/answer-level.ts.
const level = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, ANSWER_OPTIONS);
const sys = (id: string) => level.systems.find((s) => s.id === id)!;
const row = (label: string, n: number, correct: number) => ({ label, n, correct, accuracy: correct / n, interval: wilsonInterval(correct, n, 0.95) });

describe('answerLevelOf: accuracy and failures', () => {
  it('counts graded questions and failures apart, per cause', () => {
    expect(level).toMatchObject({ protocol: 'generic', level: 0.95, questions: 8 });
    expect(sys('bm25')).toMatchObject({ graded: 7, correct: 4, failures: { reader: 1, judge: 0, sensitive: 0, missing: 0, ungraded: 0 } });
    // dense: q7 skipped as sensitive, q8 answered but no judge sample readable.
    expect(sys('dense')).toMatchObject({ graded: 6, correct: 4, failures: { reader: 0, judge: 1, sensitive: 1, missing: 0, ungraded: 0 } });
    expect(sys('mem0')).toMatchObject({ graded: 7, correct: 6, failures: { reader: 0, judge: 0, sensitive: 0, missing: 1, ungraded: 0 } });
    expect(sys('mem0').mapping).toEqual({ unmapped: 2, missing: 1 });
    expect(sys('bm25').mapping).toBeUndefined();
  });

  it('gives accuracy per stratum and pooled over the kept questions (q1-q6: every system graded), own accuracy apart', () => {
    expect(level.kept).toBe(6);
    // bm25 on q1-q6: single-hop C W C C; multi-hop W W.
    expect(sys('bm25').strata).toEqual([row('single-hop', 4, 3), row('multi-hop', 2, 0), row('all', 6, 3)]);
    // dense: single-hop C C C W; multi-hop C W.
    expect(sys('dense').strata).toEqual([row('single-hop', 4, 3), row('multi-hop', 2, 1), row('all', 6, 4)]);
    expect(sys('mem0').strata).toEqual([row('single-hop', 4, 4), row('multi-hop', 2, 1), row('all', 6, 5)]);
    // Over each one's own graded questions: bm25 adds q8 (C), dense has nothing beyond q1-q6, mem0 adds q8 (C).
    expect(level.systems.map((s) => s.ownAccuracy)).toEqual([
      row('own graded questions', 7, 4),
      row('own graded questions', 6, 4),
      row('own graded questions', 7, 6),
    ]);
  });

  it("gives the summary's Acc: the pooled row is the mean of the per-question values the decision stage scores", () => {
    const failures = failedQuestions(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, ['Acc']);
    const kept = ANSWER_QUESTIONS.filter((q) => !failures.has(q.id));
    const perQuery = answerPerQuery(kept, ANSWERED_SYSTEMS, ['Acc']);
    const explicit = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, kept: kept.map((q) => q.id) });
    expect(explicit).toEqual(level);
    for (const s of explicit.systems) {
      const values = perQuery[s.id]?.['Acc'] ?? [];
      expect(s.strata.at(-1)?.accuracy).toBe(values.reduce((a, b) => a + b, 0) / values.length);
      expect(s.strata.at(-1)?.n).toBe(kept.length);
    }
  });

  it('takes the kept questions it is given, and refuses an id that is not a question', () => {
    const two = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, kept: ['q2', 'q1'] });
    expect(two.kept).toBe(2);
    expect(two.systems[0]?.strata.at(-1)).toEqual(row('all', 2, 1));
    expect(two.pairs[0]?.rows[0]).toMatchObject({ n: 2, onlyBaseline: 0, onlySystem: 1 });
    expect(() => answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, kept: ['q1', 'q42'] })).toThrow(/kept question q42/);
  });

  it('reports a generic protocol with and without its abstention question (q4), over the kept questions', () => {
    expect(sys('bm25').protocol).toEqual({
      protocol: 'generic',
      withAbstention: row('overall (abstention questions included)', 6, 3),
      withoutAbstention: row('overall without abstention questions', 5, 2),
    });
    expect(sys('dense').protocol).toMatchObject({ withAbstention: { n: 6, correct: 4 }, withoutAbstention: { n: 5, correct: 4 } });
  });

  it('counts answered but unjudged questions as not judged: no accuracy, no protocol aggregates, no pairs', () => {
    const one = answerLevelOf(ANSWER_QUESTIONS, [systemOf('x', 'reader', 'UUUUUUU-'), systemOf('y', 'reader', 'UUUUUUUU')], {
      protocol: 'generic',
      pairs: [{ baseline: 'x', system: 'y' }],
    });
    const s = one.systems[0]!;
    expect(s.failures).toEqual({ reader: 0, judge: 0, sensitive: 0, missing: 1, ungraded: 7 });
    expect(s.graded).toBe(0);
    expect(s.ownAccuracy).toEqual({ label: 'own graded questions', n: 0, correct: 0, accuracy: null, interval: null });
    expect(s.strata).toEqual([]);
    expect(s.protocol).toBeUndefined();
    expect(s.judgeVariance).toBeUndefined();
    expect(s.attribution).toBeUndefined();
    // Nobody graded anything: the kept questions are those both answered (q8 has no outcome from x).
    expect(one.kept).toBe(7);
    expect(one.pairs).toEqual([]);
  });

  it('counts a sensitive skip in any failed sample as skipped-sensitive, and other unreadable samples as judge failures', () => {
    const s = systemOf('x', 'reader', 'JJ', { samples: ['x', 'x'] });
    const skipAfterUnreadable = {
      ...s,
      outcomes: s.outcomes.map((o, i) =>
        i === 1
          ? {
              ...o,
              grade: {
                ...o.grade!,
                samples: [
                  { status: 'failed' as const, reason: 'unreadable reply' },
                  { status: 'failed' as const, reason: `${SKIPPED_SENSITIVE}: the judge is not local` },
                ],
              },
            }
          : o,
      ),
    };
    const f = answerLevelOf(ANSWER_QUESTIONS.slice(0, 2), [skipAfterUnreadable], { protocol: 'generic', pairs: [] }).systems[0]!.failures;
    expect(f).toMatchObject({ judge: 1, sensitive: 1 });
  });

  it('counts a judge the egress guard never sent the answer to as skipped-sensitive, not as a judge failure', () => {
    const s = systemOf('x', 'reader', 'CJ', { samples: ['', 'x'] });
    const guarded = {
      ...s,
      outcomes: s.outcomes.map((o, i) =>
        i === 1 ? { ...o, grade: { ...o.grade!, samples: [{ status: 'failed' as const, reason: `${SKIPPED_SENSITIVE}: the judge is not local` }] } } : o,
      ),
    };
    const f = answerLevelOf(ANSWER_QUESTIONS.slice(0, 2), [guarded, systemOf('y', 'reader', 'CJ')], { protocol: 'generic', pairs: [] }).systems.map(
      (x) => x.failures,
    );
    expect(f[0]).toMatchObject({ judge: 0, sensitive: 1 });
    expect(f[1]).toMatchObject({ judge: 1, sensitive: 0 });
  });

  it('an accuracy row of no questions has no accuracy and no interval', () => {
    expect(accuracyRow('x', 0, 0, 0.95)).toEqual({ label: 'x', n: 0, correct: 0, accuracy: null, interval: null });
    expect(accuracyRow('x', 10, 7, 0.9).interval).toEqual(wilsonInterval(7, 10, 0.9));
  });
});

describe('answerLevelOf: lexical, judge variance, attribution, cost', () => {
  it('means each lexical measure over the kept questions, F1-LoCoMo, F1-set, EM in that order', () => {
    // dense on q1-q6: F1 1, .5, 1, 0, .5, 0; EM 1, 0, 1, 0, 0, 0 (q8's 0.25 is not kept).
    expect(sys('dense').lexical).toEqual([
      { measure: 'F1-LoCoMo', n: 6, mean: 3 / 6 },
      { measure: 'EM', n: 6, mean: 2 / 6 },
    ]);
    expect(sys('bm25').lexical).toEqual([]);
    // The names the stage gives them (lexicalScores), in the documented order whatever order they come in.
    const lex = systemOf('l', 'reader', 'U', { lexical: [{ EM: 0, 'F1-set': 0.5, zeta: 1, 'F1-LoCoMo': 0.25, alpha: 1 }] });
    const order = answerLevelOf(ANSWER_QUESTIONS.slice(0, 1), [lex], { protocol: 'generic', pairs: [] }).systems[0]!.lexical.map((m) => m.measure);
    expect(order).toEqual(['F1-LoCoMo', 'F1-set', 'EM', 'alpha', 'zeta']);
  });

  it('reads the judge variance from the repeated samples', () => {
    // bm25: ccc, wcw (1 of 3 flips), ccc, cwc (1 of 3), www, ww + one unreadable, ccc: 7 answers with 2+ samples.
    expect(sys('bm25').judgeVariance).toEqual({
      samples: 3,
      answers: 7,
      meanFlipRate: 2 / 3 / 7,
      disagreeing: 2,
      disagreeingShare: 2 / 7,
      failedSamples: 1,
      rule: MAJORITY_RULE,
    });
    // One sample per answer: nothing to read variance from; dense's q8 has one unreadable sample.
    expect(sys('dense').judgeVariance).toMatchObject({ samples: 1, answers: 0, meanFlipRate: null, disagreeingShare: null, failedSamples: 0 });
  });

  it('splits wrong answers into retrieval and reader misses over the kept questions with evidence', () => {
    // bm25: q1 y C, q2 n W, q3 y C, q5 n W, q6 y W; q4 has no evidence ids; q7 and q8 are not kept.
    expect(sys('bm25').attribution).toEqual({
      n: 5,
      inContextCorrect: 2,
      inContextWrong: 1,
      missingCorrect: 0,
      missingWrong: 2,
      correctGivenInContext: 2 / 3,
      correctGivenMissing: 0,
      retrievalMisses: 2 / 3,
      readerMisses: 1 / 3,
      withoutEvidence: 1,
    });
    // dense saw the evidence every time: no question without it, so no rate there.
    expect(sys('dense').attribution).toMatchObject({
      n: 5,
      inContextCorrect: 4,
      inContextWrong: 1,
      correctGivenMissing: null,
      retrievalMisses: 0,
      readerMisses: 1,
    });
    // mem0's file records no context: no attribution.
    expect(sys('mem0').attribution).toBeUndefined();
  });

  it('sums tokens and prices them per million, dollars per correct answer', () => {
    // bm25: 7 answers at 100/10 and a failed request at 100/0; 7 grades of 3 samples at 50/1 each.
    expect(sys('bm25').cost).toEqual({
      reader: { prompt: 800, completion: 70 },
      judge: { prompt: 1050, completion: 21 },
      readerUsd: (800 * 1 + 70 * 2) / 1e6,
      judgeUsd: (1050 * 0.5 + 21 * 1) / 1e6,
      totalUsd: (940 + 546) / 1e6,
      usdPerCorrect: (940 + 546) / 1e6 / 4,
    });
    expect(sys('bm25')).toMatchObject({ reader: 'reader-m', judge: 'judge-m' });
    // mem0: an answers file with a recorded judge used no tokens here, so it cost nothing.
    expect(sys('mem0')).toMatchObject({ judge: 'recorded:mem0', cost: { readerUsd: 0, judgeUsd: 0, totalUsd: 0, usdPerCorrect: 0 } });
  });

  it('leaves dollars out where the model has no price', () => {
    const unpriced = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, prices: { 'reader-m': { input: 1, output: 2 } } });
    const bm25 = unpriced.systems[0]!;
    expect(bm25.cost).toMatchObject({ readerUsd: 940 / 1e6, judgeUsd: null, totalUsd: null, usdPerCorrect: null });
    // Without configured model names, the outcomes' own: the reader's model and the grade's judge.
    const named = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { protocol: 'generic', pairs: [] });
    expect(named.systems[0]).toMatchObject({ reader: 'reader-m', judge: 'binary/judge-m', cost: { readerUsd: null } });
  });
});

describe('answerLevelOf: pairs', () => {
  it('tests each pair by exact McNemar on the kept questions, pooled row first', () => {
    const [dense, mem0] = level.pairs;
    // dense vs bm25 on q1-q6: bm25 C W C C W W, dense C C C W C W.
    expect(dense?.rows[0]).toEqual({
      stratum: 'all',
      n: 6,
      baselineAccuracy: 3 / 6,
      systemAccuracy: 4 / 6,
      delta: 1 / 6,
      both: 2,
      onlyBaseline: 1,
      onlySystem: 2,
      neither: 1,
      p: mcnemarExact(1, 2),
      pAdjusted: 1,
    });
    expect(dense?.rows.map((r) => [r.stratum, r.n, r.onlyBaseline, r.onlySystem])).toEqual([
      ['all', 6, 1, 2],
      ['single-hop', 4, 1, 1],
      ['multi-hop', 2, 0, 1],
    ]);
    // mem0 vs bm25 on q1-q6 (q8, graded for both, is not kept: dense failed on it): only mem0 right on q2 and q5.
    expect(mem0?.rows[0]).toMatchObject({ n: 6, both: 3, onlyBaseline: 0, onlySystem: 2, neither: 1, delta: 2 / 6, p: 0.5 });
    expect(mcnemarExact(0, 2)).toBeCloseTo(0.5, 12);
  });

  it('Holm-corrects over every pair and stratum as one family', () => {
    const rows = level.pairs.flatMap((p) => p.rows);
    const adjusted = adjustPValues(
      rows.map((r) => r.p as number),
      'holm',
    );
    expect(rows.map((r) => r.pAdjusted)).toEqual([...adjusted]);
  });

  it('finds a lopsided pair significant: b = 0, c = 10 gives p = 2/1024', () => {
    const qs: AnswerQuestion[] = Array.from({ length: 12 }, (_, i) => ({
      id: `q${i + 1}`,
      text: 't',
      gold: 'g',
      stratum: 's',
      abstention: false,
      evidence: [],
    }));
    const a = systemOf('a', 'reader', 'WWWWWWWWWWCW');
    const b = systemOf('b', 'reader', 'CCCCCCCCCCCW');
    const out = answerLevelOf(qs, [a, b], { protocol: 'generic', pairs: [{ baseline: 'a', system: 'b' }] });
    expect(out.pairs[0]?.rows).toHaveLength(1);
    expect(out.pairs[0]?.rows[0]).toMatchObject({ stratum: 's', n: 12, onlyBaseline: 0, onlySystem: 10, both: 1, neither: 1, delta: 10 / 12 });
    expect(out.pairs[0]?.rows[0]?.p).toBeCloseTo(2 / 1024, 15);
  });

  it('refuses a pair naming a system that was not answered, and an outcome for an unknown question', () => {
    expect(() => answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { protocol: 'generic', pairs: [{ baseline: 'bm25', system: 'nope' }] })).toThrow(
      /names nope, which is not an answered system/,
    );
    const stray = { id: 'x', source: 'reader' as const, outcomes: [{ ...systemOf('x', 'reader', 'C').outcomes[0]!, questionId: 'q99' }] };
    expect(() => answerLevelOf(ANSWER_QUESTIONS, [stray], { protocol: 'generic', pairs: [] })).toThrow(HarnessError);
    const twice = systemOf('x', 'reader', 'CC');
    const dup = { ...twice, outcomes: twice.outcomes.map((o) => ({ ...o, questionId: 'q1' })) };
    expect(() => answerLevelOf(ANSWER_QUESTIONS, [dup], { protocol: 'generic', pairs: [] })).toThrow(/two outcomes for question q1/);
  });

  it('is deterministic and survives a JSON round trip (report.json)', () => {
    const again = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, ANSWER_OPTIONS);
    expect(JSON.stringify(again)).toBe(JSON.stringify(level));
    expect(JSON.parse(JSON.stringify(level))).toEqual(level);
  });
});

describe('answerLevelOf: protocol aggregates', () => {
  it('LongMemEval: per type, task-averaged, overall, abstention and overall without it', () => {
    const types = ['single-session-user', 'single-session-user', 'multi-session', 'multi-session', 'temporal-reasoning', 'temporal-reasoning'];
    const qs: AnswerQuestion[] = types.map((t, i) => ({
      id: i === 5 ? 'q6_abs' : `q${i + 1}`,
      text: 't',
      gold: 'g',
      stratum: t,
      questionType: t,
      abstention: i === 5,
      evidence: [],
    }));
    // ssu C C (1.0), ms C W (0.5), tr W C with the C on the _abs question (0.5).
    const s = systemOf('s', 'reader', 'CCCWWC');
    const renamed = { ...s, outcomes: s.outcomes.map((o, i) => ({ ...o, questionId: qs[i]!.id })) };
    const p = answerLevelOf(qs, [renamed], { protocol: 'longmemeval', pairs: [] }).systems[0]!.protocol;
    expect(p).toEqual({
      protocol: 'longmemeval',
      perType: [row('single-session-user', 2, 2), row('multi-session', 2, 1), row('temporal-reasoning', 2, 1)],
      taskAveraged: (1 + 0.5 + 0.5) / 3,
      overall: row('overall (every question)', 6, 4),
      abstention: row('abstention (_abs questions)', 1, 1),
      withoutAbstention: row('overall without abstention', 5, 3),
    });
  });

  it('LoCoMo: named categories, overall on 1-4, and with category 5 when it was answered', () => {
    const cats = [1, 1, 2, 4, 4, 5, 5, 3];
    const qs: AnswerQuestion[] = cats.map((c, i) => ({
      id: `q${i + 1}`,
      text: 't',
      gold: 'g',
      stratum: `c${c}`,
      category: c,
      abstention: c === 5,
      evidence: [],
    }));
    const p = answerLevelOf(qs, [systemOf('s', 'reader', 'CWCCWCCR')], { protocol: 'locomo', pairs: [] }).systems[0]!.protocol;
    // q8 (category 3) failed: category 3 drops out of the graded rows.
    expect(p).toEqual({
      protocol: 'locomo',
      perCategory: [row('1 multi-hop', 2, 1), row('2 temporal', 1, 1), row('4 single-hop', 2, 1), row('5 adversarial', 2, 2)],
      overall: row('overall on categories 1-4', 5, 3),
      withAdversarial: row('overall with category 5 (adversarial)', 7, 5),
    });
    const without = answerLevelOf(qs.slice(0, 5), [systemOf('s', 'reader', 'CWCCW')], { protocol: 'locomo', pairs: [] }).systems[0]!.protocol;
    expect(without).not.toHaveProperty('withAdversarial');
  });
});

describe('answerLevelOf: the answer judge audit', () => {
  it('keeps the audit as run and names the systems the audited judge graded (not a recorded judge)', () => {
    const audit = auditOf('fooled');
    const withAudit = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, audit });
    expect(withAudit.judgeAudit).toEqual({ ...audit, systems: ['bm25', 'dense'] });
    expect(answerLevelOf(ANSWER_QUESTIONS, [ANSWERED_SYSTEMS[2]!], { protocol: 'generic', pairs: [], audit }).judgeAudit?.systems).toEqual([]);
    expect(level.judgeAudit).toBeUndefined();
  });
});
