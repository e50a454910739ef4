import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLongMemEval, longMemEvalOptions } from '../../evalset/adapters/longmemeval.js';
import { ndcgAny, recallAll, recallAny } from '../../evalset/adapters/longmemeval-metrics.js';
import type { Qrels, Run } from '../../evalset/types.js';
import type { ReportData } from '../decision/types.js';
import type { HarnessError } from '../errors.js';
import { runCaptured } from '../testing/cli.js';
import { describeShared, sharedPath } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';
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
    const { measureTable, reportedMeasures } = await import('../compare/measures.js');
    // The config loader reads the measures once; scoring takes the values it read.
    const read = (measures: string[]) => ({ measures, parsedMeasures: measureTable(reportedMeasures(measures)) });
    const measures = read(['nDCG@10', 'R-all-T2S@5']);
    expect(scoringUnit({ file: 'c.yaml', ...measures }, es).sessions).toBe(es.units.get('session'));
    expect(scoringUnit({ file: 'c.yaml', ...read(['nDCG@10']) }, es).sessions).toBeUndefined();
    const atUnit = () => scoringUnit({ file: 'c.yaml', unit: 'session', ...measures }, es);
    expect(atUnit).toThrow(/c\.yaml: 1 problem\n {2}measures: R-all-T2S@5 .* drop unit: session/);
    expect(() => scoringUnit({ file: 'c.yaml', ...measures }, { ...es, units: new Map() })).toThrow(/eval set lme\/turn has none/);
    let err: unknown;
    try {
      atUnit();
    } catch (e) {
      err = e;
    }
    expect((err as HarnessError).exitCode).toBe(2);
  });
});

/**
 * A turn of a hand-made LongMemEval session: `u` user or `a` assistant, then `+` (has_answer true), `-` (false)
 * or nothing (no has_answer), a space and the text.
 */
function turn(spec: string): { role: string; content: string; has_answer?: boolean } {
  const [, role, mark, content] = /^([ua])([+-]?) (.*)$/.exec(spec)!;
  return { role: role === 'u' ? 'user' : 'assistant', content: content!, ...(mark === '' ? {} : { has_answer: mark === '+' }) };
}

/** A question of the official schema over `sessions` (id -> turns), its answer sessions those named `answer_*`. */
function question(id: string, type: string, sessions: Record<string, readonly string[]>): object {
  const ids = Object.keys(sessions);
  return {
    question_id: id,
    question_type: type,
    question: `question ${id}?`,
    answer: 'x',
    question_date: '2023/06/01 (Thu) 10:00',
    haystack_dates: ids.map((_, i) => `2023/05/0${i + 1} (Mon) 09:00`),
    haystack_session_ids: ids,
    haystack_sessions: Object.values(sessions).map((s) => s.map(turn)),
    answer_session_ids: ids.filter((s) => s.startsWith('answer_')),
  };
}

