import { describe, expect, it } from 'vitest';
import type { ResultCheck } from '../systems/types.js';
import { buildReportData } from '../decision/build.js';
import { fixtureInput } from './testdata/fixture.js';
import type { ReportInput } from '../decision/types.js';

/** The fixture with a Result check on some of its runs. */
function withChecks(checks: Readonly<Record<string, ResultCheck>>, input: ReportInput = fixtureInput()): ReportInput {
  return { ...input, runs: input.runs.map((r) => (checks[r.id] ? { ...r, resultCheck: checks[r.id] } : r)) };
}

const EMPTY: ResultCheck = { queries: 24, empty: 20, returned: 40, unknown: 0, faults: ['empty'] };
const UNKNOWN: ResultCheck = { queries: 24, empty: 0, returned: 240, unknown: 240, faults: ['unknown'], knownId: 'd001' };

describe('the silent-zeros warning', () => {
  it('is serious, names the run, the counts and the likely cause of each fault', () => {
    const d = buildReportData(withChecks({ dense: EMPTY, hybrid: UNKNOWN }));
    const w = d.warnings.filter((x) => x.code === 'empty-results' || x.code === 'unknown-ids');
    expect(w.map((x) => [x.code, x.severity, x.subject, x.gate])).toEqual([
      ['empty-results', 'serious', 'dense', false],
      ['unknown-ids', 'serious', 'hybrid', false],
    ]);
    expect(w[0]?.message).toBe(
      'run dense: its search returns nothing for most queries: no results for 20 of 24 queries, which score 0 as if nothing relevant existed; check the response mapping, whether the store step stored anything, or the server search',
    );
    expect(w[1]?.message).toBe(
      `run hybrid: 240 of 240 returned ids are not in the eval set's corpus (its ids look like "d001"), so they score as not relevant: ids the eval set does not know; check the docId mapping / id template`,
    );
  });

  it('a derived run that is empty because its inputs are names them as the cause; both faults give two warnings', () => {
    const d = buildReportData(withChecks({ hybrid: { ...EMPTY, faults: ['empty', 'unknown'], unknown: 40, emptyInputs: ['bm25', 'dense'] } }));
    const w = d.warnings.filter((x) => x.subject === 'hybrid');
    expect(w.map((x) => x.code)).toEqual(['empty-results', 'unknown-ids']);
    expect(w[0]?.message).toMatch(/; its inputs bm25, dense return nothing for most queries too \(see there\)$/);
  });

  it('bears on the gate when the gated run has it, so it comes first', () => {
    const d = buildReportData(withChecks({ dense: EMPTY }, fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } })));
    // Serious and on the gate, so among the first (the gated run is also a substitute, the other serious item).
    const at = d.warnings.findIndex((w) => w.code === 'empty-results');
    expect(d.warnings[at]).toMatchObject({ code: 'empty-results', severity: 'serious', gate: true, subject: 'dense' });
    expect(d.warnings.slice(0, at).every((w) => w.gate && w.severity === 'serious')).toBe(true);
  });

  it('is absent for runs without a Result check', () => {
    const d = buildReportData(fixtureInput());
    expect(d.warnings.filter((x) => x.severity === 'serious')).toEqual([]);
  });
});
