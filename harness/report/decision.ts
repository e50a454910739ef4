import type { Block, Cell } from './blocks.js';
import { fmtCompCI, fmtDelta, fmtLevel, fmtMean, fmtP, fmtWtl } from '../decision/format.js';
import { findComparison, meanOf, overallStratum, properStrata, qrelsText, roleLabel } from '../decision/select.js';
import type { Comparison, JudgeHealth, ReportData, ReportWarning } from '../decision/types.js';

/**
 * The decision a report leads with, in every rendering (issue 28: decision first): the question, the gate's
 * verdict and its confirmatory comparisons, the warnings that bear on it, and the candidate against its
 * baseline per stratum. Everything after it is exploratory or appendix. Pure functions of report.json.
 */

/** The question the study asks: the config's `description`, else a sentence built from the gate. */
export function questionText(data: ReportData): string {
  if (data.description) return data.description;
  const g = data.gateResult?.config;
  if (g) return `Is ${g.candidate} better than ${g.baseline} on ${g.measure}?`;
  return `How do ${data.runs.length} systems compare against ${data.baseline}?`;
}

/** The eval set in one line, without its fingerprint (that is in the appendix). */
export function evalsetLine(data: ReportData): string {
  const e = data.evalset;
  const strata = properStrata(data)
    .map((s) => `${s.id} ${s.n}`)
    .join(', ');
  return `Eval set ${e.name} (${e.format}): ${e.queries} queries (${strata}), ${e.documents} documents; qrels ${qrelsText(e)}. ${data.runs.length} systems.`;
}

/** The gate's rule in one sentence. */
export function gateRuleText(data: ReportData): string {
  const g = data.gateResult?.config;
  if (!g) return '';
  const min = g.minDelta !== undefined ? `, minDelta ${fmtMean(g.minDelta)}` : '';
  return `Rule ${g.rule} on ${g.measure}: candidate ${g.candidate} against baseline ${g.baseline}${min}.`;
}

/** The gate's confirmatory comparisons, strata in report order (the pooled row last). */
export function confirmatory(data: Pick<ReportData, 'comparisons' | 'strata'>): Comparison[] {
  return data.strata.flatMap((s) => data.comparisons.filter((c) => c.role === 'confirmatory' && c.stratum === s.id));
}

/**
 * The level every other interval is read against: the gate's pooled confirmatory interval's, else the nominal
 * 1 - alpha. A rendering names an interval's level only where it differs from this one.
 */
export function referenceLevel(data: Pick<ReportData, 'comparisons' | 'strata' | 'compare'>): number {
  const rows = confirmatory(data);
  const pooled = rows.find((c) => c.stratum === overallStratum(data).id) ?? rows[0];
  return pooled?.ciLevel ?? 1 - data.compare.alpha;
}

/** ` at 99.2%` when the comparison's level prints differently from the reference (always without one), else empty. */
export function levelNote(c: Pick<Comparison, 'ciLevel'>, reference: number | undefined): string {
  return c.ciLevel === null || (reference !== undefined && fmtLevel(c.ciLevel) === fmtLevel(reference)) ? '' : ` at ${fmtLevel(c.ciLevel)}`;
}

/** Warnings that bear on the gate, and the rest, each in the report's order. */
export function splitWarnings(data: Pick<ReportData, 'warnings' | 'gateResult'>): { gate: ReportWarning[]; other: ReportWarning[] } {
  if (!data.gateResult) return { gate: [], other: [...data.warnings] };
  return { gate: data.warnings.filter((w) => w.gate), other: data.warnings.filter((w) => !w.gate) };
}

/** The confirmatory comparisons as a table: the text form of the gate's forest plot. */
export function gateTableBlock(data: ReportData): Block {
  return {
    kind: 'table',
    head: ['stratum', 'n', 'delta', 'CI', 'CI level', 'p (corrected)', 'W/T/L'],
    align: ['l', 'r', 'r', 'l', 'r', 'r', 'l'],
    rows: confirmatory(data).map((c) => [c.stratum, String(c.n), deltaCell(c), fmtCompCI(c), fmtLevel(c.ciLevel), fmtP(c.pAdjusted), fmtWtl(c)]),
  };
}

function deltaCell(c: Comparison): Cell {
  return c.significant ? { text: fmtDelta(c.delta), strong: true } : fmtDelta(c.delta);
}

/**
 * The candidate against the gate's baseline in every stratum on every measure: means, and for tested measures
 * the comparison (confirmatory where the gate decides on it, else exploratory). Empty without a gate.
 */
export function headToHeadBlocks(data: ReportData): Block[] {
  const g = data.gateResult?.config;
  if (!g) return [];
  const reference = referenceLevel(data);
  const rows: Cell[][] = [];
  for (const s of data.strata) {
    for (const m of data.measures) {
      const c = findComparison(data, s.id, m, g.baseline, g.candidate);
      const base = meanOf(data, s.id, g.baseline, m);
      const cand = meanOf(data, s.id, g.candidate, m);
      rows.push([
        s.id,
        String(s.n),
        m,
        base === undefined ? '' : fmtMean(base),
        cand === undefined ? '' : fmtMean(cand),
        c ? deltaCell(c) : base === undefined || cand === undefined ? '' : fmtDelta(cand - base),
        c ? `${fmtCompCI(c)}${levelNote(c, reference)}` : 'not tested',
        c ? fmtP(c.pAdjusted) : '',
        c ? fmtWtl(c) : '',
        c ? roleLabel(c) : '',
      ]);
    }
  }
  return [
    { kind: 'heading', level: 3, text: `${g.candidate} against ${g.baseline}, per stratum` },
    {
      kind: 'table',
      head: ['stratum', 'n', 'measure', g.baseline, g.candidate, 'delta', 'CI', 'p (corrected)', 'W/T/L', 'role'],
      align: ['l', 'r', 'l', 'r', 'r', 'r', 'l', 'r', 'l', 'l'],
      rows,
    },
    {
      kind: 'para',
      text: `Intervals are at the level of their own corrected decision; a level is named where it differs from the gate's pooled ${fmtLevel(reference)}. Only rows with role gate can change the verdict.`,
    },
  ];
}

