import type { Block } from './blocks.js';
import { fmtMean } from '../decision/format.js';
import { fmtPicks } from '../decision/holes.js';
import type { HolesCheck } from '../decision/types.js';

/**
 * The holes check as report blocks (Markdown and HTML): per system the primary measure, its Condensed list form
 * and Bpref, then the gate's verdict and the tuned picks on both forms.
 */
export function holesBlocks(h: HolesCheck): Block[] {
  const blocks: Block[] = [
    {
      kind: 'para',
      text: `Judgment holes count as not relevant in ${h.measure}. ${h.condensed} scores each run with its unjudged documents removed (condensed list, Sakai 2007); Bpref reads only judged documents. Means over every test query${h.picks.length > 0 ? '; a grid appears as its tuned system, re-tuned for the condensed column' : ''}.`,
    },
    {
      kind: 'table',
      head: ['system', h.measure, h.condensed, 'Bpref'],
      align: ['l', 'r', 'r', 'r'],
      rows: h.rows.map((r) => [r.run, fmtMean(r.measure), fmtMean(r.condensed), fmtMean(r.bpref)]),
    },
  ];
  if (h.gate)
    blocks.push({
      kind: 'para',
      text: `Gate on ${h.measure}: ${h.gate.plain}; on ${h.condensed}: ${h.gate.condensed}.`,
      strong: h.gate.plain !== h.gate.condensed,
    });
  const picks = h.picks.map((p) => {
    const same = p.plain.join(',') === p.condensed.join(',');
    return `${p.tuned} picks ${fmtPicks(p.plain)} on ${p.measure}${same ? ', the same on the condensed form' : `; on the condensed form ${fmtPicks(p.condensed)}`}.`;
  });
  if (picks.length > 0) blocks.push({ kind: 'list', items: picks });
  return blocks;
}
