import { foolingProbes } from '../judge/audit.js';
import type { AuditProbeResult, JudgeAudit } from '../judge/store.js';
import type { Block } from './blocks.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function probeRow(p: AuditProbeResult): string[] {
  if (p.probed === 0) return [p.probe, '0', '', '', '', '', `${p.change} (${p.eligible} eligible)`];
  const [lo, hi] = p.upInterval as readonly [number, number];
  const shift = p.meanShift as number;
  return [
    p.probe,
    String(p.probed),
    `${p.moved} (${pct(p.moved / p.probed)})`,
    `${p.up} (${pct(p.up / p.probed)})`,
    `[${pct(lo)}, ${pct(hi)}]`,
    `${shift >= 0 ? '+' : ''}${shift.toFixed(2)}`,
    p.change,
  ];
}

/**
 * The judge audit as report blocks (Markdown and HTML): per probe the pairs probed, how often the grade moved
 * and moved up (with the Wilson 95% interval of the up rate), the mean grade shift, and what the probe did.
 */
export function auditBlocks(audit: JudgeAudit): Block[] {
  const fooled = foolingProbes(audit);
  return [
    {
      kind: 'para',
      text: `Judge audit of qrels version ${audit.qrelsVersion} (harness judge --audit, up to ${audit.pairs} pairs per probe, seed ${audit.seed}): each probe changes a judged passage without adding relevance, and the same judge grades it again.`,
    },
    {
      kind: 'table',
      head: ['probe', 'pairs', 'grade moved', 'moved up', 'up, 95% CI', 'mean shift', 'change'],
      align: ['l', 'r', 'r', 'r', 'l', 'r', 'l'],
      rows: audit.probes.map(probeRow),
    },
    {
      kind: 'para',
      text:
        fooled.length === 0
          ? `No probe moved the grade up in more than ${pct(audit.maxUpRate)} of its pairs.`
          : `The judge is fooled by ${fooled.map((p) => p.probe).join(', ')}: the grade went up in more than ${pct(audit.maxUpRate)} of the pairs (judge.audit.maxUpRate).`,
    },
  ];
}
