import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentTokens } from '../../evalset/adapters/overlap.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { PROJECT_ROOT } from '../testing/shared.js';

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The judge: grade = content tokens the memory shares with the query, at most 3. */
function overlapJudge(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  const query = contentTokens(/Query: (.*)\n/.exec(prompt)![1]!);
  const passage = contentTokens(/Passage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)![1]!);
  const grade = Math.min(3, [...query].filter((t) => passage.has(t)).length);
  return {
    body: {
      object: 'chat.completion',
      model: 'judge-m',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `##final score: ${grade}` } }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    },
  };
}

interface Json {
  comparisons: { stratum: string; measure: string; baseline: string; system: string; delta: number }[];
  ppi?: { stratum: string; measure: string; baseline: string; system: string; plainDelta: number; ppi?: { n: number; N: number } }[];
  validation?: { labelledQueries: number; incompleteQueries: number; pass: boolean; tau?: { value: number } };
  warnings: { code: string; severity: string }[];
  gateResult?: { reason: string };
}

function report(out: string): { json: Json; md: string } {
  const dir = join(out, readdirSync(out).find((n) => !n.startsWith('.'))!);
  return { json: JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Json, md: readFileSync(join(dir, 'report.md'), 'utf8') };
}

describe('human labels in an ablation on the bundled example (judged qrels)', () => {
  it('PPI rows beside every comparison, the validation section, the PPI gate; without labels a serious warning', async () => {
    server = await startLoopback(overlapJudge);
    const example = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
    const base = [
      'qrels: judged',
      `evalset: { format: memory, path: ${JSON.stringify(example)} }`,
      'measures: [nDCG@10]',
      'topK: 20',
      'arms:',
      '  - { id: bm25, kind: bm25, params: { preset: lucene } }',
      '  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }',
      '  - { id: plain, kind: sqlite-fts5, params: { tokenizer: unicode61 } }',
      'compare: { baseline: bm25, permutations: 200 }',
      'judgments: judgments',
      `judge: { model: judge-m, baseURL: "${server.url}/v1", local: true, depth: 10, concurrency: 8 }`,
      'cache: cache',
    ];
    const dir = await tempFolder('evidence-ablate', {
      'bare.yaml': ['name: bare', ...base, 'output: r-bare', 'gate: { candidate: fts5, measure: nDCG@10 }'].join('\n'),
      'labelled.yaml': [
        'name: labelled',
        ...base,
        'output: r-labelled',
        'humanLabels: human.qrels',
        'validation: { minQueries: 10, resamples: 200 }',
        'gate: { candidate: fts5, measure: nDCG@10, judged: ppi }',
      ].join('\n'),
    });
    const judge = await runCaptured(['judge', '--config', 'bare.yaml'], dir);
    expect(judge.code, judge.stderr).toBe(0);
    // A labeller who grades like the judge, one grade lower on grade-3 pairs, over the first 60% of the queries.
    const records = readFileSync(join(dir, 'judgments', 'judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { queryId: string; docId: string; status: string; grade: number });
    const queries = [...new Set(records.map((r) => r.queryId))];
    const labelled = new Set(queries.filter((_, i) => i % 5 < 3));
    const lines = records
      .filter((r) => r.status === 'judged' && labelled.has(r.queryId))
      .map((r) => `${r.queryId} 0 ${r.docId} ${r.grade === 3 ? 2 : r.grade}`);
    writeFileSync(join(dir, 'human.qrels'), `${lines.join('\n')}\n`);

    const bare = await runCaptured(['ablate', '--config', 'bare.yaml'], dir);
    expect(bare.code, bare.stderr).toBe(0);
    const b = report(join(dir, 'r-bare'));
    expect(b.json.warnings.find((w) => w.code === 'judge-unvalidated')?.severity).toBe('serious');
    expect(b.md).toContain('Judge validation: none');

    const run = await runCaptured(['ablate', '--config', 'labelled.yaml'], dir);
    expect(run.code, run.stderr).toBe(0);
    const { json, md } = report(join(dir, 'r-labelled'));
    expect(json.ppi).toHaveLength(json.comparisons.length);
    for (const c of json.comparisons) {
      const row = json.ppi!.find((r) => r.stratum === c.stratum && r.system === c.system && r.baseline === c.baseline && r.measure === c.measure);
      expect(row!.plainDelta).toBeCloseTo(c.delta, 12);
    }
    const overall = json.ppi!.find((r) => r.stratum === 'all' && r.system === 'fts5')!;
    expect(overall.ppi!.n + overall.ppi!.N).toBe(106);
    expect(json.validation!.labelledQueries).toBe(labelled.size);
    expect(json.validation!.incompleteQueries).toBe(0);
    expect(json.gateResult!.reason).toContain('PPI-corrected delta');
    expect(md).toContain('| stratum | n | delta (judge) | CI (judge) | delta (PPI) | CI (PPI) | PPI level | human-labelled |');
    expect(md).toContain('## Validation');
    expect(md).toMatch(/(PASS|FAIL): the judge against \d+ human-labelled queries/);
  });
});
