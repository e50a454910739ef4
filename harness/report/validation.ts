import type { PpiRow, Validation } from '../decision/evidence-types.js';
import type { Block, Cell } from './blocks.js';
import { fmtCI, fmtCompCI, fmtDelta, fmtLevel } from '../decision/format.js';
import { answerJudged, findComparison, type ReportCore } from '../decision/select.js';
import type { ReportData } from '../decision/types.js';

const f3 = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(3).replace(/^-(0\.000)$/, '$1'));
const strong = (text: string, on: boolean): Cell => (on ? { text, strong: true } : text);

/** The PPI row of a comparison, if any. */
export function ppiOf(data: Pick<ReportCore, 'ppi'>, stratum: string, measure: string, baseline: string, system: string): PpiRow | undefined {
  return data.ppi?.find((r) => r.stratum === stratum && r.measure === measure && r.baseline === baseline && r.system === system);
}

/** One line on the judge's validation for the gate part: passed, failed (why), or none made. */
export function validationSentence(data: Pick<ReportData, 'evalset' | 'validation' | 'humanLabels' | 'answerLevel' | 'measures'>): string | undefined {
  const answers = data.humanLabels?.of === 'answers' || (data.evalset.qrelsSource === 'gold' && answerJudged(data));
  if (data.evalset.qrelsSource === 'gold' && !answers) return undefined;
  const v = data.validation;
  const judge = data.evalset.judge;
  const who = answers ? 'the answer judge' : `the judge${judge ? ` (${judge.model}, qrels version ${judge.qrelsVersion ?? 'unknown'})` : ''}`;
  if (v === undefined) return `Judge validation: none: ${who} was not checked against human labels (no ${answers ? 'answer.humanLabels' : 'humanLabels:'}).`;
  if (v.pass) return `Judge validation: PASSED: on ${v.labelledQueries} human-labelled queries ${who} reproduces the decision (see Validation).`;
  return `Judge validation: FAILED: ${v.failures.join('; ')} (see Validation).`;
}

/**
 * The gate's confirmatory comparisons with the plain (judge-based) and PPI-corrected deltas and intervals side by
 * side, and whether the judge passed validation: what the gate part of a judged report adds. Empty on gold.
 */
export function gateEvidenceBlocks(data: ReportData): Block[] {
  const g = data.gateResult?.config;
  const sentence = validationSentence(data);
  if (!g || sentence === undefined) return [];
  const B: Block[] = [];
  if (data.ppi !== undefined) {
    const rows = data.strata.flatMap((s) => {
      const c = findComparison(data, s.id, g.measure, g.baseline, g.candidate);
      if (c === undefined || c.role !== 'confirmatory') return [];
      const p = ppiOf(data, s.id, g.measure, g.baseline, g.candidate);
      const ppi = p?.ppi;
      return [
        [
          s.id,
          String(s.n),
          strong(fmtDelta(c.delta), c.significant),
          fmtCompCI(c),
          ppi ? strong(fmtDelta(ppi.estimate), ppi.significant) : 'n/a',
          ppi ? fmtCI(ppi.ci) : (p?.unavailable ?? 'n/a'),
          ppi ? fmtLevel(ppi.level) : '',
          ppi ? String(ppi.n) : '0',
        ],
      ];
    });
    B.push({
      kind: 'table',
      head: ['stratum', 'n', 'delta (judge)', 'CI (judge)', 'delta (PPI)', 'CI (PPI)', 'PPI level', 'human-labelled'],
      align: ['l', 'r', 'r', 'l', 'r', 'l', 'r', 'r'],
      rows,
    });
    B.push({
      kind: 'para',
      text: `The gate decides on the ${g.judged === 'ppi' ? 'PPI-corrected interval (significant when it excludes 0)' : 'judge-based comparisons (gate.judged: plain); the PPI columns correct them for the judge\u2019s bias'}.`,
    });
  }
  B.push({ kind: 'para', text: sentence, strong: data.validation?.pass !== true });
  return B;
}

function signRows(v: Validation): Cell[][] {
  const shown = v.signs.filter((s) => s.role === 'confirmatory' || s.measure === v.measure).slice(0, 40);
  return shown.map((s) => [
    s.stratum,
    s.measure,
    `${s.system} vs ${s.baseline}`,
    s.role,
    fmtDelta(s.judgeDelta),
    fmtDelta(s.humanDelta),
    strong(s.reproduces ? 'yes' : 'NO', !s.reproduces),
  ]);
}

/**
 * The `Validation` section of a report scored on judged or gold+judged qrels: on the human-labelled queries,
 * whether each comparison's sign and the gate's verdict reproduce, rank agreement of the systems, pair-level
 * agreement, and the verdict against the config's thresholds. A judged report without human labels says so.
 */
export function validationBlocks(data: ReportData): Block[] {
  if (data.evalset.qrelsSource === 'gold' && data.humanLabels?.of !== 'answers' && !answerJudged(data)) return [];
  const B: Block[] = [{ kind: 'heading', level: 2, text: 'Validation' }];
  const v = data.validation;
  if (v === undefined) {
    B.push({ kind: 'para', text: validationSentence(data) ?? '', strong: true });
    return B;
  }
  const t = v.thresholds;
  B.push({
    kind: 'para',
    strong: true,
    text: `${v.pass ? 'PASS' : 'FAIL'}: the judge against ${v.labelledQueries} human-labelled queries (${v.incompleteQueries} labelled in part, left out) from ${v.labelsFile}, qrels version ${v.qrelsVersion}.${v.pass ? '' : ` ${v.failures.join('; ')}.`}`,
  });
  const rank = (name: string, r: Validation['tau']) => `${name} ${r ? `${f3(r.value)} [${f3(r.ci[0])}, ${f3(r.ci[1])}]` : 'n/a'}`;
  const a = v.agreement;
  B.push({
    kind: 'list',
    items: [
      ...(v.gate
        ? [
            `Gate verdict on these queries: ${v.gate.judge} under the judge, ${v.gate.human} under human labels (${v.gate.reproduces ? 'reproduces' : 'does NOT reproduce'}).`,
          ]
        : []),
      `System rankings by mean ${v.measure} (95% bootstrap intervals over queries): ${rank('Kendall tau', v.tau)}; ${rank('tau_AP', v.tauAP)}; pass needs tau >= ${t.minTau}.`,
      `Pairs: ${a.pairs}; kappa (relevant at grade >= ${a.relevantAt ?? 'n/a'}, as ${v.measure} counts relevance) ${f3(a.kappaBinary)}, quadratic kappa ${f3(a.kappaQuadratic)}, Krippendorff alpha (ordinal) ${f3(a.alphaOrdinal)}, Gwet AC1 ${f3(a.ac1)}.`,
      `Pass rule: at least ${t.minQueries} labelled queries, the gate verdict and every gate comparison's sign reproduce, tau >= ${t.minTau} (config validation:).`,
    ],
  });
  const rows = signRows(v);
  if (rows.length > 0)
    B.push({
      kind: 'table',
      head: ['stratum', 'measure', 'comparison', 'role', 'delta (judge)', 'delta (human)', 'sign reproduces'],
      align: ['l', 'l', 'l', 'l', 'r', 'r', 'l'],
      rows,
    });
  const flips = v.signs.filter((s) => !s.reproduces).length;
  B.push({ kind: 'para', text: `Over every comparison of the report: ${v.signs.length - flips} of ${v.signs.length} signs reproduce under human labels.` });
  return B;
}
