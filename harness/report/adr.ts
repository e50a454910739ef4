import { fmtCompCI, fmtDelta, fmtLevel, fmtMean, fmtP, fmtWtl } from '../decision/format.js';
import { asDecided } from '../decision/gate.js';
import { gateSentence, meanOf, methodSentence, primaryMeasure, roleLabel } from '../decision/select.js';
import type { Comparison, ReportData, ReportRun, ReportTuning } from '../decision/types.js';

/** `Use RRF over BM25 + MiniLM!` -> `use-rrf-over-bm25-minilm`; at most 60 characters, cut at a word edge. */
export function kebabTitle(title: string): string {
  const k = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (k.length <= 60) return k;
  const cut = k.slice(0, 61);
  const edge = cut.lastIndexOf('-');
  return (edge > 20 ? cut.slice(0, edge) : k.slice(0, 60)).replace(/-+$/, '');
}

/** The next free ADR number given the file names in the ADR folder (`NNNN-*.md`; the template is 0000). */
export function nextAdrNumber(fileNames: readonly string[]): number {
  let max = 0;
  for (const f of fileNames) {
    const m = /^(\d{4})-.*\.md$/.exec(f);
    if (m) max = Math.max(max, Number(m[1]));
  }
  return max + 1;
}

export interface AdrOptions {
  readonly number: number;
  readonly title: string;
  /** YYYY-MM-DD. */
  readonly date: string;
  /** Link from the ADR to the report folder, relative to the ADR's folder, with `/` separators. */
  readonly reportLink: string;
}

/** The columns of the Evidence table; `harness adr` writes them and tests parse them back. */
export const EVIDENCE_COLUMNS = [
  'stratum',
  'n',
  'measure',
  'baseline',
  'system',
  'baseline mean',
  'system mean',
  'delta',
  'CI (level)',
  'p (corrected)',
  'W/T/L',
  'role',
] as const;

/**
 * The comparisons an ADR quotes: with a gate, its pair on every tested measure (the gate's measure first, whose
 * rows are the confirmatory ones; the others are exploratory and labelled so); without one, every run against
 * the baseline on the primary measure. Strata in report order.
 */
export function evidenceRows(data: ReportData): Comparison[] {
  const g = data.gateResult?.config;
  const primary = primaryMeasure(data);
  const measures = g ? [g.measure, ...data.testedMeasures.filter((m) => m !== g.measure)] : [primary];
  const rows: Comparison[] = [];
  for (const m of measures) {
    for (const s of data.strata) {
      for (const c of data.comparisons) {
        if (c.stratum !== s.id || c.measure !== m) continue;
        if (g ? c.baseline === g.baseline && c.system === g.candidate : c.baseline === data.baseline) rows.push(c);
      }
    }
  }
  return rows;
}

function pad(n: number): string {
  return String(n).padStart(4, '0');
}

/** A grid's Group as an ADR option: its points, what it swept, its Tuned system and the Oracle point. */
export interface GroupOption {
  readonly group: string;
  readonly kind: string;
  readonly points: number;
  /** Point keys the members differ in (`inputs`, `rrfK`, `alpha`), in first-seen order. */
  readonly swept: readonly string[];
  readonly tuned?: ReportRun;
  /** Tuning's oracle; without a tuned system, the member best on the primary measure overall. */
  readonly best?: { readonly member: string; readonly mean: number };
}

/** The grid Groups of a report, in run order, each once. */
export function groupOptions(data: ReportData): GroupOption[] {
  const measure = primaryMeasure(data);
  const overall = overallStratum(data);
  const out = new Map<string, GroupOption>();
  for (const r of data.runs) {
    if (r.group === undefined || out.has(r.group)) continue;
    const members = data.runs.filter((m) => m.group === r.group && m.node !== 'tune');
    const tuned = data.runs.find((m) => m.group === r.group && m.node === 'tune');
    const swept = [...new Set(members.flatMap((m) => Object.keys(m.point ?? {})))];
    const ranked = members
      .map((m) => ({ member: m.id, mean: meanOf(data, overall, m.id, measure) ?? Number.NaN }))
      .filter((x) => !Number.isNaN(x.mean))
      .sort((a, b) => b.mean - a.mean);
    const best = tuned?.tuning?.oracle ?? ranked[0];
    out.set(r.group, {
      group: r.group,
      kind: members[0]?.kind ?? r.kind,
      points: members.length,
      swept,
      ...(tuned === undefined ? {} : { tuned }),
      ...(best === undefined ? {} : { best }),
    });
  }
  return [...out.values()];
}

