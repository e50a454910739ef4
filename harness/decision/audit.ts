import type { ReportCore } from './select.js';
import type { ReportWarning } from './types.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** A probe that raises the judge's grade in more than `maxUpRate` of its pairs: the judged qrels carry that bias. */
export function judgeFooled(data: ReportCore): ReportWarning[] {
  const audit = data.evalset.judge?.audit;
  if (audit === undefined) return [];
  const fooled = audit.probes.filter((p) => p.probed > 0 && p.up / p.probed > audit.maxUpRate);
  if (fooled.length === 0) return [];
  return [
    {
      code: 'judge-fooled',
      severity: 'serious',
      subject: 'judge',
      gate: data.gateResult !== undefined,
      message:
        `the judge audit raised the grade in ${fooled.map((p) => `${pct(p.up / p.probed)} of ${p.probed} ${p.probe} pairs`).join(', ')} ` +
        `(above judge.audit.maxUpRate ${pct(audit.maxUpRate)}): documents that ${fooled.map((p) => (p.probe === 'stuffing' ? 'repeat the query' : p.probe === 'injection' ? 'instruct the judge' : 'are long')).join(' or ')} ` +
        'are over-graded, so a system that retrieves them gains from the judge, not from relevance',
    },
  ];
}
