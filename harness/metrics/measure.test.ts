import { describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { formatMeasure, MEASURE_NAMES, measureAliases, parseMeasure, trecEvalSpelling } from './measure.js';

describe('Measure: one canonical spelling', () => {
  const canonical = [
    'nDCG@10',
    'nDCG',
    'nDCG(gain=exp)@10',
    'nDCG(gains={1:3,2:9,4:4.5})',
    'R@100',
    'P@5',
    'P(rel=2)@5',
    'RR',
    'RR@10',
    'AP',
    'AP@100',
    'Success@5',
    'Judged@10',
    'R-all@10',
    'Unj@20',
    'IPrec@0.5',
    'RprecMult@0.2',
    'RBP(p=0.8)',
    'RBP',
    'RBPResid(p=0.95)',
    'SetF(x=0.5)',
    'Utility(a=2,b=-2)',
    'Rprec',
    'Bpref',
    'infAP',
    '11ptAvg',
    'NumRet',
    'NumRel(rel=2)',
    'RelP@5',
    'SetP',
    'G',
    'nDCGRel',
    'RnDCG',
  ];
  for (const c of canonical) {
    it(`round-trips ${c}`, () => {
      const m = parseMeasure(c);
      expect(formatMeasure(m)).toBe(c);
      expect(parseMeasure(formatMeasure(m))).toEqual(m);
    });
  }
  it('normalises equivalent spellings to the canonical one', () => {
    expect(formatMeasure(parseMeasure(' nDCG(gain=linear)@10 '))).toBe('nDCG@10');
    expect(formatMeasure(parseMeasure('RBP(p=0.9)'))).toBe('RBP');
    expect(formatMeasure(parseMeasure('Utility(b=-1,a=2,c=0)'))).toBe('Utility(a=2)');
    expect(formatMeasure(parseMeasure('nDCG(gains={2:9,1:3})'))).toBe('nDCG(gains={1:3,2:9})');
  });
  it('is immutable', () => {
    const m = parseMeasure('P@5');
    expect(Object.isFrozen(m)).toBe(true);
    expect(Object.isFrozen(m.params)).toBe(true);
  });
  it('reads the names of ir_measures, BEIR, MTEB, trec_eval and LongMemEval as the canonical measure', () => {
    const aliases: Record<string, string> = {
      MAP: 'AP',
      map: 'AP',
      'MAP@100': 'AP@100',
      MRR: 'RR',
      'MRR@10': 'RR@10',
      recip_rank: 'RR',
      'NDCG@10': 'nDCG@10',
      NDCG: 'nDCG',
      'ndcg@10': 'nDCG@10',
      'Recall@100': 'R@100',
      'recall@100': 'R@100',
      'Precision@5': 'P@5',
      'precision@5': 'P@5',
      P_5: 'P@5',
      'P.5': 'P@5',
      ndcg_cut_10: 'nDCG@10',
      'ndcg_cut.10': 'nDCG@10',
      map_cut_100: 'AP@100',
      recall_1000: 'R@1000',
      ndcg_at_10: 'nDCG@10',
      recall_at_100: 'R@100',
      precision_at_5: 'P@5',
      mrr_at_10: 'RR@10',
      success_1: 'Success@1',
      'top_k_acc@5': 'Success@5',
      'recall_any@5': 'Success@5',
      'recall_all@5': 'R-all@5',
      'ndcg_any@5': 'nDCG-LME@5',
      'NDCG(gain=exp)@10': 'nDCG(gain=exp)@10',
      'NumRel(rel=2)': 'NumRel(rel=2)',
      'nDCG(dcg=exp-log2)@10': 'nDCG(gain=exp)@10',
      'NDCG(dcg=log2)@10': 'nDCG@10',
      'p(rel=2)@5': 'P(rel=2)@5',
      iprec_at_recall_0: 'IPrec@0',
      bpref: 'Bpref',
      'judged@10': 'Judged@10',
    };
    for (const [alias, canonical] of Object.entries(aliases)) expect([alias, formatMeasure(parseMeasure(alias))]).toEqual([alias, canonical]);
    expect(measureAliases('AP')).toEqual(expect.arrayContaining(['map', 'map_cut']));
    expect(measureAliases('RR')).toEqual(expect.arrayContaining(['mrr', 'recip_rank']));
    expect(measureAliases('nDCG')).not.toContain('ndcg'); // the canonical name in lower case is not listed as an alias
  });
  it('suggests the measure that was meant for a name it cannot read', () => {
    expect(() => parseMeasure('nDGC@10')).toThrow(/did you mean "nDCG@10"/);
    expect(() => parseMeasure('Recal@10')).toThrow(/did you mean "R@10"/);
    expect(() => parseMeasure('precison@5')).toThrow(/did you mean "P@5"/);
    expect(() => parseMeasure('ndcg_ct_10')).toThrow(/did you mean "nDCG@10"/);
    expect(() => parseMeasure('Sucess')).toThrow(/did you mean "Success@10"/);
    expect(() => parseMeasure('P_5@10')).toThrow(/cutoff twice/);
    expect(() => parseMeasure('R_cap@10')).toThrow(UsageError); // BEIR's capped recall is another measure
  });
  it('spells each measure as trec_eval -m asks for it, or says there is none', () => {
    const spell = (m: string) => trecEvalSpelling(parseMeasure(m));
    expect(spell('nDCG@10')).toEqual({ measure: 'ndcg_cut.10' });
    expect(spell('nDCG')).toEqual({ measure: 'ndcg' });
    expect(spell('AP')).toEqual({ measure: 'map' });
    expect(spell('AP@100')).toEqual({ measure: 'map_cut.100' });
    expect(spell('P(rel=2)@5')).toEqual({ measure: 'P.5', level: 2 });
    expect(spell('R@100')).toEqual({ measure: 'recall.100' });
    expect(spell('RBP(p=0.8)')).toEqual({ measure: 'rbp.p=0.8' });
    expect(spell('nDCG(gains={1:3,2:9})')).toEqual({ measure: 'ndcg.1=3,2=9' });
    expect(spell('Utility(a=2)')).toEqual({ measure: 'utility.2,-1,0,0' });
    expect(spell('Bpref')).toEqual({ measure: 'bpref' });
    for (const none of ['Judged@10', 'R-all@10', 'RR@10', 'nDCG(gain=exp)@10', 'nDCG-LME@10']) expect(spell(none)).toBeUndefined();
  });
  it('rejects cutoffs and parameters a measure does not take', () => {
    expect(() => parseMeasure('P')).toThrow(/needs a cutoff/);
    expect(() => parseMeasure('P@0')).toThrow(/positive integer/);
    expect(() => parseMeasure('P@2.5')).toThrow(/positive integer/);
    expect(() => parseMeasure('Rprec@5')).toThrow(/takes no @cutoff/);
    expect(() => parseMeasure('P(gain=exp)@5')).toThrow(/no parameter "gain"/);
    expect(() => parseMeasure('P(rel=1.5)@5')).toThrow(/integer grade/);
    expect(() => parseMeasure('P(rel=1,rel=2)@5')).toThrow(/given twice/);
    expect(() => parseMeasure('nDCG(gain=cubic)')).toThrow(/gain=exp/);
  });
  it('lists every family it can parse', () => {
    for (const n of MEASURE_NAMES) expect(MEASURE_NAMES.filter((x) => x === n)).toHaveLength(1);
    expect(MEASURE_NAMES).toContain('R-all');
    expect(MEASURE_NAMES).toContain('Judged');
  });
});
