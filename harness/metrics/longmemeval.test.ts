import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadLongMemEval, longMemEvalOptions } from '../../evalset/adapters/longmemeval.js';
import { ndcgAny, recallAll, recallAny } from '../../evalset/adapters/longmemeval-metrics.js';
import type { Qrels, Run } from '../../evalset/types.js';
import type { HarnessError } from '../errors.js';
import { describeShared, sharedPath } from '../testing/shared.js';
import { evaluate } from './evaluate.js';
import { parseMeasure } from './measure.js';
import { evaluate as publicEvaluate } from './public.js';
import { measurePresets } from './presets.js';

// One query, relevant s1 and s4 (grade 1), s2 judged not relevant; the run ranks s3 s1 s2 s4 (scores descending).
const qrels: Qrels = new Map([
  [
    'q',
    new Map([
      ['s1', 1],
      ['s2', 0],
      ['s4', 1],
    ]),
  ],
]);
const run: Run = new Map([
  [
    'q',
    new Map([
      ['s3', 0.9],
      ['s1', 0.8],
      ['s2', 0.7],
      ['s4', 0.6],
    ]),
  ],
]);
const value = (measure: string) =>
  evaluate(qrels, run, [parseMeasure(measure)])
    .perQuery.get(measure)!
    .get('q')!;

describe('LongMemEval measures (preset longmemeval)', () => {
  it('nDCG-LME@k leaves ranks 1 and 2 undiscounted', () => {
    // gains 0 1 0 1: DCG = 0 + 1/log2(2) + 0 + 1/log2(4) = 1 + 1/2; ideal 1 1: 1 + 1/log2(2) = 2.
    expect(value('nDCG-LME@10')).toBeCloseTo((1 + 1 / 2) / 2, 15);
    // top 2: gains 0 1 -> DCG 1; ideal (min(2, 2) ones) -> 2.
    expect(value('nDCG-LME@2')).toBeCloseTo(1 / 2, 15);
    // trec_eval's nDCG@10 differs: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3)).
    expect(value('nDCG@10')).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3)), 15);
  });

  it('agrees with the adapter functions that mirror the official code', () => {
    const ranked = ['s3', 's1', 's2', 's4'];
    const relevant = new Set(['s1', 's4']);
    for (const k of [1, 2, 3, 5, 10]) {
      expect(value(`nDCG-LME@${k}`)).toBeCloseTo(ndcgAny(ranked, relevant, k), 15);
      expect(value(`Success@${k}`)).toBe(recallAny(ranked, relevant, k));
      expect(value(`R-all@${k}`)).toBe(recallAll(ranked, relevant, k));
    }
  });

  it('presets list canonical measure spellings', () => {
    for (const list of Object.values(measurePresets)) {
      for (const m of list) expect(() => parseMeasure(m)).not.toThrow();
    }
  });
});

/**
 * The official numbers (testdata/longmemeval-t2s-reference.json) come from xiaowu0162/LongMemEval's own
 * eval_utils.py (commit 9e0b455f), run unmodified on the sample with the corpus ids their run_retrieval.py builds
 * in turn mode: `python3 scripts/reference/longmemeval_t2s_reference.py ...` (its docstring has the commands).
 * Each ranking, our turn ids best first, is scored here as a Run with descending scores.
 */
interface Reference {
  readonly rankings: Record<string, readonly string[]>;
  readonly official: { readonly rankings: Record<string, Record<'session' | 'turn', Record<string, readonly [number, number, number]>>> };
}

