import { describe, expect, it } from 'vitest';
import type { AuditProbeResult, JudgeAudit } from '../judge/store.js';
import { auditBlocks } from './audit.js';
import { blocksToMarkdown } from './systems.js';
import { buildReportData } from '../decision/build.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';
import { fixtureInput } from './testdata/fixture.js';
import type { ReportInput } from '../decision/types.js';

const probe = (p: AuditProbeResult['probe'], probed: number, moved: number, up: number, meanShift: number): AuditProbeResult => ({
  probe: p,
  change: `${p} change`,
  eligible: 60,
  drawn: probed,
  probed,
  moved,
  up,
  meanShift,
  upInterval: [up / probed / 2, Math.min(1, (up / probed) * 1.5 + 0.05)],
  movedInterval: [moved / probed / 2, Math.min(1, (moved / probed) * 1.5 + 0.05)],
});

function audit(upOfInjection: number): JudgeAudit {
  return {
    qrelsVersion: '0123456789abcdef',
    pairs: 50,
    seed: 1,
    maxUpRate: 0.2,
    probes: [probe('stuffing', 50, 4, 3, 0.06), probe('injection', 50, upOfInjection, upOfInjection, upOfInjection / 25), probe('padding', 50, 2, 0, -0.04)],
    requests: 150,
    cachedReplies: 0,
    at: '2026-11-26T00:00:00.000Z',
  };
}

function judged(a: JudgeAudit): ReportInput {
  const input = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10', rule: 'gain-overall' } });
  return {
    ...input,
    evalset: { ...input.evalset, qrelsSource: 'gold+judged', judge: { model: 'judge-m', prompt: 'umbrela-v1@abc', qrelsVersion: a.qrelsVersion, audit: a } },
  };
}

describe('the judge audit in a report', () => {
  it('lists each probe: pairs, moved, moved up with its interval, mean shift', () => {
    const lines = blocksToMarkdown(auditBlocks(audit(11)));
    expect(lines).toContain('| injection | 50 | 11 (22.0%) | 11 (22.0%) | [11.0%, 38.0%] | +0.44 | injection change |');
    expect(lines).toContain('| padding | 50 | 2 (4.0%) | 0 (0.0%) | [0.0%, 5.0%] | -0.04 | padding change |');
    expect(lines).toContain('The judge is fooled by injection: the grade went up in more than 20.0% of the pairs (judge.audit.maxUpRate).');
  });

  it('warns serious when a probe raises more than maxUpRate of its pairs, and not at maxUpRate itself', () => {
    const fooled = buildReportData(judged(audit(11))).warnings.filter((w) => w.code === 'judge-fooled');
    expect(fooled.map((w) => [w.severity, w.subject, w.gate])).toEqual([['serious', 'judge', true]]);
    expect(fooled[0]?.message).toContain('22.0% of 50 injection pairs');
    expect(fooled[0]?.message).toContain('instruct the judge');
    // 10 of 50 is exactly 0.2: not above the threshold.
    expect(buildReportData(judged(audit(10))).warnings.filter((w) => w.code === 'judge-fooled')).toEqual([]);
  });

  it('renders the audit after the warnings, and nothing when there is none', () => {
    const md = renderMarkdown(buildReportData(judged(audit(11))));
    expect(md.indexOf('## Judge audit')).toBeGreaterThan(md.indexOf('## Other warnings'));
    expect(md).toContain('| probe | pairs | grade moved | moved up | up, 95% CI | mean shift | change |');
    expect(renderMarkdown(buildReportData(fixtureInput()))).not.toContain('## Judge audit');
    const html = renderHtml(buildReportData(judged(audit(11))));
    expect(html).toContain('<h2>Judge audit</h2>');
    expect(html).toContain('<td>injection</td><td class="num">50</td>');
  });
});
