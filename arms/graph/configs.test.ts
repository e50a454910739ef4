import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli/main.js';
import { memoryLogger } from '../../harness/log.js';
import { describeShared, PROJECT_ROOT } from '../../harness/testing/shared.js';
import { tempDir } from '../../harness/testing/temp.js';

// The two graph configs end to end: every graph system beside BM25 per stratum, alone and fused, with the
// Graph systems block (seed coverage per stratum) in the report and the graph stats in the manifest.
async function ablate(config: string): Promise<{ out: string; md: string; manifest: { systems?: unknown } & Record<string, unknown> }> {
  const work = tempDir('harness-graph-config');
  let out = '';
  const code = await runCli(['ablate', '--config', config, '--output', join(work, 'reports'), '--cache', join(work, 'cache')], {
    out: (t) => void (out += t),
    log: memoryLogger(),
    env: {},
    cwd: PROJECT_ROOT,
  });
  expect(code, out).toBe(0);
  const [name] = readdirSync(join(work, 'reports'));
  const dir = join(work, 'reports', name as string);
  return { out, md: readFileSync(join(dir, 'report.md'), 'utf8'), manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) };
}

/** The Graph systems table's row of `system`, as cells. */
/**
 * One row of the Graph systems table, its cells in column order. A table too wide for a code host is split
 * into parts that each repeat the system column (report/md-table.ts): the parts' cells are joined back here.
 */
function graphRow(md: string, first: string): string[] {
  const section = md.slice(md.indexOf('## Graph systems'));
  const table = section.slice(0, section.search(/\n## (?!Graph)/) >>> 0);
  const lines = table.split('\n').filter((l) => l.startsWith(`| ${first} |`));
  expect(lines.length, `no Graph systems row for ${first}`).toBeGreaterThan(0);
  const cells = (l: string) =>
    l
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
  return lines.flatMap((l, i) => (i === 0 ? cells(l) : cells(l).slice(1)));
}

describe('configs/example-graph.yaml', () => {
  it('runs every graph system alone and fused beside BM25, with seed coverage per stratum', async () => {
    const { out, md, manifest } = await ablate('configs/example-graph.yaml');
    for (const id of ['bm25', 'bfs', 'lane', 'ppr', 'ppr-memory', 'ppr-bm25', 'rrf-bm25-ppr', 'rrf-bm25-ppr-bm25', 'rrf-bm25-lane', 'rrf-bm25-bfs'])
      expect(out).toMatch(new RegExp(`\\n  ${id.replace(/[.+]/g, '\\$&')} +0\\.\\d{4}`));
    // Pinned from the first measured run: the concept graph, its seeding and PPR are deterministic.
    expect(out).toMatch(/\n {2}ppr-bm25 +0\.5788 +0\.5774/);
    expect(graphRow(md, 'system').slice(5)).toEqual(['seed coverage', 'exact', 'paraphrase', 'multi-hop', 'PPR iterations', 'PPR ms']);
    const ppr = graphRow(md, 'ppr');
    expect(ppr[1]).toBe('graph-ppr');
    // 83 of 106 queries have a concept of the graph: 36/36 exact, 13/36 paraphrase, 34/34 multi-hop.
    expect(ppr.slice(5, 9)).toEqual([`${Math.round((100 * 83) / 106)}%`, '100%', `**${Math.round((100 * 13) / 36)}%**`, '100%']);
    // BM25's top documents seed most of the queries the query's concepts leave unseeded.
    expect(Number.parseInt(graphRow(md, 'ppr-bm25')[5] as string, 10)).toBeGreaterThan(90);
    expect(JSON.stringify(manifest)).toContain('"seededQueries.multi-hop"');
  });
});

describeShared('configs/locomo-graph.yaml', ['data/locomo/locomo10.json'], () => {
  it('runs the graph systems over LoCoMo turns per conversation, per stratum', async () => {
    const { out, md } = await ablate('configs/locomo-graph.yaml');
    expect(out).toContain('locomo-graph: 1536 queries, 10 system(s)');
    for (const s of ['temporal', 'open-domain', 'multi-hop', 'exact', 'paraphrase']) expect(md).toContain(`| ${s} |`);
    const ppr = graphRow(md, 'ppr');
    // One graph per conversation: ten scopes' nodes summed.
    expect(Number(ppr[2])).toBeGreaterThan(5882);
    expect(ppr[5]).toMatch(/^\d+%$/);
  });
});
