import { describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { formatMeasure, MEASURE_NAMES, parseMeasure } from './measure.js';

describe('Measure: one canonical spelling', () => {
  const canonical = [
    'nDCG@10', 'nDCG', 'nDCG(gain=exp)@10', 'nDCG(gains={1:3,2:9,4:4.5})', 'R@100', 'P@5', 'P(rel=2)@5', 'RR', 'RR@10', 'AP', 'AP@100',
    'Success@5', 'Judged@10', 'R-all@10', 'Unj@20', 'IPrec@0.5', 'RprecMult@0.2', 'RBP(p=0.8)', 'RBP', 'RBPResid(p=0.95)', 'SetF(x=0.5)',
    'Utility(a=2,b=-2)', 'Rprec', 'Bpref', 'infAP', '11ptAvg', 'NumRet', 'NumRel(rel=2)', 'RelP@5', 'SetP', 'G', 'nDCGRel', 'RnDCG',
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
  it('rejects unknown names with a did-you-mean', () => {
    expect(() => parseMeasure('nDGC@10')).toThrow(/did you mean "nDCG@10"/);
    expect(() => parseMeasure('ndcg_cut_10')).toThrow(/did you mean "nDCG@10"/);
    expect(() => parseMeasure('NDCG@10')).toThrow(/did you mean "nDCG@10"?/);
    expect(() => parseMeasure('map')).toThrow(/did you mean "AP"/);
    expect(() => parseMeasure('ndcg_at_10')).toThrow(UsageError);
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
