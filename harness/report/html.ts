import { fmtCI, fmtDelta, fmtDz, fmtLevel, fmtMde, fmtMean, fmtP, fmtWtl } from './format.js';
import { BANNER } from './markdown.js';
import { reportedMeasures } from '../compare/measures.js';
import { GATE_MARK, gateSentence, meanOf, methodSentence, overallStratum, primaryMeasure, qrelsText, roleLabel, runKind, runNote, winsOver } from './select.js';
import { esc, forestPlot, recallCurves, recallMeasures, scatterPlot } from './svg.js';
import { blocksToHtml, evidenceBlocks, headlineRuns, systemsBlocks } from './systems.js';
import type { Comparison, ReportData, ReportRun, StratumInfo } from './types.js';

const CSS = `
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2rem; }
h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.ci { white-space: nowrap; }
code, pre { background: #f5f5f5; border-radius: 3px; }
pre { padding: .6rem; overflow-x: auto; }
.banner { color: #666; font-size: .85rem; }
.verdict { font-size: 1.1rem; padding: .6rem .8rem; border-radius: 4px; border-left: 6px solid; }
.ADOPT { background: #eaf6ee; border-color: #2e8b57; } .REJECT { background: #fbeaea; border-color: #d1495b; }
.INCONCLUSIVE { background: #fdf5e6; border-color: #edae49; }
.sev-serious { color: #a00; } .sev-warning { color: #9a5b00; } .sev-info { color: #555; }
.sig { font-weight: bold; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; }
svg.plot { background: #fff; border: 1px solid #eee; }
`;

function td(text: string, num = false, cls = ''): string {
  const classes = [num ? 'num' : '', cls].filter(Boolean).join(' ');
  return `<td${classes ? ` class="${classes}"` : ''}>${text}</td>`;
}

function th(text: string, num = false): string {
  return `<th${num ? ' class="num"' : ''}>${text}</th>`;
}

