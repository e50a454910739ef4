import { levelNote } from './decision.js';
import { fmtCompCI, fmtDelta, fmtMean, fmtP, fmtWtl } from '../decision/format.js';
import { roleLabel } from '../decision/select.js';
import type { Comparison, ReportData } from '../decision/types.js';

/** How many of the largest gains and of the largest losses per stratum Markdown lists. */
export const EXTREMES = 5;

/**
 * The `few` exploratory comparisons with the largest deltas and the `few` with the smallest (most negative) in
 * one stratum on one measure, ties in report order, and how many there are in all. Confirmatory rows are left
 * out: the gate section shows them.
 */
export function extremes(
  data: Pick<ReportData, 'comparisons'>,
  stratum: string,
  measure: string,
  few: number,
): { top: Comparison[]; bottom: Comparison[]; total: number } {
  const rows = data.comparisons.filter((c) => c.role === 'exploratory' && c.stratum === stratum && c.measure === measure);
  const order = rows.map((c, i) => ({ c, i })).sort((a, b) => b.c.delta - a.c.delta || a.i - b.i);
  if (order.length <= 2 * few) return { top: order.map((x) => x.c), bottom: [], total: rows.length };
  return { top: order.slice(0, few).map((x) => x.c), bottom: order.slice(-few).map((x) => x.c), total: rows.length };
}

/** Grid group of a system, or `` for an arm or a named fusion. */
function groupOf(data: Pick<ReportData, 'runs'>, id: string): string {
  return data.runs.find((r) => r.id === id)?.group ?? '';
}

function options(id: string, label: string, values: readonly string[], esc: (s: string) => string, none = 'all'): string {
  const opts = [`<option value="">${none}</option>`, ...values.map((v) => `<option value="${esc(v)}">${esc(v)}</option>`)];
  return `<label>${label} <select id="${id}">${opts.join('')}</select></label>`;
}

/** A system id that may wrap after its `.` and `+` (grid ids run to 40 characters), not inside a name. */
function breakable(id: string, esc: (s: string) => string): string {
  return esc(id).replace(/([.+])/g, '$1<wbr>');
}

/** One comparison as a row of the exploratory table; its data attributes are what the filters and sorts read. */
function exploreRow(data: ReportData, c: Comparison, i: number, reference: number | undefined, esc: (s: string) => string): string {
  const attrs = [
    ['i', String(i)],
    ['system', c.system],
    ['baseline', c.baseline],
    ['group', groupOf(data, c.system)],
    ['stratum', c.stratum],
    ['measure', c.measure],
    ['delta', String(c.delta)],
    ['p', c.pAdjusted === null ? '' : String(c.pAdjusted)],
    ['sig', c.significant ? '1' : '0'],
  ]
    .map(([k, v]) => ` data-${k}="${esc(v as string)}"`)
    .join('');
  const num = (text: string, cls = '') => `<td class="num${cls ? ` ${cls}` : ''}">${text}</td>`;
  return `<tr${attrs}>${[
    `<td class="id">${breakable(c.system, esc)}</td>`,
    `<td class="id">${breakable(c.baseline, esc)}</td>`,
    `<td>${esc(c.stratum)}</td>`,
    `<td>${esc(c.measure)}</td>`,
    `<td>${roleLabel(c)}</td>`,
    num(fmtMean(c.systemMean)),
    num(fmtMean(c.baselineMean)),
    num(fmtDelta(c.delta), c.significant ? 'sig' : ''),
    `<td class="ci">${esc(fmtCompCI(c))}${esc(levelNote(c, reference))}</td>`,
    num(esc(fmtP(c.pAdjusted))),
    `<td>${c.significant ? 'yes' : ''}</td>`,
    `<td>${fmtWtl(c)}</td>`,
  ].join('')}</tr>`;
}

/** The script behind the exploratory table: filters hide rows, the sort reorders them; no network, no library. */
const EXPLORE_SCRIPT = `(function () {
  var $ = function (id) { return document.getElementById(id); };
  var body = $('explore').tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var ids = ['f-system', 'f-group', 'f-stratum', 'f-measure', 'f-sig', 'f-sort'];
  function key(r, sort) {
    var d = r.dataset;
    if (sort === 'delta-desc') return -Number(d.delta);
    if (sort === 'delta-asc') return Number(d.delta);
    if (sort === 'p') return d.p === '' ? 2 : Number(d.p);
    return Number(d.i);
  }
  function apply() {
    var sys = $('f-system').value, grp = $('f-group').value, st = $('f-stratum').value, me = $('f-measure').value;
    var sig = $('f-sig').checked, sort = $('f-sort').value, shown = 0;
    rows.forEach(function (r) {
      var d = r.dataset;
      var ok = (!sys || d.system === sys || d.baseline === sys) && (!grp || d.group === grp) && (!st || d.stratum === st) && (!me || d.measure === me) && (!sig || d.sig === '1');
      r.hidden = !ok;
      if (ok) shown++;
    });
    rows.slice().sort(function (a, b) { return key(a, sort) - key(b, sort) || Number(a.dataset.i) - Number(b.dataset.i); })
      .forEach(function (r) { body.appendChild(r); });
    $('f-count').textContent = shown + ' of ' + rows.length + ' comparisons shown';
  }
  ids.forEach(function (id) { $(id).addEventListener('change', apply); });
  apply();
})();`;

/**
 * The exploratory comparisons as one HTML table with filters (system, on either side; grid group; stratum;
 * measure; significant only) and a sort (report order, delta, corrected p), in plain inline script. Without
 * script every row shows, in report order.
 */
export function exploreTable(data: ReportData, reference: number | undefined, esc: (s: string) => string): string[] {
  if (data.comparisons.length === 0) return [];
  const systems = [...new Set(data.comparisons.flatMap((c) => [c.system, c.baseline]))];
  const groups = [...new Set(data.runs.flatMap((r) => (r.group === undefined ? [] : [r.group])))];
  const head = ['system', 'baseline', 'stratum', 'measure', 'role', 'system mean', 'baseline mean', 'delta', 'CI', 'p (corrected)', 'sig.', 'W/T/L'];
  const numeric = new Set(['system mean', 'baseline mean', 'delta', 'p (corrected)']);
  return [
    '<div class="filters">',
    options('f-system', 'system', systems, esc),
    ...(groups.length > 0 ? [options('f-group', 'grid group', groups, esc)] : [`<select id="f-group" hidden><option value=""></option></select>`]),
    options(
      'f-stratum',
      'stratum',
      data.strata.map((s) => s.id),
      esc,
    ),
    options('f-measure', 'measure', data.testedMeasures, esc),
    '<label><input type="checkbox" id="f-sig"> significant only</label>',
    '<label>sort <select id="f-sort"><option value="">report order</option><option value="delta-desc">delta, largest first</option><option value="delta-asc">delta, smallest first</option><option value="p">p (corrected), smallest first</option></select></label>',
    `<span id="f-count">${data.comparisons.length} comparisons</span>`,
    '</div>',
    '<div class="explore-wrap">',
    '<table id="explore" class="explore">',
    `<thead><tr>${head.map((h) => `<th${numeric.has(h) ? ' class="num"' : ''}>${h}</th>`).join('')}</tr></thead>`,
    '<tbody>',
    ...data.comparisons.map((c, i) => exploreRow(data, c, i, reference, esc)),
    '</tbody>',
    '</table>',
    '</div>',
    `<script>${EXPLORE_SCRIPT}</script>`,
  ];
}
