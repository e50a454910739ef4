import { evalSetFingerprint } from './fingerprint.js';
import type { EvalSet, QrelsCompleteness } from './types.js';
import type { Validation } from './validate.js';

export interface Distribution {
  readonly n: number;
  readonly min: number;
  readonly median: number;
  readonly p95: number;
  readonly max: number;
}

/**
 * min / median / p95 / max of a sample. Median: the middle value, or the mean of the two middle values;
 * p95: nearest rank, the value at 1-based rank ceil(0.95 n) of the sorted sample. All 0 for an empty sample.
 */
export function distribution(values: ArrayLike<number>): Distribution {
  const n = values.length;
  if (n === 0) return { n, min: 0, median: 0, p95: 0, max: 0 };
  const s = Float64Array.from(values).sort();
  const mid = n >> 1;
  const median = n % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { n, min: s[0]!, median, p95: s[Math.ceil(0.95 * n) - 1]!, max: s[n - 1]! };
}

export function wordCount(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 160;
    if (!space && !inWord) n += 1;
    inWord = !space;
  }
  return n;
}

export interface StratumSummary {
  readonly stratum: string;
  readonly queries: number;
  readonly relevantPerQuery: Distribution;
}

/** How many queries serve answer measures: with a gold answer, abstention ones, and those kept for answers only. */
export interface AnswerSummary {
  readonly withAnswer: number;
  /** Queries marked `metadata.abstention` (the history holds no answer; a right answer says so). */
  readonly abstention: number;
  /** Queries marked `metadata.answerOnly`: no judgments, so retrieval measures skip them. */
  readonly answerOnly: number;
}

export interface EvalSetSummary {
  readonly name: string;
  readonly fingerprint: string;
  readonly documents: number;
  readonly queries: number;
  readonly judgments: number;
  readonly byGrade: ReadonlyMap<number, number>;
  readonly strata: readonly StratumSummary[];
  readonly relevantPerQuery: Distribution;
  readonly documentWords: Distribution;
  readonly queryWords: Distribution;
  readonly scopes: { readonly count: number; readonly size: Distribution } | undefined;
  readonly units: readonly { readonly name: string; readonly count: number }[];
  readonly sensitiveDocuments: number;
  readonly answers: AnswerSummary;
}

/** The queries' gold answers and answer-level flags, counted (the texts are never printed). */
export function answerSummary(es: EvalSet): AnswerSummary {
  let withAnswer = 0;
  let abstention = 0;
  let answerOnly = 0;
  for (const q of es.queries) {
    if (q.answer !== undefined) withAnswer += 1;
    if (q.metadata?.['abstention'] === true) abstention += 1;
    if (q.metadata?.['answerOnly'] === true) answerOnly += 1;
  }
  return { withAnswer, abstention, answerOnly };
}

/** Counts and distributions for `harness evalset inspect`. Texts are measured, never printed (sensitive data). */
export function summarize(es: EvalSet): EvalSetSummary {
  const byGrade = new Map<number, number>();
  let judgments = 0;
  for (const judged of es.qrels.values()) {
    for (const g of judged.values()) {
      judgments += 1;
      byGrade.set(g, (byGrade.get(g) ?? 0) + 1);
    }
  }
  const relevantOf = (qid: string) => {
    let r = 0;
    for (const g of es.qrels.get(qid)?.values() ?? []) if (g >= 1) r += 1;
    return r;
  };
  const perStratum = new Map<string, number[]>();
  const allRelevant: number[] = [];
  for (const q of es.queries) {
    const r = relevantOf(q.id);
    allRelevant.push(r);
    const list = perStratum.get(q.stratum) ?? [];
    list.push(r);
    perStratum.set(q.stratum, list);
  }
  const docWords = new Float64Array(es.documents.length);
  let sensitive = 0;
  es.documents.forEach((d, i) => {
    docWords[i] = wordCount(d.text) + (d.title === undefined ? 0 : wordCount(d.title));
    if (d.sensitive === true) sensitive += 1;
  });
  return {
    name: es.name,
    fingerprint: evalSetFingerprint(es),
    documents: es.documents.length,
    queries: es.queries.length,
    judgments,
    byGrade: new Map([...byGrade].sort((a, b) => a[0] - b[0])),
    strata: [...perStratum]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([stratum, rel]) => ({ stratum, queries: rel.length, relevantPerQuery: distribution(rel) })),
    relevantPerQuery: distribution(allRelevant),
    documentWords: distribution(docWords),
    queryWords: distribution(es.queries.map((q) => wordCount(q.text))),
    scopes: es.scopes === undefined ? undefined : { count: es.scopes.size, size: distribution([...es.scopes.values()].map((s) => s.length)) },
    units: [...(es.units ?? [])].map(([name, map]) => ({ name, count: new Set(map.values()).size })),
    sensitiveDocuments: sensitive,
    answers: answerSummary(es),
  };
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const dist = (d: Distribution) => `min ${fmt(d.min)}  median ${fmt(d.median)}  p95 ${fmt(d.p95)}  max ${fmt(d.max)}`;

