import { fmtCI, fmtDelta, fmtLevel, fmtMean, fmtP, fmtWtl } from './format.js';
import { gateSentence, methodSentence, primaryMeasure, roleLabel } from './select.js';
import type { Comparison, ReportData } from './types.js';

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

/**
 * An ADR draft in the shape of docs/adr/0000-template.md (MADR-minimal plus front matter and Evidence), built
 * only from report data: status proposed, the eval set and arms as context, the gate verdict as the proposed
 * decision, an evidence table with the report's own rounding, the report's warnings as caveats, and the
 * command that regenerates the evidence. Pure.
 */
export function renderAdr(data: ReportData, opts: AdrOptions): string {
  const L: string[] = [];
  const e = data.evalset;
  const g = data.gateResult;
  L.push('---', 'status: proposed', `date: ${opts.date}`, '---', '', `# ${pad(opts.number)}. ${opts.title}`, '');
  L.push(`<!-- drafted by \`harness adr\` from ${opts.reportLink}/report.json; the Evidence section quotes it, edit the rest freely -->`, '');

  L.push('## Context and Problem Statement', '');
  L.push(
    `Report \`${data.name}\` (config hash \`${data.configHash}\`) compares ${data.runs.length} runs on the eval set ` +
      `\`${e.name}\` (${e.format}, \`${e.path}\`, fingerprint \`${e.fingerprint}\`): ${e.queries} queries over ${e.documents} documents.`,
    '',
  );
  L.push(`- Strata: ${data.strata.map((s) => `${s.id} ${s.n}`).join(', ')}.`);
  L.push(
    `- Qrels: ${e.qrelsSource}${e.judge ? `, judge ${e.judge.model} with prompt ${e.judge.prompt}${e.judge.qrelsVersion === undefined ? '' : `, qrels version ${e.judge.qrelsVersion}`}` : ''}; eval set fingerprint \`${e.fingerprint}\`.`,
  );
  L.push(`- Measures: ${data.measures.join(', ')}.`);
  L.push(`- Statistics: ${methodSentence(data)}`, '');

  L.push('## Considered Options', '');
  for (const r of data.runs) {
    const notes = [r.id === data.baseline ? 'baseline' : '', r.label ?? '', r.substitute ? `substitute: ${r.substitute}` : ''].filter(Boolean);
    L.push(`- \`${r.id}\` (${r.kind}, fingerprint \`${r.fingerprint}\`)${notes.length > 0 ? `: ${notes.join('; ')}` : ''}`);
  }
  L.push('');

  L.push('## Decision Outcome', '');
  if (!g) {
    L.push('No option chosen: the report has no `gate:` block, so it proposes no decision. Add one and regenerate.', '');
  } else {
    const chosen = g.verdict === 'ADOPT' ? g.config.candidate : g.config.baseline;
    if (g.verdict === 'INCONCLUSIVE') {
      L.push(`No option chosen yet: the evidence does not decide between \`${g.config.candidate}\` and \`${g.config.baseline}\`.`, '');
    } else {
      L.push(`Chosen option: "${chosen}", because the gate says ${g.verdict}.`, '');
    }
    L.push(
      `Gate (rule \`${g.config.rule}\` on ${g.config.measure}, candidate \`${g.config.candidate}\` against \`${g.config.baseline}\`${g.config.minDelta !== undefined ? `, minDelta ${fmtMean(g.config.minDelta)}` : ''}):`,
      '',
      `\`${g.verdict}\`: ${g.reason}.`,
      '',
      gateSentence(data),
      '',
    );
  }
  L.push('### Consequences', '');
  // Only caveats that bear on the verdict; the report lists the rest.
  const caveats = g ? data.warnings.filter((w) => w.gate) : data.warnings;
  if (caveats.length === 0) L.push(g ? '- No caveat bears on the gate.' : '- No caveats: the report derived no warnings.');
  else for (const w of caveats) L.push(`- Caveat (${w.severity}, \`${w.code}\`): ${w.message}.`);
  const others = data.warnings.length - caveats.length;
  if (others > 0)
    L.push(`- The report lists ${others} more warning${others === 1 ? '' : 's'} about exploratory comparisons or the eval set, none bearing on the gate.`);
  L.push('');

  L.push('## Evidence', '');
  L.push(`Report: [${opts.reportLink}/report.md](${opts.reportLink}/report.md)`, '');
  L.push(`| ${EVIDENCE_COLUMNS.join(' | ')} |`, '| --- | --: | --- | --- | --- | --: | --: | --: | --- | --: | --- | --- |');
  for (const c of evidenceRows(data)) {
    L.push(
      `| ${[c.stratum, String(c.n), c.measure, c.baseline, c.system, fmtMean(c.baselineMean), fmtMean(c.systemMean), c.significant ? `**${fmtDelta(c.delta)}**` : fmtDelta(c.delta), `${fmtCI(c.ci)} (${fmtLevel(c.ciLevel)})`, fmtP(c.pAdjusted), fmtWtl(c), roleLabel(c)].join(' | ')} |`,
    );
  }
  L.push(
    '',
    `p is corrected within its family: the gate's rows within the gate's own family, the exploratory rows within theirs. Bold means significant (corrected p < ${data.compare.alpha}) and nothing else; an interval excludes 0 exactly when its row is significant.`,
    '',
  );
  L.push('Regenerate the evidence with:', '', '```sh', data.command, '```', '');
  return L.join('\n');
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