/** The verdict as every rendering leads with it: the Decision's headline (verdict and qualifiers), then its reason. */
export function verdictText(data: ReportData): { readonly headline: string; readonly reason: string } | undefined {
  const d = data.decision;
  return d === undefined ? undefined : { headline: d.headline, reason: d.reason };
}

const VALIDATION_TEXT: Readonly<Record<JudgeHealth['validation'], string>> = {
  passed: 'validated: the decision reproduces under the human labels',
  failed: 'validation FAILED',
  missing: 'not validated: no human labels',
  stale: 'not validated on these judgments: the human labels checked another qrels version',
};

/** Pairs per grade as `n (share)`, one row per stratum that has any. */
function gradeRows(grades: Readonly<Record<string, readonly number[]>>, strata: readonly string[]): Cell[][] {
  const width = Math.max(...Object.values(grades).map((g) => g.length));
  return strata.flatMap((s) => {
    const row = grades[s];
    if (row === undefined) return [];
    const n = row.reduce((a, b) => a + b, 0);
    return [[s, String(n), ...Array.from({ length: width }, (_, g) => `${row[g] ?? 0} (${n === 0 ? '0' : ((100 * (row[g] ?? 0)) / n).toFixed(0)}%)`)]];
  });
}

/**
 * The judge as the verdict reads it: validated or not, the PPI gap, the verdict on gold qrels alone, and the
 * judge's grades per stratum (a judge that gives one grade to everything shows here). Empty on gold qrels.
 */
export function judgeHealthBlocks(data: ReportData): Block[] {
  const h = data.decision?.judge;
  if (h === undefined) return [];
  const lines = [
    `${h.qrels === 'answers' ? 'Answer judge (Acc)' : `Judge (${h.qrels} qrels)`}: ${VALIDATION_TEXT[h.validation]}${h.failures.length > 0 ? ` (${h.failures.join('; ')})` : ''}.`,
  ];
  if (h.ppiUnavailable !== undefined) lines.push(`The PPI gate has no interval: ${h.ppiUnavailable}.`);
  if (h.goldOnly !== undefined)
    lines.push(`On gold qrels alone (${h.goldOnly.judgedQueries} queries with gold judgments), the gate says ${h.goldOnly.verdict}: ${h.goldOnly.reason}.`);
  const blocks: Block[] = [
    { kind: 'heading', level: 3, text: 'The judge behind the verdict' },
    { kind: 'list', items: lines },
  ];
  if (h.grades !== undefined) {
    const width = Math.max(...Object.values(h.grades).map((g) => g.length));
    blocks.push({
      kind: 'table',
      head: ['stratum', 'pairs', ...Array.from({ length: width }, (_, g) => `grade ${g}`)],
      align: ['l', 'r', ...Array.from({ length: width }, () => 'r' as const)],
      rows: gradeRows(
        h.grades,
        data.strata.map((s) => s.id),
      ),
    });
  }
  return blocks;
}

/** Each `compare.questions` entry's answer, one sentence each; empty without questions. */
export function questionBlocks(data: ReportData): Block[] {
  const qs = data.answers?.questions ?? [];
  if (qs.length === 0) return [];
  return [{ kind: 'list', items: qs.map((q) => `Question ${q.sentence} (${q.role}; a family of its own).`) }];
}

/**
 * What the study answers besides its gate: each `compare.questions` entry's sentence, and per stratum the best
 * system on the primary measure with those not significantly worse (exploratory: picked after the data).
 */
export function answersBlocks(data: ReportData): Block[] {
  const a = data.answers;
  // With a gate, the questions' answers stand beside the verdict (questionBlocks), where the question is read.
  const questions = data.gateResult === undefined ? questionBlocks(data) : [];
  if (a === undefined || (questions.length === 0 && a.best.length === 0)) return [];
  const blocks: Block[] = [{ kind: 'heading', level: 2, text: 'Answers' }, ...questions];
  if (a.best.length > 0) {
    const list = (xs: readonly string[]) => (xs.length === 0 ? '—' : xs.join(', '));
    blocks.push(
      {
        kind: 'para',
        text: `Best per stratum on ${a.best[0]?.measure}: the highest mean, and every other system tested against it, each stratum's tests a family of their own corrected within itself (exploratory: the best is picked after seeing the data, and these tests never reach the gate).`,
      },
      {
        kind: 'table',
        head: ['stratum', 'best', 'mean', 'not significantly worse', 'significantly worse'],
        align: ['l', 'l', 'r', 'l', 'l'],
        rows: a.best.map((b) => [b.stratum, b.best, fmtMean(b.mean), list(b.notWorse), list(b.worse)]),
      },
    );
  }
  return blocks;
}