function formatAnswers(a: AnswerSummary): string {
  if (a.withAnswer === 0 && a.abstention === 0 && a.answerOnly === 0) return 'no gold answers (retrieval measures only)';
  const parts = [`${a.withAnswer} with a gold answer`, `${a.abstention} abstention`];
  if (a.answerOnly > 0) parts.push(`${a.answerOnly} for answer measures only (no judgments)`);
  return parts.join(', ');
}

const COMPLETENESS: Readonly<Record<QrelsCompleteness, string>> = {
  complete: 'complete (an unlisted document is known non-relevant: no judgment holes)',
  pooled: 'pooled (an unlisted document is unjudged: reports check judgment holes)',
};

/** `qrels` is the completeness a study would score with: the config's `evalset.qrels`, else the format's. */
export function formatInspect(es: EvalSet, validation: Validation, qrels?: { readonly value: QrelsCompleteness; readonly from: string }): string {
  const s = summarize(es);
  const lines: string[] = [];
  lines.push(`eval set     ${s.name}`);
  lines.push(`fingerprint  ${s.fingerprint}`);
  lines.push(`documents    ${s.documents}${s.sensitiveDocuments > 0 ? ` (${s.sensitiveDocuments} sensitive)` : ''}`);
  lines.push(`queries      ${s.queries}`);
  lines.push(`answers      ${formatAnswers(s.answers)}`);
  lines.push(`judgments    ${s.judgments} (by grade: ${[...s.byGrade].map(([g, n]) => `${g}: ${n}`).join(', ') || 'none'})`);
  if (qrels !== undefined) lines.push(`qrels        ${COMPLETENESS[qrels.value]}; ${qrels.from}`);
  if (s.scopes !== undefined) lines.push(`scopes       ${s.scopes.count} (documents per scope: ${dist(s.scopes.size)})`);
  for (const u of s.units) lines.push(`unit         ${u.name}: ${u.count} units`);
  lines.push('');
  const width = Math.max(7, ...s.strata.map((t) => t.stratum.length));
  lines.push(`${'stratum'.padEnd(width)}  queries  relevant per query`);
  for (const t of s.strata) lines.push(`${t.stratum.padEnd(width)}  ${String(t.queries).padStart(7)}  ${dist(t.relevantPerQuery)}`);
  lines.push(`${'(all)'.padEnd(width)}  ${String(s.queries).padStart(7)}  ${dist(s.relevantPerQuery)}`);
  lines.push('');
  lines.push('length in words (median: middle value; p95: nearest rank)');
  lines.push(`  documents  ${dist(s.documentWords)}`);
  lines.push(`  queries    ${dist(s.queryWords)}`);
  const notes = es.notes ?? [];
  if (notes.length > 0) {
    lines.push('', 'notes');
    for (const n of notes) lines.push(`  - ${n}`);
  }
  lines.push('', validation.problems.length === 0 ? 'validation: no problems' : `validation: ${validation.problems.length} problems`);
  for (const p of validation.problems) lines.push(`  - ${p}`);
  return `${lines.join('\n')}\n`;
}
