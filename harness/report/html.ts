import { gateEvidenceBlocks, validationBlocks } from './validation.js';
import { answerLevelBlocks } from './answer-level.js';
import { asDecided } from '../decision/gate.js';
import type { Block } from './blocks.js';
import {
  answersBlocks,
  evalsetLine,
  questionBlocks,
  gateRuleText,
  headToHeadBlocks,
  judgeHealthBlocks,
  questionText,
  referenceLevel,
  splitWarnings,
} from './decision.js';
import { exploreTable } from './explore.js';
import { fmtLevel, fmtMean } from '../decision/format.js';
import { GRID_CAPTION, gridPlots } from './grid-plot.js';
import { BANNER } from './markdown.js';
import { reportedMeasures } from '../compare/measures.js';
import { APPENDIX_SECTIONS, demote, judgedQrelsBlocks, sections } from './sections.js';
import { gateSentence, meanOf, methodSentence, overallStratum, primaryMeasure, qrelsText, runKind, runNote } from '../decision/select.js';
import { keysLegend, PLAIN_WINS, runKeys, winsOf, winsText } from './run-keys.js';
import { esc, forestPlot, gateForest, recallCurves, recallMeasures, scatterPlot } from './svg.js';
import { blocksToHtml, evidenceBlocks, headlineRuns, systemsBlocks } from './systems.js';
import type { ReportData, ReportRun, ReportWarning, StratumInfo } from '../decision/types.js';

const CSS = `
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; line-height: 1.4; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; margin-top: 2rem; }
h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.ci { white-space: nowrap; } td.num sup { white-space: normal; }
code, pre { background: #f5f5f5; border-radius: 3px; }
pre { padding: .6rem; overflow-x: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
td code { overflow-wrap: anywhere; word-break: break-all; } td.id { overflow-wrap: anywhere; }
table.explore td.id:first-child { min-width: 11rem; } table.explore td.ci { min-width: 8rem; }
.question { font-size: 1.15rem; margin: .2rem 0; } .lead { color: #444; margin: .2rem 0 1rem; }
.banner { color: #666; font-size: .85rem; }
.verdict { font-size: 1.1rem; padding: .6rem .8rem; border-radius: 4px; border-left: 6px solid; }
.ADOPT { background: #eaf6ee; border-color: #2e8b57; } .REJECT { background: #fbeaea; border-color: #d1495b; } .verdict.qualified { background: #fff6e0; border-color: #c98a00; }
.INCONCLUSIVE { background: #fdf5e6; border-color: #edae49; }
.sev-serious { color: #a00; } .sev-warning { color: #9a5b00; } .sev-info { color: #555; }
.sig { font-weight: bold; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; }
svg.plot { background: #fff; border: 1px solid #eee; max-width: 100%; height: auto; }
.filters { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; margin: .5rem 0; font-size: .9rem; }
.filters select { max-width: 22rem; }
table.explore { font-size: .8rem; margin: 0; width: 100%; } table.explore td.ci { white-space: normal; }
table.explore th, table.explore td { padding: .2rem .3rem; }
.explore-wrap { max-height: 40rem; overflow-y: auto; border: 1px solid #ddd; margin-bottom: 1rem; }
table.explore thead th { position: sticky; top: 0; background: #f7f7f7; }
details > summary { cursor: pointer; color: #1b6ca8; }
h2.appendix { margin-top: 3rem; }
`;

function td(text: string, num = false, cls = ''): string {
  const classes = [num ? 'num' : '', cls].filter(Boolean).join(' ');
  return `<td${classes ? ` class="${classes}"` : ''}>${text}</td>`;
}

function th(text: string, num = false): string {
  return `<th${num ? ' class="num"' : ''}>${text}</th>`;
}

/** Banner, title, styles, the question and the eval set in one line. */
function headSection(data: ReportData): string[] {
  return [
    '<!DOCTYPE html>',
    `<!-- ${esc(BANNER)} -->`,
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(`Report: ${data.name}`)}</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    `<p class="banner">${esc(BANNER)}</p>`,
    `<h1>${esc(`Report: ${data.name}`)}</h1>`,
    `<p class="question"><strong>Question:</strong> ${esc(questionText(data))}</p>`,
    `<p class="lead">${esc(evalsetLine(data))}</p>`,
  ];
}

