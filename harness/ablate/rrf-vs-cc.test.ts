import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import type { ReportData } from '../decision/types.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

// The study users run first, exactly as shipped: configs/rrf-vs-cc.yaml over the bundled example, offline.
describe('configs/rrf-vs-cc.yaml', () => {
  it('lists every expanded system in --dry-run, reports them all with tuning and fusion diagnostics, and a rerun computes nothing', async () => {
    const work = tempDir('harness-rrf-vs-cc');
    const cli = async (extra: string[]) => {
      let out = '';
      const log = memoryLogger();
      const code = await runCli(['ablate', '--config', 'configs/rrf-vs-cc.yaml', '--output', join(work, 'reports'), '--cache', join(work, 'cache'), ...extra], {
        out: (t) => void (out += t),
        log,
        env: {},
        cwd: PROJECT_ROOT,
      });
      return { code, out, log: log.lines };
    };
    // 3 arms; rrf: 4 subsets of two or three arms x 4 constants = 16; two cc grids of 11 alphas = 22.
    const subsets = ['bm25+bm25-nostem', 'bm25+fts5', 'bm25-nostem+fts5', 'bm25+bm25-nostem+fts5'];
    const alphas = Array.from({ length: 11 }, (_, i) => String(Number((i / 10).toFixed(1))));
    const ids = [
      'bm25',
      'bm25-nostem',
      'fts5',
      ...subsets.flatMap((s) => [10, 30, 60, 100].map((k) => `rrf.${s}.rrfK=${k}`)),
      ...alphas.map((a) => `cc-tm2c2.alpha=${a}`),
      ...alphas.map((a) => `cc-minmax.alpha=${a}`),
    ];
    const dry = await cli(['--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('systems: 41 (3 retrieve, 38 fuse) + 3 tuned');
    for (const id of ids) expect(dry.out, id).toMatch(new RegExp(`\\n    ${id.replace(/[.+]/g, '\\$&')} \\[`));

    const first = await cli([]);
    expect(first.code).toBe(0);
    expect(first.out).toContain('system runs from cache: 0 hit(s), 41 computed');
    const [name] = readdirSync(join(work, 'reports'));
    const dir = join(work, 'reports', name!);
    const data = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as ReportData;
    expect(data.runs.map((r) => r.id)).toEqual([...ids, 'rrf.tuned', 'cc-tm2c2.tuned', 'cc-minmax.tuned']);
    // Every system has per-stratum means on every measure.
    for (const id of [...ids, 'rrf.tuned']) {
      for (const stratum of ['exact', 'paraphrase', 'multi-hop', 'all']) {
        for (const m of ['nDCG@10', 'R@10', 'RR'])
          expect(
            data.summary.some((x) => x.run === id && x.stratum === stratum && x.measure === m),
            `${id} ${stratum} ${m}`,
          ).toBe(true);
      }
    }
    // Every fusion reports each input's contribution; the weight-0 ends of the cc grids are flagged, nothing else.
    const fused = data.runs.filter((r) => r.node === 'fuse');
    expect(fused).toHaveLength(38);
    for (const r of fused)
      expect(
        r.diagnostics?.inputs.map((d) => d.input),
        r.id,
      ).toEqual(r.inputs);
    const barred = fused.flatMap((r) => r.diagnostics!.inputs.filter((d) => !d.reachable).map((d) => `${r.id} <- ${d.input}`));
    expect(barred).toEqual(['cc-tm2c2.alpha=0 <- bm25', 'cc-tm2c2.alpha=1 <- fts5', 'cc-minmax.alpha=0 <- bm25', 'cc-minmax.alpha=1 <- fts5']);
    // The tuned systems: 5 folds each, every pick a member of its grid, the oracle beside it.
    for (const t of data.runs.filter((r) => r.tuning)) {
      expect(t.tuning!.choices).toHaveLength(5);
      for (const c of t.tuning!.choices) expect(c.member.startsWith(`${t.group}.`)).toBe(true);
      expect(t.tuning!.oracle.member.startsWith(`${t.group}.`)).toBe(true);
    }
    expect(data.gateResult?.config.candidate).toBe('rrf.tuned');
    const md = readFileSync(join(dir, 'report.md'), 'utf8');
    for (const h of ['## Best systems per stratum (nDCG@10)', '## Grids', '## Tuning', '## Fusion inputs: contribution and reach (top 10)'])
      expect(md).toContain(h);
    // The question's second half is tested (issue 41): tuned RRF against each tuned CC, a family of its own, answered.
    const csv = readFileSync(join(dir, 'comparisons.csv'), 'utf8').split('\n');
    for (const cc of ['cc-tm2c2.tuned', 'cc-minmax.tuned']) {
      const rows = csv.filter((l) => l.includes(`,nDCG@10,${cc},rrf.tuned,`));
      expect(rows.map((l) => l.split(',')[0]).sort(), cc).toEqual(['all', 'exact', 'multi-hop', 'paraphrase']);
      const answer = data.answers.questions.find((q) => q.system === cc);
      expect(answer?.sentence).toMatch(/(is better than|neither .* is significantly better) on nDCG@10 overall: .*CI \[/);
      expect(md).toContain(answer?.sentence as string);
    }
    // The gate's sentence does not call the confirmatory questions exploratory, and their answers stand in the Gate section.
    const gate = md.slice(md.indexOf('## Gate'), md.indexOf('### Warnings on the gate'));
    expect(gate).toContain('(rrf-vs-cc-tm2c2, confirmatory; rrf-vs-cc-minmax, confirmatory) are families of their own');
    expect(gate).not.toContain('every other comparison in this report is exploratory');
    expect(gate).toContain('- Question rrf-vs-cc-tm2c2: ');
    expect(data.gateResult?.config.candidate).toBe('rrf.tuned');

    const second = await cli([]);
    expect(second.code).toBe(0);
    expect(second.out).toContain('system runs from cache: 41 hit(s), 0 computed');
  }, 240_000);
});