/** The stratum a single number speaks for: the overall row when there is one, else the first. */
function overallStratum(data: ReportData): string {
  return (data.strata.find((s) => s.overall) ?? data.strata[0])?.id ?? 'all';
}

/** `rrf.bm25+fts5.rrfK=30 in 5 of 5 folds` or `alpha=0.8 in 2, alpha=0.7 in 2, alpha=0.9 in 1 of 5 folds`. */
function picksSentence(t: ReportTuning): string {
  const counts = new Map<string, number>();
  for (const c of t.choices) counts.set(c.member, (counts.get(c.member) ?? 0) + 1);
  const unit = t.method === 'split' ? 'split' : 'folds';
  const parts = [...counts].sort((a, b) => b[1] - a[1]).map(([m, n]) => `\`${m}\` in ${n}`);
  return `${parts.join(', ')} of ${t.choices.length} ${unit}`;
}

function optionLines(data: ReportData): string[] {
  const measure = primaryMeasure(data);
  const overall = overallStratum(data);
  const g = data.gateResult?.config;
  const onGate = new Set(g ? [g.candidate, g.baseline] : []);
  const mean = (id: string): string => {
    const m = meanOf(data, overall, id, measure);
    return m === undefined ? '' : `, ${measure} ${fmtMean(m)} in ${overall}`;
  };
  const L: string[] = [];
  // Grid members are options only through their group, unless the gate names one of them itself.
  for (const r of data.runs.filter((x) => (x.group === undefined && x.node !== 'tune') || (onGate.has(x.id) && x.node !== 'tune'))) {
    const notes = [r.id === data.baseline ? 'baseline' : '', r.label ?? '', r.substitute ? `substitute: ${r.substitute}` : ''].filter(Boolean);
    L.push(`- \`${r.id}\` (${r.kind}${mean(r.id)})${notes.length > 0 ? `: ${notes.join('; ')}` : ''}`);
  }
  for (const o of groupOptions(data)) {
    const sweep = `${o.points} points of ${o.kind} over ${o.swept.join(' x ') || 'its grid'}`;
    const tuned = o.tuned?.tuning
      ? `tuned \`${o.tuned.id}\`${mean(o.tuned.id)}, picking ${picksSentence(o.tuned.tuning)} by ${o.tuned.tuning.measure}`
      : 'no tuned system (add `tune:` to pick a point without the test queries)';
    const best = o.best
      ? `; ${o.tuned ? 'oracle' : 'best on the test queries'} \`${o.best.member}\` (${measure} ${fmtMean(o.best.mean)}, picked on the test queries themselves: optimistic)`
      : '';
    L.push(`- Grid \`${o.group}\` (${sweep}): ${tuned}${best}`);
  }
  return L;
}

/** Strata and deltas of the gate's confirmatory comparisons, each as a Good or Bad consequence of adopting the candidate. */
function gainLossLines(data: ReportData): { good: string[]; bad: string[] } {
  const good: string[] = [];
  const bad: string[] = [];
  for (const c of data.comparisons.filter((x) => x.role === 'confirmatory')) {
    const where = `on ${c.measure} in ${c.stratum} (n=${c.n}): delta ${fmtDelta(c.delta)}, ${fmtLevel(c.ciLevel)} CI ${fmtCompCI(c)}, corrected p ${fmtP(c.pAdjusted)}`;
    const sig = c.significant ? 'significantly' : 'though not significantly';
    if (c.delta > 0) good.push(`Good, because \`${c.system}\` scores above \`${c.baseline}\` ${where}, ${sig}.`);
    else if (c.delta < 0) bad.push(`Bad, because \`${c.system}\` scores below \`${c.baseline}\` ${where}, ${sig}.`);
  }
  return { good, bad };
}

/** What adopting the candidate costs beyond its scores: the arms it runs, its latency, the tuning gap. */
function costLines(data: ReportData, candidate: string, baseline: string): { good: string[]; bad: string[] } {
  const good: string[] = [];
  const bad: string[] = [];
  const arms = armsBehind(data, candidate);
  const baseArms = armsBehind(data, baseline);
  if (arms.length > baseArms.length)
    bad.push(
      `Bad, because \`${candidate}\` needs ${arms.length} arms (${arms.join(', ')}) indexed and queried where \`${baseline}\` needs ${baseArms.length}.`,
    );
  if (arms.length < baseArms.length) good.push(`Good, because \`${candidate}\` needs ${arms.length} arm(s) where \`${baseline}\` needs ${baseArms.length}.`);
  const tuned = data.runs.find((r) => r.id === candidate)?.tuning;
  const measure = primaryMeasure(data);
  const at = meanOf(data, overallStratum(data), candidate, measure);
  if (tuned && at !== undefined && tuned.oracle.mean > at) {
    bad.push(
      `Bad, because picking the point without the test queries leaves ${fmtDelta(at - tuned.oracle.mean)} ${measure} against the oracle \`${tuned.oracle.member}\`; expect a point tuned on new data to land near the tuned figure, not the oracle's.`,
    );
  }
  return { good, bad };
}

