import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import type { ReportData } from '../decision/types.js';
import { describeShared, PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

const RECIPES = ['v1', 'memory-mcp', 'garbanzo', 'worlddb'] as const;

/** The Evidence table rows of an ADR (lines starting with `| `), header excluded. */
function evidenceRows(markdown: string): string[] {
  const evidence = markdown.slice(markdown.indexOf('## Evidence'));
  return evidence.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| stratum') && !l.startsWith('| ---'));
}

describeShared('configs/recipes-locomo.yaml: four recipes and plain BM25 on LoCoMo turns', ['data/locomo/locomo10.json'], () => {
  it('runs offline end to end: one row per recipe and stratum with CIs and corrected p against BM25, deviations labelled, ADR 0026 quoting the report', async () => {
    const work = tempDir('harness-recipes');
    const cli = async (args: string[]) => {
      let out = '';
      const code = await runCli(args, { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: PROJECT_ROOT });
      return { code, out };
    };
    const ran = await cli(['ablate', '--config', 'configs/recipes-locomo.yaml', '--output', join(work, 'reports'), '--cache', join(work, 'cache')]);
    expect(ran.code, ran.out).toBe(0);
    const [folder] = readdirSync(join(work, 'reports')).filter((f) => f.startsWith('recipes-locomo-'));
    const dir = join(work, 'reports', folder as string);
    const data = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as ReportData;
    expect(data.baseline).toBe('bm25');
    // LoCoMo's five strata and the pooled row (ADR 0007).
    expect(data.strata.map((s) => s.id).sort()).toEqual(['all', 'exact', 'multi-hop', 'open-domain', 'paraphrase', 'temporal']);
    for (const recipe of RECIPES) {
      const run = data.runs.find((r) => r.id === recipe);
      expect(run?.substitute, recipe).toBeTruthy();
      for (const stratum of data.strata) {
        const c = data.comparisons.find((x) => x.system === recipe && x.baseline === 'bm25' && x.measure === 'nDCG@10' && x.stratum === stratum.id);
        expect(c, `${recipe} ${stratum.id}`).toBeDefined();
        expect(c!.pAdjusted).not.toBeNull();
        expect(c!.ci[0] === null || c!.ci[0] <= c!.delta).toBe(true);
      }
    }
    expect(data.runs.find((r) => r.id === 'v1')?.substitute).toMatch(/no LLM configured/);
    // Every recipe's row names its deviations from its source, of both kinds, its stages' included (issue 31).
    for (const recipe of RECIPES) {
      const devs = data.runs.find((r) => r.id === recipe)?.deviations ?? [];
      expect(new Set(devs.map((d) => d.kind)), recipe).toEqual(new Set(['substitute', 'assumption']));
    }
    expect(data.runs.find((r) => r.id === 'v1')?.deviations?.map((d) => d.stage)).toEqual(expect.arrayContaining(['extraction', 'rerank', 'embedding']));
    // Every deviation the config declares reaches some run of the report.
    const declared = [...readFileSync(join(PROJECT_ROOT, 'configs/recipes-locomo.yaml'), 'utf8').matchAll(/text: "([^"]+)"/g)].map((m) => m[1]);
    const reported = new Set(data.runs.flatMap((r) => (r.deviations ?? []).map((d) => d.text)));
    expect(declared.filter((t) => !reported.has(t as string))).toEqual([]);
    // garbanzo's choices as a grid group: each point carries exactly the choices it makes.
    const choice = (id: string) => new Set((data.runs.find((r) => r.id === id)?.deviations ?? []).map((d) => d.stage));
    expect(choice('garbanzo-choices.recency=0.2.messageHeader=false')).toEqual(choice('garbanzo'));
    expect(choice('garbanzo-choices.recency=0.messageHeader=true')).toContain('messageHeader');
    expect(choice('garbanzo-choices.recency=0.messageHeader=true')).not.toContain('recency.queryTime');
    expect(choice('garbanzo')).not.toContain('messageHeader');
    expect(data.runs.filter((r) => r.group === 'garbanzo-choices')).toHaveLength(4);
    expect(data.runs.filter((r) => r.group === 'worlddb-choices')).toHaveLength(4);
    expect(data.gateResult?.config.candidate).toBe('memory-mcp');
    // The committed ADR quotes exactly what `harness adr` drafts from this report.
    const adrDir = join(work, 'adr');
    const drafted = await cli(['adr', '--report', dir, '--title', 'Reference recipes on LoCoMo', '--adr-dir', adrDir, '--date', '2026-11-23']);
    expect(drafted.code, drafted.out).toBe(0);
    const [draft] = readdirSync(adrDir);
    const committed = readFileSync(join(PROJECT_ROOT, 'docs/adr/0026-reference-recipes-on-locomo.md'), 'utf8');
    const rows = evidenceRows(readFileSync(join(adrDir, draft as string), 'utf8'));
    expect(rows.length).toBeGreaterThan(0);
    expect(evidenceRows(committed)).toEqual(rows);
    // Its table of every recipe against BM25 quotes report.json with the same rounding.
    const fmt = (v: number | null) => (v === null ? 'unbounded' : `${v >= 0 ? '+' : ''}${v.toFixed(4)}`);
    const recipeRows = [...RECIPES, 'memory-mcp-cc', 'worlddb-metaphone', ...data.runs.filter((r) => r.group?.endsWith('-choices')).map((r) => r.id)];
    for (const recipe of recipeRows)
      for (const id of ['all']) {
        const c = data.comparisons.find((x) => x.system === recipe && x.baseline === 'bm25' && x.measure === 'nDCG@10' && x.stratum === id)!;
        const delta = c.significant ? `**${fmt(c.delta)}**` : fmt(c.delta);
        const row = `| ${recipe} | ${id} | ${c.n} | ${c.baselineMean.toFixed(4)} | ${c.systemMean.toFixed(4)} | ${delta} | [${fmt(c.ci[0])}, ${fmt(c.ci[1])}] | ${c.pAdjusted?.toFixed(4)} | ${c.wins}/${c.ties}/${c.losses} |`;
        expect(committed.split('\n'), row).toContain(row);
      }
  }, 1_200_000);

  it("configs/recipes-garbanzo-locomo.yaml: each of garbanzo's choices against its faithful form, per session, with intervals", async () => {
    const work = tempDir('harness-garbanzo');
    let out = '';
    const code = await runCli(
      ['ablate', '--config', 'configs/recipes-garbanzo-locomo.yaml', '--output', join(work, 'reports'), '--cache', join(work, 'cache')],
      { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: PROJECT_ROOT },
    );
    expect(code, out).toBe(0);
    const [folder] = readdirSync(join(work, 'reports'));
    const data = JSON.parse(readFileSync(join(work, 'reports', folder as string, 'report.json'), 'utf8')) as ReportData;
    expect(data.baseline).toBe('garbanzo');
    const variants = data.runs.filter((r) => r.group === 'garbanzo-choices').map((r) => r.id);
    expect(variants).toHaveLength(4);
    for (const id of variants) {
      const c = data.comparisons.find((x) => x.system === id && x.baseline === 'garbanzo' && x.measure === 'nDCG@10' && x.stratum === 'all');
      expect(c, id).toBeDefined();
      expect(c!.pAdjusted).not.toBeNull();
    }
    // The faithful point of the grid is the faithful form itself: the same run, a difference of 0.
    const same = data.comparisons.find(
      (x) => x.system === 'garbanzo-choices.recency=0.2.messageHeader=false' && x.measure === 'nDCG@10' && x.stratum === 'all',
    );
    expect(same?.delta).toBe(0);
    expect(data.runs.find((r) => r.id === 'garbanzo')?.deviations?.some((d) => d.stage === 'unit')).toBe(false);
  }, 1_200_000);
});
