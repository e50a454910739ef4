import { auditBlocks } from './audit.js';
import type { Block } from './blocks.js';
import { holesBlocks } from './holes.js';
import type { ReportData } from '../decision/types.js';

/** A run of blocks under one level-2 heading (its title), as the systems and evidence models emit them. */
export interface Section {
  readonly title: string;
  readonly blocks: readonly Block[];
}

/**
 * Cuts a block list at its level-2 headings, so a renderer can place each section where the report's order
 * wants it (decision, exploratory, appendix) without the section model knowing that order.
 */
export function sections(blocks: readonly Block[]): Section[] {
  const out: { title: string; blocks: Block[] }[] = [];
  for (const b of blocks) {
    if (b.kind === 'heading' && b.level === 2) out.push({ title: b.text, blocks: [b] });
    else if (out.length > 0) out[out.length - 1]?.blocks.push(b);
    else out.push({ title: '', blocks: [b] });
  }
  return out;
}

/** Sections that belong in the appendix: what it cost, not what it found. */
export const APPENDIX_SECTIONS: ReadonlySet<string> = new Set(['Cost']);

/** The blocks one level down (a section moved under the appendix's heading). */
export function demote(blocks: readonly Block[]): Block[] {
  return blocks.map((b) => (b.kind === 'heading' ? { ...b, level: 3 } : b));
}

/**
 * What judged or pooled qrels may have done to the numbers: the judge audit and the holes check, each under its
 * own heading, after the warnings (empty when the report has neither).
 */
export function judgedQrelsBlocks(data: Pick<ReportData, 'evalset' | 'holes'>): Block[] {
  const audit = data.evalset.judge?.audit;
  return [
    ...(audit === undefined ? [] : [{ kind: 'heading', level: 2, text: 'Judge audit' } as const, ...auditBlocks(audit)]),
    ...(data.holes === undefined ? [] : [{ kind: 'heading', level: 2, text: 'Judgment holes' } as const, ...holesBlocks(data.holes)]),
  ];
}