describe("LongMemEval measures averaged over the questions LongMemEval's averages keep", () => {
  // a1 and b1 are scored. c1 (single-session-assistant) has no user turn with has_answer: run_retrieval.py's
  // averages skip it ("no target turns from the user side"), as they skip d1_abs. Kept, it would add 0.
  const file = [
    question('a1', 'knowledge-update', {
      f_1: ['u I like tea.', 'a Nice.', 'u And cake.'],
      answer_a_1: ['u+ I moved to Porto.', 'a Great.', 'u- It rains.'],
      answer_a_2: ['u+ Now I live in Lisbon.', 'a Sunny!', 'u+ Lisbon suits me.'],
    }),
    question('b1', 'single-session-user', { answer_b_1: ['u+ My dog is Biscuit.', 'a Cute.'], f_2: ['u Any films?', 'a Dune.'] }),
    question('c1', 'single-session-assistant', { f_2: ['u Any films?', 'a Dune.'], answer_c_1: ['u- A book?', 'a+ Read Solaris.'] }),
    question('d1_abs', 'temporal-reasoning', { answer_d_1: ['u+ I visited Rome.'] }),
  ];
  const rankings: Record<string, readonly string[]> = {
    a1: ['f_1_1', 'answer_a_1_3', 'answer_a_2_3', 'answer_a_1_1', 'f_1_3', 'answer_a_2_1'],
    b1: ['answer_b_1_1', 'f_2_1'],
    c1: ['answer_c_1_1', 'f_2_1'],
    d1_abs: ['answer_d_1_1'],
  };
  /**
   * By hand, from eval_utils.py and run_retrieval.py (commit 9e0b455f), and checked by running them on this file.
   * a1 in their turn mode: corpus f_1_1 f_1_3 answer_a_1_1 noans_a_1_3 answer_a_2_1 answer_a_2_3, stripped
   * f_1 f_1 answer_a_1 noans_a_1 answer_a_2 answer_a_2 (relevances 0 0 1 0 1 1; ideal 1 1 1 0 0 0); the ranking
   * maps to f_1 noans_a_1 answer_a_2 answer_a_1 f_1 answer_a_2.
   * - k 1: k' 1, top f_1: 0, 0, 0.
   * - k 3: k' 3 (3 sessions); any 1, all 0 (answer_a_1 missing); gains 0 0 1: (1/log2 3) / (1 + 1 + 1/log2 3).
   * - k 5: 4 sessions in all, so k' runs past the 6 turns; any 1, all 1; gains 0 0 1 1 0 1:
   *   (1/log2 3 + 1/log2 4 + 1/log2 6) / (2 + 1/log2 3).
   * Turn level at 5 (evaluate_retrieval): all 0 (answer_a_2_1 is 6th); gains 0 0 1 1 0: (1/log2 3 + 1/2) / (2 + 1/log2 3).
   * b1 ranks its one relevant turn first: 1 everywhere. Their average is the mean of a1 and b1.
   */
  const L3 = 1 / Math.log2(3);
  const a1 = { t2s3: L3 / (2 + L3), t2s5: (L3 + 1 / 2 + 1 / Math.log2(6)) / (2 + L3), turn5: (L3 + 1 / 2) / (2 + L3) };
  const official: Record<string, number> = {
    'Success-T2S@1': 0.5,
    'R-all-T2S@1': 0.5,
    'nDCG-LME-T2S@1': 0.5,
    'Success-T2S@3': 1,
    'R-all-T2S@3': 0.5,
    'nDCG-LME-T2S@3': (a1.t2s3 + 1) / 2,
    'Success-T2S@5': 1,
    'R-all-T2S@5': 1,
    'nDCG-LME-T2S@5': (a1.t2s5 + 1) / 2,
    'Success@5': 1,
    'R-all@5': 0.5,
    'nDCG-LME@5': (a1.turn5 + 1) / 2,
  };

  it('the hand-computed numbers are what their code printed on this file', () => {
    expect(official['nDCG-LME-T2S@3']).toBeCloseTo(0.6199062332840657, 15);
    expect(official['nDCG-LME-T2S@5']).toBeCloseTo(0.7884498452962543, 15);
    expect(official['nDCG-LME@5']).toBeCloseTo(0.7149296749630493, 15);
  });

  it('harness ablate reports their averages: c1 and d1_abs are left out of the scored questions and counted', async () => {
    const dir = tempDir('lme-averages');
    writeFileSync(join(dir, 'lme.json'), JSON.stringify(file));
    const trec = Object.entries(rankings).flatMap(([q, ids]) => ids.map((d, i) => `${q} Q0 ${d} ${i + 1} ${ids.length - i} hand`));
    writeFileSync(join(dir, 'ranked.trec'), `${trec.join('\n')}\n`);
    writeFileSync(
      join(dir, 'c.yaml'),
      [
        'name: lme-averages',
        'evalset: { format: longmemeval, path: lme.json, options: { unit: turn } }',
        `measures: [${Object.keys(official).join(', ')}]`,
        'topK: 10',
        'arms: [{ id: ranked, kind: run-file, params: { path: ranked.trec } }]',
        'output: out',
        'cache: cache',
        '',
      ].join('\n'),
    );
    const r = await runCaptured(['ablate', '--config', 'c.yaml'], dir);
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const [folder] = readdirSync(join(dir, 'out'));
    const report = JSON.parse(readFileSync(join(dir, 'out', folder!, 'report.json'), 'utf8')) as ReportData;
    expect(report.queries.map((q) => q.id)).toEqual(['a1', 'b1']);
    expect(report.evalset.notes).toContain("1 questions with no user turn marked has_answer skipped, as LongMemEval's averages skip them: c1");
    for (const [measure, mean] of Object.entries(official)) {
      const row = report.summary.find((s) => s.stratum === 'all' && s.run === 'ranked' && s.measure === measure);
      expect(row?.mean, measure).toBeCloseTo(mean, 12);
    }
  }, 60_000);
});
