import type { Block } from './blocks.js';
import type { ReportData, ReportRun } from '../decision/types.js';

type Deviation = NonNullable<ReportRun['deviations']>[number];

const key = (d: Deviation) => `${d.kind}\t${d.stage}\t${d.text}`;

function counts(ds: readonly Deviation[]): string {
  const n = (k: string) => ds.filter((d) => d.kind === k).length;
  const part = (k: string, c: number) => `${c} ${k}${c === 1 ? '' : 's'}`;
  return [part('substitute', n('substitute')), part('assumption', n('assumption'))].join(', ');
}

/** Per grid group whose points carry different labels: each point with the labels only some points have. */
function gridRows(runs: readonly ReportRun[]): string[][] {
  const groups = new Map<string, ReportRun[]>();
  for (const r of runs) if (r.group !== undefined && r.node !== 'tune') groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  const rows: string[][] = [];
  for (const [group, members] of groups) {
    const all = members.map((m) => new Set((m.deviations ?? []).map(key)));
    const shared = (k: string) => all.every((s) => s.has(k));
    for (const m of members) {
      const own = (m.deviations ?? []).filter((d) => !shared(key(d)));
      if (own.length > 0) rows.push([group, m.id, own.map((d) => `${d.kind}: ${d.stage}: ${d.text}`).join('; ')]);
    }
  }
  return rows;
}

/**
 * The Deviations section: for each system that stands for a published recipe, where it departs from its source
 * (`substitute`: something stands in for what the source specifies; `assumption`: the source is silent), with
 * the stage and the system that declared it; then, per grid group of recipe variants, what differs between
 * its points. Data from the config's `deviations:` entries (docs/recipes/).
 */
export function deviationBlocks(data: Pick<ReportData, 'runs'>): Block[] {
  const labelled = data.runs.filter((r) => (r.deviations?.length ?? 0) > 0);
  if (labelled.length === 0) return [];
  const heads = labelled.filter((r) => r.group === undefined || r.node === 'tune');
  const B: Block[] = [
    { kind: 'heading', level: 2, text: 'Deviations from sources' },
    {
      kind: 'para',
      text: 'Where a recipe departs from the document it reproduces: a substitute stands in for what the source specifies, an assumption fills what it leaves open (fidelity tables: docs/recipes/). A system carries the labels of every stage under it.',
    },
    {
      kind: 'table',
      head: ['system', 'labels', 'kind', 'stage', 'deviation', 'declared by'],
      align: ['l', 'l', 'l', 'l', 'l', 'l'],
      rows: heads.flatMap((r) =>
        (r.deviations ?? []).map((d, i) => [i === 0 ? r.id : '', i === 0 ? counts(r.deviations ?? []) : '', d.kind, d.stage, d.text, d.from]),
      ),
    },
  ];
  const grid = gridRows(data.runs);
  if (grid.length > 0) B.push({ kind: 'table', head: ['group', 'point', 'labels not every point has'], align: ['l', 'l', 'l'], rows: grid });
  return B;
}