/** The arms a run rests on: itself for an arm, its inputs' arms for a fusion, every picked point's for a tuned run. */
function armsBehind(data: ReportData, id: string, seen = new Set<string>()): string[] {
  if (seen.has(id)) return [];
  seen.add(id);
  const r = data.runs.find((x) => x.id === id);
  if (!r) return [];
  if (r.node === 'retrieve' || (r.inputs === undefined && r.tuning === undefined)) return [id];
  const from = r.tuning ? r.tuning.choices.map((c) => c.member) : (r.inputs ?? []);
  return [...new Set(from.flatMap((x) => armsBehind(data, x, seen)))].sort();
}

function consequenceLines(data: ReportData): string[] {
  const g = data.gateResult;
  const L: string[] = [];
  if (g) {
    const scores = gainLossLines(data);
    const costs = costLines(data, g.config.candidate, g.config.baseline);
    const good = [...scores.good, ...costs.good];
    const bad = [...scores.bad, ...costs.bad];
    L.push(`Of adopting \`${g.config.candidate}\` in place of \`${g.config.baseline}\`, from the evidence below:`, '');
    L.push(
      ...(good.length > 0 ? good : [`Good: none the evidence shows; \`${g.config.candidate}\` is ahead in no confirmatory comparison.`]).map((x) => `- ${x}`),
    );
    L.push(
      ...(bad.length > 0
        ? bad
        : [`Bad: none the evidence shows; \`${g.config.candidate}\` is behind in no confirmatory comparison and costs no more arms.`]
      ).map((x) => `- ${x}`),
    );
  }
  // Only caveats that bear on the verdict; the report lists the rest.
  const caveats = g ? data.warnings.filter((w) => w.gate) : data.warnings;
  if (caveats.length === 0) L.push(g ? '- No caveat bears on the gate.' : '- No caveats: the report derived no warnings.');
  else for (const w of caveats) L.push(`- Caveat (${w.severity}, \`${w.code}\`): ${w.message}.`);
  const others = data.warnings.length - caveats.length;
  if (others > 0)
    L.push(`- The report lists ${others} more warning${others === 1 ? '' : 's'} about exploratory comparisons or the eval set, none bearing on the gate.`);
  return L;
}

function contextLines(data: ReportData): string[] {
  const e = data.evalset;
  return [
    `Report \`${data.name}\` (config hash \`${data.configHash}\`) compares ${data.runs.length} runs on the eval set ` +
      `\`${e.name}\` (${e.format}, \`${e.path}\`, fingerprint \`${e.fingerprint}\`): ${e.queries} queries over ${e.documents} documents.`,
    '',
    `- Strata: ${data.strata.map((s) => `${s.id} ${s.n}`).join(', ')}.`,
    `- Qrels: ${e.qrelsSource}${e.judge ? `, judge ${e.judge.model} with prompt ${e.judge.prompt}${e.judge.qrelsVersion === undefined ? '' : `, qrels version ${e.judge.qrelsVersion}`}` : ''}; eval set fingerprint \`${e.fingerprint}\`.`,
    `- Measures: ${data.measures.join(', ')}.`,
    `- Statistics: ${methodSentence(data)}`,
  ];
}

function decisionLines(data: ReportData): string[] {
  const g = data.gateResult;
  if (!g) return ['No option chosen: the report has no `gate:` block, so it proposes no decision. Add one and regenerate.', ''];
  const L: string[] = [];
  const chosen = g.verdict === 'ADOPT' ? g.config.candidate : g.config.baseline;
  const d = data.decision;
  if (g.verdict === 'INCONCLUSIVE') {
    L.push(`No option chosen yet: the evidence does not decide between \`${g.config.candidate}\` and \`${g.config.baseline}\`.`, '');
  } else if (d !== undefined && d.exitCode === 4) {
    L.push(`No option chosen yet: the gate says ${d.headline}; validate the judge before choosing "${chosen}".`, '');
  } else {
    L.push(`Chosen option: "${chosen}", because the gate says ${d?.headline ?? g.verdict}.`, '');
  }
  L.push(
    `Gate (rule \`${g.config.rule}\` on ${g.config.measure}, candidate \`${g.config.candidate}\` against \`${g.config.baseline}\`${g.config.minDelta !== undefined ? `, minDelta ${fmtMean(g.config.minDelta)}` : ''}):`,
    '',
    `\`${d?.headline ?? g.verdict}\`: ${g.reason}.`,
    '',
    gateSentence(data),
    '',
  );
  return L;
}