/** The decision: verdict, rule, the confirmatory forest plot, the warnings on the gate, the head-to-head table. */
function gateSection(data: ReportData): string[] {
  if (!data.gateResult) return [];
  const g = data.gateResult;
  const onGate = splitWarnings(data).gate;
  return [
    '<section id="decision">',
    '<h2>Gate</h2>',
    `<p class="verdict ${g.verdict}${(data.decision?.qualifiers.length ?? 0) > 0 ? ' qualified' : ''}"><strong>${esc(data.decision?.headline ?? g.verdict)}</strong>: ${esc(g.reason)}.</p>`,
    `<p>${esc(gateRuleText(data))} ${esc(gateSentence(data))}</p>`,
    ...blocksToHtml(questionBlocks(data), esc),
    gateForest(data),
    ...blocksToHtml(gateEvidenceBlocks(data), esc),
    ...blocksToHtml(judgeHealthBlocks(data), esc),
    '<h3>Warnings on the gate</h3>',
    ...warningList(onGate, 'None.'),
    ...blocksToHtml(headToHeadBlocks(data), esc),
    '</section>',
  ];
}

function warningList(ws: readonly ReportWarning[], none: string): string[] {
  if (ws.length === 0) return [`<p>${none}</p>`];
  return [
    '<ul>',
    ...ws.map((w) => `<li class="sev-${w.severity}"><strong>${w.severity}</strong> <code>${esc(w.code)}</code> (${esc(w.subject)}): ${esc(w.message)}</li>`),
    '</ul>',
  ];
}

function warningsSection(data: ReportData): string[] {
  const { gate, other } = splitWarnings(data);
  return [`<h2>${data.gateResult ? 'Other warnings' : 'Warnings'}</h2>`, ...warningList(other, gate.length > 0 ? 'None beyond those on the gate.' : 'None.')];
}

