import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureInput } from '../report/testdata/fixture.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { buildReportData } from './build.js';
import type { HolesCheck, ReportInput } from './types.js';

/**
 * Every warning code the decision stage emits, with the codes it may never stand beside in one report (each
 * pair says the opposite of the other about the same thing). A new code must be added here: the first test
 * reads the codes out of the rules' source and fails on one this table does not know.
 */
const CONTRADICTS: Readonly<Record<string, readonly string[]>> = {
  'underpowered-stratum': [],
  'mde-above-delta': [],
  // "holes cannot be measured from these qrels" against a measurement or a check of them.
  'qrels-relevant-only': ['judged-holes', 'holes-unchecked'],
  // "holes were not checked" against a holes finding.
  'holes-unchecked': ['judged-holes', 'decision-depends-on-holes', 'qrels-relevant-only'],
  'judged-holes': ['qrels-relevant-only', 'holes-unchecked'],
  'decision-depends-on-holes': ['holes-unchecked'],
  substitute: [],
  'sensitive-documents': [],
  'permutations-too-few': [],
  'input-unreachable': [],
  'degenerate-grid-endpoint': [],
  'empty-results': [],
  'unknown-ids': [],
  'p-near-alpha': [],
  'judge-fooled': [],
  'judge-unvalidated': [],
  'ann-recall': [],
  // The answer level's (answer-level.ts): counts of what failed and of judge self-disagreement, opposite of nothing.
  'answer-failures': [],
  'judge-flip-rate': [],
  // The answer judge audit (answer-level.ts): a finding about the answer judge, which no other code clears; it
  // is about another judge than judge-fooled's (the relevance judge), so the two may stand together.
  'answer-judge-audit': [],
};

/** Codes that speak of judgment holes: none may appear on complete qrels. */
const HOLES_CODES = ['qrels-relevant-only', 'holes-unchecked', 'judged-holes', 'decision-depends-on-holes'];

const HOLES: HolesCheck = {
  measure: 'nDCG@10',
  condensed: "nDCG'@10",
  rows: [],
  gate: { plain: 'REJECT', condensed: 'ADOPT', plainReason: 'r', condensedReason: 'r' },
  picks: [],
};

/** Report inputs across the conditions the holes and judge rules read. */
function variants(): ReportInput[] {
  const out: ReportInput[] = [];
  for (const judgesNonRelevant of [true, false, undefined]) {
    for (const completeness of ['complete', 'pooled', undefined] as const) {
      for (const judged of [false, true]) {
        for (const measures of [
          ['nDCG@10', 'R@10', 'R@100', 'Judged@10'],
          ['nDCG@10', 'R@10', 'R@100'],
        ]) {
          for (const holes of [undefined, HOLES]) {
            const base = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' }, compare: { test: 't' } });
            out.push({
              ...base,
              measures,
              evalset: {
                ...base.evalset,
                ...(judgesNonRelevant === undefined ? {} : { qrelsJudgesNonRelevant: judgesNonRelevant }),
                ...(completeness === undefined ? {} : { qrelsCompleteness: completeness }),
                ...(judged ? { qrelsSource: 'judged' as const, judge: { model: 'm', prompt: 'p', pooled: ['bm25'], depth: 10, holes: 3 } } : {}),
              },
              ...(holes === undefined ? {} : { holes }),
            });
          }
        }
      }
    }
  }
  return out;
}

describe('warnings never contradict each other', () => {
  it('the table knows every code the rules emit', () => {
    const dir = join(PROJECT_ROOT, 'harness', 'decision');
    const source = ['warnings.ts', 'holes.ts', 'ann.ts', 'audit.ts', 'answer-level.ts'].map((f) => readFileSync(join(dir, f), 'utf8')).join('\n');
    const codes = new Set([...source.matchAll(/code: (?:fault === 'empty' \? )?'([a-z-]+)'(?: : '([a-z-]+)')?/g)].flatMap((m) => [m[1], m[2]]).filter(Boolean));
    expect([...codes].sort()).toEqual(Object.keys(CONTRADICTS).sort());
    for (const [code, others] of Object.entries(CONTRADICTS)) for (const o of others) expect(CONTRADICTS[o], `${code} -> ${o}`).toContain(code);
  });

  it('no report of any variant holds a contradicting pair, and complete qrels hold no holes warning', () => {
    let checked = 0;
    for (const input of variants()) {
      const codes = new Set(buildReportData(input).warnings.map((w) => w.code));
      for (const c of codes) for (const o of CONTRADICTS[c] ?? []) expect(codes.has(o), `${c} beside ${o}`).toBe(false);
      if (input.evalset.qrelsCompleteness === 'complete' && input.evalset.qrelsSource === 'gold')
        for (const h of HOLES_CODES) expect(codes.has(h), `${h} on complete qrels`).toBe(false);
      checked++;
    }
    expect(checked).toBe(72);
  });
});