function evidenceLines(data: ReportData, opts: AdrOptions): string[] {
  const L = [`Report: [${opts.reportLink}/report.md](${opts.reportLink}/report.md)`, ''];
  L.push(`| ${EVIDENCE_COLUMNS.join(' | ')} |`, '| --- | --: | --- | --- | --- | --: | --: | --: | --- | --: | --- | --- |');
  for (const c of evidenceRows(data)) {
    L.push(
      `| ${[c.stratum, String(c.n), c.measure, c.baseline, c.system, fmtMean(c.baselineMean), fmtMean(c.systemMean), c.significant ? `**${fmtDelta(c.delta)}**` : fmtDelta(c.delta), `${fmtCompCI(c)} (${fmtLevel(c.ciLevel)})`, fmtP(c.pAdjusted), fmtWtl(c), roleLabel(c)].join(' | ')} |`,
    );
  }
  L.push(
    '',
    `p is corrected within its family: the gate's rows within the gate's own family, the exploratory rows within theirs. Bold means significant (corrected p < ${data.compare.alpha}) and nothing else; an interval excludes 0 exactly when its row is significant.`,
    '',
  );
  L.push('Regenerate the evidence with:', '', '```sh', data.command, '```', '');
  return L;
}

/**
 * An ADR draft in the shape of docs/adr/0000-template.md (MADR-minimal plus front matter and Evidence), built
 * only from report data: status proposed, the eval set and arms as context, the runs that are not grid points
 * and each grid Group (its tuned pick and oracle, never a line per point) as options, the gate verdict as the
 * proposed decision, its good and bad consequences (the confirmatory deltas, the arms it adds, the tuning gap)
 * with the gate's caveats, an evidence table with the report's own rounding, and the command that regenerates
 * the evidence. Pure.
 */
export function renderAdr(decided: ReportData, opts: AdrOptions): string {
  const data = asDecided(decided);
  return [
    '---',
    'status: proposed',
    `date: ${opts.date}`,
    '---',
    '',
    `# ${pad(opts.number)}. ${opts.title}`,
    '',
    `<!-- drafted by \`harness adr\` from ${opts.reportLink}/report.json; the Evidence section quotes it, edit the rest freely -->`,
    '',
    '## Context and Problem Statement',
    '',
    ...contextLines(data),
    '',
    '## Considered Options',
    '',
    ...optionLines(data),
    '',
    '## Decision Outcome',
    '',
    ...decisionLines(data),
    '### Consequences',
    '',
    ...consequenceLines(data),
    '',
    '## Evidence',
    '',
    ...evidenceLines(data, opts),
  ].join('\n');
}

/**
 * `harness adr`: drafts the next ADR in `adrDir` from the report in `reportDir`. Never overwrites: the file is
 * created exclusively, so two drafts racing for a number fail loudly instead of clobbering each other.
 * Returns the path written.
 */
export async function writeAdr(opts: { reportDir: string; adrDir: string; title: string; date: string }): Promise<string> {
  const { mkdir, readdir, writeFile } = await import('node:fs/promises');
  const { join, relative, sep } = await import('node:path');
  const { readReport } = await import('./write.js');
  const { UsageError } = await import('../errors.js');
  if (!/^\d{4}-\d{2}-\d{2}$/.test(opts.date)) throw new UsageError(`--date ${opts.date}: write it as YYYY-MM-DD`);
  const slug = kebabTitle(opts.title);
  if (slug === '') throw new UsageError(`--title "${opts.title}" has no letters or digits to name the file with`);
  const data = await readReport(opts.reportDir);
  await mkdir(opts.adrDir, { recursive: true });
  const number = nextAdrNumber(await readdir(opts.adrDir));
  const file = join(opts.adrDir, `${pad(number)}-${slug}.md`);
  const reportLink = relative(opts.adrDir, opts.reportDir).split(sep).join('/') || '.';
  await writeFile(file, renderAdr(data, { number, title: opts.title, date: opts.date, reportLink }), { flag: 'wx' });
  return file;
}
