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
  gateResult?: { reason: string; verdict: string };
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

  it('a judge over-grading the documents only fts5 ranks (gold+judged): the plain delta is biased, PPI covers the gold delta', async () => {
    const example = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
    const queries = readFileSync(join(example, 'queries.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; text: string; qrels: Record<string, number> });
    const corpus = new Map(
      readFileSync(join(example, 'corpus.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; text: string; title?: string })
        .map((d) => [d.text, d.id] as const),
    );
    const idOfQuery = new Map(queries.map((q) => [q.text, q.id] as const));
    const favoured = new Set<string>();
    // Gold qrels list every graded memory; a hole is not relevant, so the judge's fair grade of one is 0.
    server = await startLoopback((req) => {
      const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
      const q = idOfQuery.get(/Query: (.*)\n/.exec(prompt)![1]!);
      const d = corpus.get(/Passage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)![1]!);
      const grade = favoured.has(`${q}\t${d}`) ? 3 : 0;
      return {
        body: {
          object: 'chat.completion',
          model: 'judge-m',
          choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `##final score: ${grade}` } }],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        },
      };
    });
    const base = [
      `evalset: { format: memory, path: ${JSON.stringify(example)} }`,
      'measures: [nDCG@10]',
      'topK: 20',
      'arms:',
      '  - { id: bm25, kind: bm25, params: { preset: lucene } }',
      '  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }',
      'compare: { baseline: bm25, permutations: 200 }',
      'judgments: judgments',
      `judge: { model: judge-m, baseURL: "${server.url}/v1", local: true, depth: 10, concurrency: 8 }`,
      'cache: cache',
      'gate: { candidate: fts5, measure: nDCG@10, judged: ppi }',
    ];
    const dir = await tempFolder('evidence-biased', {
      'gold.yaml': ['name: gold', ...base.filter((l) => !l.startsWith('gate')), 'output: r-gold'].join('\n'),
      'judged.yaml': [
        'name: judged',
        'qrels: gold+judged',
        ...base,
        'output: r-judged',
        'humanLabels: human.qrels',
        'validation: { minQueries: 10, resamples: 200 }',
      ].join('\n'),
    });
    const gold = await runCaptured(['ablate', '--config', 'gold.yaml'], dir);
    expect(gold.code, gold.stderr).toBe(0);
    const goldDir = join(dir, 'r-gold', readdirSync(join(dir, 'r-gold')).find((n) => !n.startsWith('.'))!);
    const top = (run: string) => {
      const by = new Map<string, string[]>();
      for (const line of readFileSync(join(goldDir, 'runs', `${run}.trec`), 'utf8')
        .trim()
        .split('\n')) {
        const [q, , d, rank] = line.split(/\s+/);
        if (Number(rank) <= 10) by.set(q!, [...(by.get(q!) ?? []), d!]);
      }
      return by;
    };
    const [bm25, fts5] = [top('bm25'), top('fts5')];
    for (const [q, docs] of fts5) for (const d of docs) if (!bm25.get(q)?.includes(d)) favoured.add(`${q}\t${d}`);
    const goldDelta = report(join(dir, 'r-gold')).json.comparisons.find((c) => c.stratum === 'all' && c.system === 'fts5')!.delta;

    const judged = await runCaptured(['judge', '--config', 'gold.yaml'], dir);
    expect(judged.code, judged.stderr).toBe(0);
    const records = readFileSync(join(dir, 'judgments', 'judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { queryId: string; docId: string; status: string });
    const ids = [...new Set(records.map((r) => r.queryId))];
    const labelled = new Set(ids.filter((_, i) => i % 2 === 0));
    // The human grades every judged pair (a gold hole) 0: the truth of the example's qrels.
    const lines = records.filter((r) => r.status === 'judged' && labelled.has(r.queryId)).map((r) => `${r.queryId} 0 ${r.docId} 0`);
    writeFileSync(join(dir, 'human.qrels'), `${lines.join('\n')}\n`);
    const run = await runCaptured(['ablate', '--config', 'judged.yaml'], dir);
    expect(run.code, run.stderr).toBe(0);
    const { json } = report(join(dir, 'r-judged'));
    const row = json.ppi!.find((r) => r.stratum === 'all' && r.system === 'fts5')! as { plainDelta: number; ppi?: { estimate: number; ci: [number, number] } };
    expect(row.plainDelta).toBeGreaterThan(goldDelta + 0.05);
    expect(row.ppi!.ci[0]).toBeLessThan(goldDelta);
    expect(row.ppi!.ci[1]).toBeGreaterThan(goldDelta);
    expect(json.gateResult!.reason).toContain('PPI-corrected delta');
    // Seen here: gold delta -0.0010, judge-based +0.3403, PPI -0.0034 [-0.0298, +0.0230]; the PPI gate does not ADOPT.
    expect(json.gateResult!.verdict).not.toBe('ADOPT');
  });
});