/** Where the report came from: the config hash and the command that regenerates it. */
function provenanceSection(data: ReportData): string[] {
  return [
    '<h3>Provenance</h3>',
    `<p>Config hash <code>${esc(data.configHash)}</code>. Regenerate the evidence with:</p>`,
    `<pre><code>${esc(data.command)}</code></pre>`,
    '<p>The manifest.json beside this file holds the git sha, package versions, cache counts and timings.</p>',
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
    '<h3>Eval set</h3>',
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
  const keys = runKeys(data);
  const row = (r: ReportRun) =>
    `<tr>${td(esc(keys.get(r.id) as string))}${td(esc(r.label ? `${r.id} (${r.label})` : r.id), false, 'id')}${td(esc(runKind(r)))}${from ? td(esc(r.inputs?.join(', ') ?? '')) : ''}${td(`<code>${esc(r.fingerprint)}</code>`)}${td(esc(runNote(data, r)))}</tr>`;
  return [
    '<h3>Runs</h3>',
    '<table>',
    `<tr>${th('')}${th('run')}${th('kind')}${from ? th('from') : ''}${th('fingerprint')}${th('note')}</tr>`,
    ...data.runs.map(row),
    '</table>',
  ];
}

/** Forest plots of every tested measure (headline systems), and one scatter per headline system on the primary measure. */
function differencesSection(data: ReportData, reference: number | undefined): string[] {
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
  const left = headline.size < data.runs.length ? ` (the ${headline.size} headline systems; every system is in the table above)` : '';
  return [
    `<h2>Differences to baseline${esc(left)}</h2>`,
    '<div class="plots">',
    ...data.testedMeasures.map((m) => forestPlot(data, m, reference)),
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

/** A superscript of wins that may wrap after each comma, naming the runs in its tooltip. */
function winsSup(keys: ReadonlyMap<string, string>, wins: ReturnType<typeof winsOf>): string {
  if (wins.length === 0) return '';
  const title = `significantly better than ${wins.map((w) => w.id).join(', ')}`;
  return `<sup title="${esc(title)}">${esc(winsText(keys, wins)).replaceAll(PLAIN_WINS.sep, `${PLAIN_WINS.sep}<wbr>`)}</sup>`;
}

/** One stratum: every shown run's means with significance marks (the comparisons are in the exploratory table). */
function stratumSection(data: ReportData, s: StratumInfo, shown: readonly ReportRun[]): string[] {
  const H = [`<h3>${esc(s.overall ? `${s.id} (all strata pooled)` : s.id)}, n = ${s.n}</h3>`, '<table>'];
  H.push(`<tr>${th('')}${th('run')}${data.measures.map((m) => th(esc(m), true)).join('')}</tr>`);
  const keys = runKeys(data);
  for (const r of shown) {
    const cells = data.measures.map((m) => td(fmtMean(meanOf(data, s.id, r.id, m) as number) + winsSup(keys, winsOf(data, s.id, m, r.id)), true));
    H.push(`<tr>${td(esc(keys.get(r.id) as string))}${td(esc(r.id), false, 'id')}${cells.join('')}</tr>`);
  }
  H.push('</table>');
  return H;
}

function resultsSection(data: ReportData): string[] {
  const shown = headlineRuns(data);
  const H = ['<h2>Means by stratum</h2>'];
  if (shown.length < data.runs.length) {
    H.push(
      `<p>${data.runs.length - shown.length} grid systems that are not among the best of any stratum are left out of these tables; every system is in summary.csv, comparisons.csv, the grid plots and the exploratory comparisons above.</p>`,
    );
  }
  return [...H, ...data.strata.flatMap((s) => stratumSection(data, s, shown))];
}

function exploreSection(data: ReportData, reference: number | undefined): string[] {
  if (data.comparisons.length === 0) return [];
  return [
    '<h2>Exploratory comparisons</h2>',
    `<p>Every comparison of the report (also in comparisons.csv). None but those marked gate can change the verdict. ${reference === undefined ? 'Each interval is at the level of its own corrected decision.' : `An interval's level is named where it differs from the gate's pooled ${esc(fmtLevel(reference))}.`}</p>`,
    ...exploreTable(data, reference, esc),
  ];
}

function legendSection(data: ReportData): string[] {
  return [
    '<h2>Legend</h2>',
    '<ul>',
    `<li>Bold means significant (corrected p &lt; ${data.compare.alpha}) and nothing else; in the forest plots significant deltas are filled, and their bars clear zero. ${keysLegend(data, (x) => `<sup>${esc(x)}</sup>`)}</li>`,
    `<li>Method: ${esc(methodSentence(data))}</li>`,
    '<li>delta = system mean &minus; baseline mean over the same queries; W/T/L = queries where the system is above / equal to / below the baseline.</li>',
    '<li>Queries a run did not answer score 0; means are over every query of the stratum.</li>',
    '</ul>',
  ];
}

/** The systems sections, with each grid drawn (its table folded away under the picture). */
function systemsSection(data: ReportData): string[] {
  return sections(systemsBlocks(data)).flatMap((s) => (s.title === 'Grids' ? gridSection(data, s.blocks) : blocksToHtml(s.blocks, esc)));
}

function gridSection(data: ReportData, tables: readonly Block[]): string[] {
  return [
    '<h2>Grids</h2>',
    `<p>${esc(GRID_CAPTION)}</p>`,
    '<div class="plots">',
    ...gridPlots(data),
    '</div>',
    '<details><summary>every grid point as a table</summary>',
    ...blocksToHtml(
      tables.filter((b) => !(b.kind === 'heading' && b.level === 2)),
      esc,
    ),
    '</details>',
  ];
}

/**
 * `report.html`: one self-contained page (inline CSS, inline SVG, one inline script for the exploratory
 * table, no external asset), decision first: the question, the gate with its confirmatory forest plot, the
 * warnings on it and the candidate against its baseline; then the exploratory material; then the appendix.
 * Pure; no timestamps or absolute paths.
 */
export function renderHtml(decided: ReportData): string {
  const data = asDecided(decided);
  const evidence = sections(evidenceBlocks(data));
  const reference = data.gateResult ? referenceLevel(data) : undefined;
  return [
    ...headSection(data),
    ...gateSection(data),
    ...blocksToHtml(answersBlocks(data), esc),
    ...blocksToHtml(answerLevelBlocks(data), esc), // answer level (issue 43)
    ...warningsSection(data),
    ...blocksToHtml(validationBlocks(data), esc),
    ...blocksToHtml(judgedQrelsBlocks(data), esc),
    ...systemsSection(data),
    ...exploreSection(data, reference),
    ...differencesSection(data, reference),
    ...recallSection(data),
    ...resultsSection(data),
    ...blocksToHtml(
      evidence.filter((s) => !APPENDIX_SECTIONS.has(s.title)).flatMap((s) => s.blocks),
      esc,
    ),
    ...legendSection(data),
    '<h2 class="appendix">Appendix</h2>',
    ...provenanceSection(data),
    ...evalsetSection(data),
    ...runsSection(data),
    ...blocksToHtml(demote(evidence.filter((s) => APPENDIX_SECTIONS.has(s.title)).flatMap((s) => s.blocks)), esc),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
