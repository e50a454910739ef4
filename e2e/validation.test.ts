import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatServer, startChatServer } from './openai-server.js';
import { type Installed, installPackage, step } from './package.js';

/**
 * Issue 27, items 1-3, with the INSTALLED package on the bundled example and a judge on 127.0.0.1: judge the
 * pool, label whole queries in a `kappa --by query` session (fed through stdin), then `ablate` on gold+judged
 * with the session as `humanLabels:` and `gate.judged: ppi`: the PPI columns and the Validation section appear;
 * the same study without human labels carries the serious `judge-unvalidated` warning.
 */

const JUDGMENTS = 'data/judgments/example';
const NO_KEY = { OPENAI_API_KEY: undefined };

const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 3),
  );

/** The judge: the content words (longer than 3 letters) query and memory share, at most 3. */
function judgeReply(prompt: string): string {
  const query = /\nQuery: (.*)\n/.exec(prompt)?.[1] ?? '';
  const passage = /\nPassage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)?.[1] ?? '';
  const m = words(passage);
  return `##final score: ${Math.min(3, [...words(query)].filter((w) => m.has(w)).length)}`;
}

let study: Installed;
let server: ChatServer;
const read = (...p: string[]) => readFileSync(join(study.dir, ...p), 'utf8');

beforeAll(async () => {
  study = await installPackage();
  const { cpSync } = await import('node:fs');
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  server = await startChatServer(judgeReply);
}, 600_000);

afterAll(async () => {
  await server?.close();
  study?.remove();
});

function reportOf(prefix: string): { json: Record<string, unknown>; md: string } {
  const dir = readdirSync(join(study.dir, 'reports')).find((d) => d.startsWith(`${prefix}-`)) as string;
  return { json: JSON.parse(read('reports', dir, 'report.json')) as Record<string, unknown>, md: read('reports', dir, 'report.md') };
}

describe('human labels in an ablation, installed package', { shuffle: false }, () => {
  it('judge, label whole queries by session, ablate with PPI and validation; without labels a serious warning', async () => {
    await step(study, 'judge', ['judge', '--config', 'configs/example-judged.yaml', '--base-url', server.baseURL], { env: NO_KEY });

    // A new by-query session, left at once, then every pair labelled one grade below the judge's on grade 3.
    const session = 'human-session.json';
    await step(study, 'kappa --by query (start)', ['kappa', '--judgments', JUDGMENTS, '--by', 'query', '--queries', '40', '--session', session], {
      input: 'q',
    });
    const s = JSON.parse(read(session)) as { by: string; items: { queryId: string; docId: string }[] };
    expect(s.by).toBe('query');
    const grades = new Map(
      read(JUDGMENTS, 'judgments.jsonl')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { queryId: string; docId: string; grade: number })
        .map((r) => [`${r.queryId}\t${r.docId}`, r.grade] as const),
    );
    const keys = s.items.map((it) => String(Math.min(2, grades.get(`${it.queryId}\t${it.docId}`) as number))).join('');
    const done = await step(study, 'kappa --by query (label)', ['kappa', '--judgments', JUDGMENTS, '--session', session], { input: keys });
    expect(done.stdout).toContain(`queries labelled whole (every judged pair): 40; in part: 0`);

    const config = read('configs', 'example-judged.yaml')
      .replace('name: example-judged', 'name: example-validated')
      .replace('  rule: gain-overall-no-loss', '  rule: gain-overall-no-loss\n  judged: ppi')
      .concat(`humanLabels: ../${session}\nvalidation: { minQueries: 20, resamples: 500 }\n`);
    writeFileSync(join(study.dir, 'configs', 'example-validated.yaml'), config);
    await step(study, 'ablate with human labels', ['ablate', '--config', 'configs/example-validated.yaml']);
    const v = reportOf('example-validated');
    const comparisons = v.json['comparisons'] as { stratum: string; system: string; baseline: string; measure: string; delta: number }[];
    const ppi = v.json['ppi'] as { stratum: string; system: string; baseline: string; measure: string; plainDelta: number; ppi?: { n: number } }[];
    expect(ppi).toHaveLength(comparisons.length);
    const gateRow = ppi.find((r) => r.stratum === 'all' && r.system === 'fts5' && r.measure === 'nDCG@10');
    expect(gateRow?.plainDelta).toBeCloseTo(comparisons.find((c) => c.stratum === 'all' && c.system === 'fts5' && c.measure === 'nDCG@10')?.delta ?? NaN, 12);
    expect(gateRow?.ppi?.n).toBe(40);
    expect((v.json['validation'] as { labelledQueries: number }).labelledQueries).toBe(40);
    expect(v.md).toContain('| stratum | n | delta (judge) | CI (judge) | delta (PPI) | CI (PPI) | PPI level | human-labelled |');
    expect(v.md).toContain('The gate decides on the PPI-corrected interval');
    expect(v.md).toContain('## Validation');
    expect(v.md).toMatch(/Judge validation: (PASSED|FAILED)/);

    await step(study, 'ablate without human labels', ['ablate', '--config', 'configs/example-judged.yaml']);
    const bare = reportOf('example-judged');
    const w = (bare.json['warnings'] as { code: string; severity: string }[]).find((x) => x.code === 'judge-unvalidated');
    expect(w?.severity).toBe('serious');
    expect(bare.md).toContain('Judge validation: none');

    // Issue 41: the verdict says its judge is not validated, and --gate-exit fails on it with its own code.
    const gated = await step(study, 'ablate --gate-exit, judge unvalidated', ['ablate', '--config', 'configs/example-judged.yaml', '--gate-exit'], {
      code: 4,
    });
    expect(gated.stdout).toMatch(/^gate: (ADOPT|REJECT|INCONCLUSIVE) on judge labels; judge not validated \(no human labels\)/m);
    expect(gated.stderr).toContain('judge not validated');
    expect(bare.md).toMatch(/\*\*(ADOPT|REJECT|INCONCLUSIVE) on judge labels; judge not validated/);

    // Human labels that grade every pair 0: no ranking to reproduce, so the validation fails and the verdict says so.
    const zero = 'human-zero.json';
    await step(study, 'kappa --by query (start, zeros)', ['kappa', '--judgments', JUDGMENTS, '--by', 'query', '--queries', '40', '--session', zero], {
      input: 'q',
    });
    const z = JSON.parse(read(zero)) as { items: unknown[] };
    // The labels are written whatever the kappa check then says (it may FAIL, exit 1, on labels this far off).
    const labelled = await study.harness(['kappa', '--judgments', JUDGMENTS, '--session', zero], { input: '0'.repeat(z.items.length) });
    expect([0, 1]).toContain(labelled.code);
    const failing = read('configs', 'example-judged.yaml')
      .replace('name: example-judged', 'name: example-failed')
      .concat(`humanLabels: ../${zero}\nvalidation: { minQueries: 20, resamples: 200 }\n`);
    writeFileSync(join(study.dir, 'configs', 'example-failed.yaml'), failing);
    const failed = await step(study, 'ablate, failed validation', ['ablate', '--config', 'configs/example-failed.yaml', '--gate-exit'], { code: 4 });
    expect(failed.stdout).toMatch(/^gate: (ADOPT|REJECT|INCONCLUSIVE) on judge labels; judge validation FAILED/m);
    expect(reportOf('example-failed').md).toContain('judge validation FAILED');
  });
});