/** Banner, title, styles and the command that regenerates the evidence. */
function headSection(data: ReportData): string[] {
  return [
    '<!DOCTYPE html>',
    `<!-- ${esc(BANNER)} -->`,
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${esc(`Report: ${data.name}`)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    `<p class="banner">${esc(BANNER)}</p>`,
    `<h1>${esc(`Report: ${data.name}`)}</h1>`,
    `<p>Config hash <code>${esc(data.configHash)}</code>. Regenerate the evidence with:</p>`,
    `<pre><code>${esc(data.command)}</code></pre>`,
  ];
}

function gateSection(data: ReportData): string[] {
  if (!data.gateResult) return [];
  const g = data.gateResult;
  return [
    '<h2>Gate</h2>',
    `<p class="verdict ${g.verdict}"><strong>${g.verdict}</strong>: ${esc(g.reason)}.</p>`,
    `<p>Rule <code>${esc(g.config.rule)}</code> on ${esc(g.config.measure)}: candidate <code>${esc(g.config.candidate)}</code> against baseline <code>${esc(g.config.baseline)}</code>${g.config.minDelta !== undefined ? `, minDelta ${fmtMean(g.config.minDelta)}` : ''}.</p>`,
    `<p>${esc(gateSentence(data))}</p>`,
  ];
}

function warningsSection(data: ReportData): string[] {
  if (data.warnings.length === 0) return ['<h2>Warnings</h2>', '<p>None.</p>'];
  return [
    '<h2>Warnings</h2>',
    '<ul>',
    ...data.warnings.map(
      (w) => `<li class="sev-${w.severity}"><strong>${w.severity}</strong> <code>${esc(w.code)}</code> (${esc(w.subject)}): ${esc(w.message)}</li>`,
    ),
    '</ul>',
  ];
}

function evalsetSection(data: ReportData): string[] {
  const e = data.evalset;
  const rows: readonly (readonly [string, string])[] = [
    ['name', esc(e.name)],
    ['format', esc(e.format)],
    ['path', `<code>${esc(e.path)}</code>`],
    ['fingerprint', `<code>${esc(e.fingerprint)}</code>`],
    ['queries', String(e.queries)],
    ['documents', String(e.documents)],
    ['qrels', esc(qrelsText(e))],
  ];
  return [
    '<h2>Eval set</h2>',
    '<table>',
    ...rows.map(([k, v]) => `<tr>${th(k)}${td(v)}</tr>`),
    '</table>',
    '<table>',
    `<tr>${th('stratum')}${th('queries', true)}</tr>`,
    ...data.strata.map((s) => `<tr>${td(esc(s.id))}${td(String(s.n), true)}</tr>`),
    '</table>',
    ...(e.notes.length > 0 ? ['<ul>', ...e.notes.map((n) => `<li>${esc(n)}</li>`), '</ul>'] : []),
  ];
}

function runsSection(data: ReportData): string[] {
  const from = data.runs.some((r) => r.inputs !== undefined);
  const row = (r: ReportRun) =>
    `<tr>${td(esc(data.letters[r.id] as string))}${td(esc(r.label ? `${r.id} (${r.label})` : r.id))}${td(esc(runKind(r)))}${from ? td(esc(r.inputs?.join(', ') ?? '')) : ''}${td(`<code>${esc(r.fingerprint)}</code>`)}${td(esc(runNote(data, r)))}</tr>`;
  return [
    '<h2>Runs</h2>',
    '<table>',
    `<tr>${th('')}${th('run')}${th('kind')}${from ? th('from') : ''}${th('fingerprint')}${th('note')}</tr>`,
    ...data.runs.map(row),
    '</table>',
  ];
}

/** Forest plots of every tested measure, and one scatter per headline system on the primary measure. */
function differencesSection(data: ReportData): string[] {
  if (data.comparisons.length === 0) return [];
  const primary = primaryMeasure(data);
  const overall = overallStratum(data);
  // One scatter per headline system: with dozens of grid points the page would hold dozens of near-copies.
  const headline = new Set(headlineRuns(data).map((r) => r.id));
  const pairs = data.comparisons.filter(
    (x) =>
      x.stratum === overall.id &&
      x.measure === primary &&
      headline.has(x.system) &&
      (x.baseline === data.baseline || x.system === data.gateResult?.config.candidate),
  );
  return [
    '<h2>Differences to baseline</h2>',
    '<div class="plots">',
    ...data.testedMeasures.map((m) => forestPlot(data, m)),
    '</div>',
    `<h2>Per-query ${esc(primary)}</h2>`,
    '<p>One point per query; above the dashed diagonal the system beats its baseline.</p>',
    '<div class="plots">',
    ...pairs.map((p) => scatterPlot(data, primary, p.baseline, p.system)),
    '</div>',
  ];
}

function recallSection(data: ReportData): string[] {
  const recall = recallMeasures(reportedMeasures(data.measures));
  if ((data.curves?.cutoffs.length ?? 0) < 2 && recall.length < 2) return [];
  return ['<h2>Recall at k</h2>', '<div class="plots">', ...data.strata.map((s) => recallCurves(data, s.id, recall)), '</div>'];
}

const COMPARISON_HEAD = [
  th('system'),
  th('baseline'),
  th('measure'),
  th('role'),
  th('system mean', true),
  th('baseline mean', true),
  th('delta', true),
  th('CI'),
  th('CI level', true),
  th('p', true),
  th('p (corrected)', true),
  th('d_z', true),
  th('W/T/L'),
  th('MDE', true),
].join('');

function comparisonRow(x: Comparison): string {
  return `<tr>${[
    td(esc(x.system)),
    td(esc(x.baseline)),
    td(esc(x.measure)),
    td(roleLabel(x)),
    td(fmtMean(x.systemMean), true),
    td(fmtMean(x.baselineMean), true),
    td(fmtDelta(x.delta), true, x.significant ? 'sig' : ''),
    td(fmtCI(x.ci), false, 'ci'),
    td(fmtLevel(x.ciLevel), true),
    td(esc(fmtP(x.p)), true),
    td(esc(fmtP(x.pAdjusted)), true),
    td(fmtDz(x.dz), true),
    td(fmtWtl(x)),
    td(fmtMde(x.mde), true),
  ].join('')}</tr>`;
}

/** One stratum: every shown run's means with significance marks, then its comparisons among shown runs. */
function stratumSection(data: ReportData, s: StratumInfo, shown: readonly ReportRun[]): string[] {
  const H = [`<h3>${esc(s.overall ? `${s.id} (all strata pooled)` : s.id)}, n = ${s.n}</h3>`, '<table>'];
  H.push(`<tr>${th('')}${th('run')}${data.measures.map((m) => th(esc(m), true)).join('')}</tr>`);
  for (const r of shown) {
    const cells = data.measures.map((m) => {
      const marks = winsOver(data, s.id, m, r.id);
      return td(fmtMean(meanOf(data, s.id, r.id, m) as number) + (marks.length > 0 ? `<sup>${marks.join('')}</sup>` : ''), true);
    });
    H.push(`<tr>${td(esc(data.letters[r.id] as string))}${td(esc(r.id))}${cells.join('')}</tr>`);
  }
  H.push('</table>');
  const visible = new Set(shown.map((r) => r.id));
  const rows = data.comparisons.filter((x) => x.stratum === s.id && visible.has(x.system) && visible.has(x.baseline));
  if (rows.length === 0) return H;
  return [...H, '<table>', `<tr>${COMPARISON_HEAD}</tr>`, ...rows.map(comparisonRow), '</table>'];
}

function resultsSection(data: ReportData): string[] {
  const shown = headlineRuns(data);
  const H = ['<h2>Results by stratum</h2>'];
  if (shown.length < data.runs.length) {
    H.push(
      `<p>${data.runs.length - shown.length} grid systems that are not among the best of any stratum are left out of these tables; every system is in summary.csv, comparisons.csv and the grid tables above.</p>`,
    );
  }
  return [...H, ...data.strata.flatMap((s) => stratumSection(data, s, shown))];
}

function legendSection(data: ReportData): string[] {
  return [
    '<h2>Legend</h2>',
    '<ul>',
    `<li>Bold means significant (corrected p &lt; ${data.compare.alpha}) and nothing else; in the forest plots significant deltas are filled, and their bars clear zero. Superscript letters mark the runs a value is significantly better than (ranx style): <sup>a</sup> = better than run a; <sup>a${GATE_MARK}</sup> comes from the gate's confirmatory comparison, every other letter is exploratory.</li>`,
    `<li>Method: ${esc(methodSentence(data))}</li>`,
    '<li>delta = system mean &minus; baseline mean over the same queries; W/T/L = queries where the system is above / equal to / below the baseline.</li>',
    '<li>Queries a run did not answer score 0; means are over every query of the stratum.</li>',
    '</ul>',
  ];
}

/**
 * `report.html`: one self-contained page (inline CSS, inline SVG, no script, no external asset) with the
 * report's tables, the gate, the warnings and the plots. Pure; no timestamps or absolute paths.
 */
export function renderHtml(data: ReportData): string {
  return [
    ...headSection(data),
    ...gateSection(data),
    ...warningsSection(data),
    ...evalsetSection(data),
    ...runsSection(data),
    ...blocksToHtml(systemsBlocks(data), esc),
    ...differencesSection(data),
    ...recallSection(data),
    ...resultsSection(data),
    ...blocksToHtml(evidenceBlocks(data), esc),
    ...legendSection(data),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