describeShared('LongMemEval turn-to-session measures on the sample, against the official script', ['data/longmemeval/longmemeval_sample.json'], () => {
  const reference = JSON.parse(readFileSync(new URL('../../evalset/adapters/testdata/longmemeval-t2s-reference.json', import.meta.url), 'utf8')) as Reference;
  const qid = '6a1eabeb';
  const load = () => loadLongMemEval(sharedPath('data', 'longmemeval', 'longmemeval_sample.json'), longMemEvalOptions.parse({ unit: 'turn' }));
  const runOf = (ranking: readonly string[]): Run => new Map([[qid, new Map(ranking.map((id, i) => [id, ranking.length - i] as const))]]);
  const ks = ['1', '3', '5', '10', '30', '50'];

  it('every ranking, every k: Success-T2S, R-all-T2S, nDCG-LME-T2S are their evaluate_retrieval_turn2session', async () => {
    const es = await load();
    const sessions = es.units!.get('session')!;
    const names = ks.flatMap((k) => [`Success-T2S@${k}`, `R-all-T2S@${k}`, `nDCG-LME-T2S@${k}`]);
    expect(Object.keys(reference.rankings)).toHaveLength(6);
    for (const [name, ranking] of Object.entries(reference.rankings)) {
      const ev = evaluate(es.qrels, runOf(ranking), names.map(parseMeasure), { sessions });
      for (const k of ks) {
        const got = [`Success-T2S@${k}`, `R-all-T2S@${k}`, `nDCG-LME-T2S@${k}`].map((m) => ev.perQuery.get(m)!.get(qid));
        expect(got, `${name} @${k}`).toEqual(reference.official.rankings[name]!.session[k]);
      }
    }
  });

  it('at turn level Success, R-all and nDCG-LME are their evaluate_retrieval; at unit session the split is lost', async () => {
    const es = await load();
    for (const [name, ranking] of Object.entries(reference.rankings)) {
      const ev = evaluate(
        es.qrels,
        runOf(ranking),
        ks.flatMap((k) => [`Success@${k}`, `R-all@${k}`, `nDCG-LME@${k}`].map(parseMeasure)),
      );
      for (const k of ks) {
        const got = [`Success@${k}`, `R-all@${k}`, `nDCG-LME@${k}`].map((m) => ev.perQuery.get(m)!.get(qid));
        expect(got, `${name} @${k}`).toEqual(reference.official.rankings[name]!.turn[k]);
      }
    }
    // bm25's ranking: 0.8155 officially (turn to session), 1 at unit session, where both sessions are relevant whole.
    const bm25 = runOf(reference.rankings['bm25']!);
    const atSession = evaluate(
      new Map([
        [
          qid,
          new Map([
            ['answer_a25d4a91_1', 1],
            ['answer_a25d4a91_2', 1],
          ]),
        ],
      ]),
      bm25,
      [parseMeasure('nDCG-LME@10')],
      {
        units: es.units!.get('session')!,
      },
    );
    expect(atSession.perQuery.get('nDCG-LME@10')!.get(qid)).toBe(1);
    expect(reference.official.rankings['bm25']!.session['10']![2]).toBeCloseTo(0.8154648767857288, 15);
  });
});

describe('LongMemEval turn-to-session measures refuse what they cannot score', () => {
  const turns: Qrels = new Map([['q', new Map([['a_1', 1]])]]);
  const turnRun: Run = new Map([
    [
      'q',
      new Map([
        ['a_1', 2],
        ['a_2', 1],
      ]),
    ],
  ]);
  const sessions = new Map([['a_1', 'a']]);
  const t2s = [parseMeasure('nDCG-LME-T2S@5')];

  it('without a session map, with a unit, or with a turn outside the map: an error, never a number', () => {
    expect(() => evaluate(turns, turnRun, t2s)).toThrow(/nDCG-LME-T2S@5 \(LongMemEval's turn-to-session numbers\) need the session of every turn/);
    expect(() => evaluate(turns, turnRun, t2s, { sessions, units: sessions })).toThrow(/cannot be scored at a unit/);
    expect(() => evaluate(turns, turnRun, t2s, { sessions })).toThrow('query q: retrieved turn "a_2" has no session in the eval set\'s session map');
    // The Library takes the map as a plain object too, with the same number.
    const plain = publicEvaluate({ q: { a_1: 1 } }, { q: { a_1: 2, a_2: 1 } }, ['nDCG-LME-T2S@5'], { sessions: { a_1: 'a', a_2: 'a' } });
    expect(plain.perQuery.get('nDCG-LME-T2S@5')!.get('q')).toBe(1);
    // The other measures never need it.
    expect(
      evaluate(turns, turnRun, [parseMeasure('nDCG-LME@5')])
        .perQuery.get('nDCG-LME@5')!
        .get('q'),
    ).toBe(1);
  });

  it('a config asking for them at a unit, or on an eval set without turns, is refused at load naming the file (exit 2)', async () => {
    const { scoringUnit } = await import('../ablate/scopes.js');
    const es = {
      name: 'lme/turn',
      documents: [],
      queries: [],
      qrels: turns,
      units: new Map([
        [
          'session',
          new Map([
            ['a_1', 'a'],
            ['a_2', 'a'],
          ]),
        ],
      ]),
    };
    const measures = ['nDCG@10', 'R-all-T2S@5'];
    expect(scoringUnit({ file: 'c.yaml', measures }, es).sessions).toBe(es.units.get('session'));
    expect(scoringUnit({ file: 'c.yaml', measures: ['nDCG@10'] }, es).sessions).toBeUndefined();
    const atUnit = () => scoringUnit({ file: 'c.yaml', unit: 'session', measures }, es);
    expect(atUnit).toThrow(/c\.yaml: 1 problem\n {2}measures: R-all-T2S@5 .* drop unit: session/);
    expect(() => scoringUnit({ file: 'c.yaml', measures }, { ...es, units: new Map() })).toThrow(/eval set lme\/turn has none/);
    let err: unknown;
    try {
      atUnit();
    } catch (e) {
      err = e;
    }
    expect((err as HarnessError).exitCode).toBe(2);
  });
});
