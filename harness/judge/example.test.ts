import { readFileSync, readdirSync } from 'node:fs';
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

/** A judge for the bundled example: 2 when the memory shares two content tokens with the query, 1 for one, else 0. */
function overlapJudge(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  const query = contentTokens(/Query: (.*)\n/.exec(prompt)![1]!);
  const passage = contentTokens(/Passage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)![1]!);
  const shared = [...query].filter((t) => passage.has(t)).length;
  return {
    body: {
      object: 'chat.completion',
      model: 'judge-m',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `##final score: ${Math.min(shared, 2)}` } }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    },
  };
}

interface ReportJson {
  summary: { run: string; stratum: string; measure: string; mean: number }[];
  warnings: { code: string; subject: string }[];
  evalset: { qrelsSource: string; judge?: { model: string; qrelsVersion?: string } };
}

function readReport(out: string): { json: ReportJson; md: string } {
  const dir = join(out, readdirSync(out).find((n) => !n.startsWith('.'))!);
  return { json: JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as ReportJson, md: readFileSync(join(dir, 'report.md'), 'utf8') };
}

const judged10 = (r: ReportJson, run: string) => r.summary.find((s) => s.run === run && s.stratum === 'all' && s.measure === 'Judged@10')!.mean;

describe('gold+judged qrels on the bundled example', () => {
  it('fill the judged depth: Judged@10 rises to 1 and the holes warning goes', async () => {
    server = await startLoopback(overlapJudge);
    const example = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
    const base = [
      // Declared pooled: the store stands in for a private one whose unlisted memories were never judged.
      `evalset: { format: memory, path: ${JSON.stringify(example)}, qrels: pooled }`,
      'measures: [nDCG@10, Judged@10]',
      'topK: 20',
      'arms:',
      '  - { id: bm25, kind: bm25, params: { preset: lucene } }',
      '  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }',
      '  - { id: fake, kind: fake, params: { seed: 1 } }',
      'compare: { permutations: 200 }',
      'judgments: judgments',
      `judge: { model: judge-m, baseURL: "${server.url}/v1", local: true, depth: 10, concurrency: 8 }`,
      'output: reports-gold',
      'cache: cache',
    ];
    const dir = await tempFolder('judge-example', {
      'gold.yaml': ['name: gold', ...base].join('\n'),
      'judged.yaml': ['name: judged', 'qrels: gold+judged', ...base].join('\n').replace('reports-gold', 'reports-judged'),
    });
    const gold = await runCaptured(['ablate', '--config', 'gold.yaml'], dir);
    expect(gold.code, gold.stderr).toBe(0);
    const before = readReport(join(dir, 'reports-gold')).json;
    expect(before.warnings.map((w) => w.code)).toContain('judged-holes');

    const judge = await runCaptured(['judge', '--config', 'gold.yaml'], dir);
    expect(judge.code, judge.stderr + judge.log.join('\n')).toBe(0);
    expect(judge.out).toMatch(/parse failures: 0; sensitive, not sent: 0/);

    const after = await runCaptured(['ablate', '--config', 'judged.yaml'], dir);
    expect(after.code, after.stderr).toBe(0);
    const { json, md } = readReport(join(dir, 'reports-judged'));
    // Every document any run ranks in its top 10 was pooled and judged (or graded by gold): Judged@10 is the share
    // of the 10 ranks a run fills at all. fake always fills them (1.0); bm25 returns fewer than 10 documents for
    // some paraphrase queries and none for a few, and an empty rank counts as unjudged (trec_eval's P@k
    // denominator), so its Judged@10 is exactly its filled share.
    const runDir = join(dir, 'reports-judged', readdirSync(join(dir, 'reports-judged')).find((n) => !n.startsWith('.'))!, 'runs');
    const filled = (run: string) => {
      const counts = new Map<string, number>();
      for (const line of readFileSync(join(runDir, `${run}.trec`), 'utf8')
        .trim()
        .split('\n')) {
        const q = line.split(' ')[0]!;
        counts.set(q, (counts.get(q) ?? 0) + 1);
      }
      return [...counts.values()].reduce((s, c) => s + Math.min(c, 10) / 10, 0) / 106;
    };
    for (const run of ['bm25', 'fts5', 'fake']) {
      expect(judged10(json, run)).toBeGreaterThan(judged10(before, run));
      expect(judged10(json, run)).toBeCloseTo(filled(run), 12);
    }
    expect(judged10(json, 'fake')).toBe(1);
    const holes = (r: ReportJson) => r.warnings.find((w) => w.code === 'judged-holes')?.subject ?? '';
    expect(holes(before)).toBe('bm25, fts5, fake');
    // Judged to depth 10 over these three runs with no pair left ungraded: bm25's shortfall is empty ranks, so
    // no run is warned about holes at Judged@10.
    expect(holes(json)).toBe('');
    const version = JSON.parse(readFileSync(join(dir, 'judgments', 'manifest.json'), 'utf8')).qrelsVersion as string;
    expect(json.evalset).toMatchObject({
      qrelsSource: 'gold+judged',
      judge: { model: 'judge-m', qrelsVersion: version, depth: 10, pooled: ['bm25', 'fts5', 'fake'], holes: 0 },
    });
    expect(md).toContain(`gold+judged (judge judge-m, prompt umbrela-v1@`);
    expect(md).toContain(`qrels version ${version}`);
  });
});
