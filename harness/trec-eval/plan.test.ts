import { describe, expect, it } from 'vitest';
import { trecEvalMeasures } from '../metrics/measure.js';
import { trecSettings } from '../testing/trec-settings.js';
import { compileTrecPlan, TREC_MEASURE_NAMES } from './plan.js';

/** trec_eval 10.0's measure table (te_trec_measures), in its order, and its nicknames (measures.c). */
const TE_TREC_MEASURES = [
  'runid',
  'num_q',
  'num_ret',
  'num_rel',
  'num_rel_ret',
  'map',
  'gm_map',
  'Rprec',
  'bpref',
  'recip_rank',
  'iprec_at_recall',
  'P',
  'relstring',
  'recall',
  'infAP',
  'gm_bpref',
  'Rprec_mult',
  'utility',
  '11pt_avg',
  'binG',
  'G',
  'dcg',
  'ideal_dcg',
  'ndcg',
  'ndcg_rel',
  'Rndcg',
  'ndcg_cut',
  'map_cut',
  'relative_P',
  'success',
  'set_P',
  'set_relative_P',
  'set_recall',
  'set_map',
  'set_F',
  'num_nonrel_judged_ret',
  'rbp',
  'rbp_resid',
  'unj',
];
const OFFICIAL = ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map', 'gm_map', 'Rprec', 'bpref', 'recip_rank', 'iprec_at_recall', 'P'];
const SET = ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'utility', 'set_P', 'set_recall', 'set_relative_P', 'set_map', 'set_F'];

const planned = (measures: string[]) => compileTrecPlan(trecSettings({ measures })).instances.map((i) => i.name);

describe("trec_eval's measure table, from the measure registry", () => {
  it("lists trec_eval's measures in trec_eval's order, each once, its places those the registry gives", () => {
    expect(TREC_MEASURE_NAMES).toEqual(TE_TREC_MEASURES);
    for (const { measure } of trecEvalMeasures()) expect(TE_TREC_MEASURES.indexOf(measure.name)).toBe(measure.order);
  });

  it("expands the nicknames to trec_eval's measures, official by default", () => {
    // A nickname marks its measures; they print in the table's order.
    const inTableOrder = (names: string[]) => TE_TREC_MEASURES.filter((n) => names.includes(n));
    expect(planned([])).toEqual(inTableOrder(OFFICIAL));
    expect(planned(['official'])).toEqual(inTableOrder(OFFICIAL));
    expect(planned(['set'])).toEqual(inTableOrder(SET));
    expect(planned(['all_trec'])).toEqual(TE_TREC_MEASURES.filter((n) => n !== 'dcg' && n !== 'ideal_dcg'));
  });
});
