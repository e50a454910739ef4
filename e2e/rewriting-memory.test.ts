import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Loopback, type LoopbackRequest, startLoopback } from '../harness/testing/loopback.js';
import { type ChatServer, startChatServer } from './openai-server.js';
import { type Installed, installPackage, step } from './package.js';

/**
 * A memory system that rewrites what it stores, as mem0 does (an LLM extracts short "facts" under new ids),
 * measured by the installed `harness` binary through the `http` arm: its results are mapped back to the eval
 * set's memories by text where they can be, the rest judged through an OpenAI-compatible server on 127.0.0.1,
 * and it is scored on the union. The reference is the same keyword retriever over the original memories.
 */

const STOP = new Set(
  'a an the and or but of in on at to for with from by about into as is are was were be been has have had his her their my me i you your it its this that'.split(
    ' ',
  ),
);
const words = (s: string) =>
  s
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOP.has(w));

/**
 * The facts a rewriting store keeps of one memory: its clauses of 3 words or more, one in three as said, one
 * lightly rewritten ("User ..." with Alex as they), one reduced to keywords with words of its own (which no
 * text mapping can trace back).
 */
function extractFacts(text: string, n: number): string[] {
  const clauses = text
    .split(/(?<=[.!?;])\s+/)
    .map((s) => s.replace(/[.;!?]+$/, '').trim())
    .filter((s) => s.split(/\s+/).length >= 3);
  return clauses.map((c, k) => {
    const mode = (n + k) % 3;
    if (mode === 0) return c;
    if (mode === 1) return `User ${c.replace(/\bAlex('s)?\b/g, (_m, s: string | undefined) => (s ? 'their' : 'they'))}`;
    return `Noted fact: ${words(c)
      .filter((w) => w.length > 2)
      .slice(0, 4)
      .join(', ')} (from conversation)`;
  });
}

interface Entry {
  readonly id: string;
  readonly text: string;
  readonly source: string;
}

/** Keyword search: content words shared with the query, ties in storing order; only entries sharing one. */
function keywordSearch(entries: readonly Entry[], query: string, limit: number): { id: string; memory: string; score: number }[] {
  const q = new Set(words(query));
  return entries
    .map((e, i) => ({ e, i, score: new Set(words(e.text).filter((w) => q.has(w))).size }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, limit)
    .map(({ e, score }) => ({ id: e.id, memory: e.text, score }));
}

/** One store per mode: `facts` rewrites each memory into facts under new ids, `plain` keeps it as given. */
class MemoryService {
  readonly scopes = new Map<string, Entry[]>();
  /** Every stored text, fact or memory, and the memory it came from: what the oracle judge reads. */
  readonly sourceOf = new Map<string, string>();
  #facts = 0;
  #memories = 0;

  handle(mode: 'facts' | 'plain', req: LoopbackRequest): { status?: number; body: unknown } {
    const b = req.json as { id?: string; text?: string; user: string; query?: string; limit?: string };
    // Each mode keeps its own stores: the two arms send the same scope name.
    const key = `${mode}:${b.user}`;
    const entries = this.scopes.get(key) ?? [];
    this.scopes.set(key, entries);
    if (req.path.endsWith('/store')) {
      const memory = { id: b.id as string, text: b.text as string, source: b.id as string };
      const stored =
        mode === 'plain' ? [memory] : extractFacts(memory.text, this.#memories++).map((t) => ({ id: `fact-${++this.#facts}`, text: t, source: memory.id }));
      for (const e of stored) this.sourceOf.set(e.text, e.source);
      entries.push(...stored);
      return { body: { results: stored.map((e) => ({ id: e.id, event: 'ADD' })) } };
    }
    return { body: { results: keywordSearch(entries, b.query as string, Number(b.limit)) } };
  }
}

const jsonLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let study: Installed;
let service: MemoryService;
let memoryServer: Loopback | undefined;
let judgeServer: ChatServer | undefined;
const gold = new Map<string, Record<string, number>>();

/** The oracle judge: a passage gets the gold grade of the memory it came from (0 when gold has none). */
function oracle(prompt: string): string {
  const query = /\nQuery: (.*)\n/.exec(prompt)?.[1];
  const passage = /\nPassage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)?.[1];
  if (query === undefined || passage === undefined) return 'no query or passage';
  const source = service.sourceOf.get(passage);
  const grade = source === undefined ? 0 : (gold.get(query)?.[source] ?? 0);
  return `M: ${grade}, T: 3\n##final score: ${grade}`;
}

function config(name: string, qrels: string): string {
  const arm = (id: string, mode: string, text: string) => `  - id: ${id}
    kind: http
    params:
      index: { url: "${memoryServer?.url}/${mode}/store", body: { id: "{{document.id}}", text: "{{document.text}}", user: "{{scope}}" } }
      search: { url: "${memoryServer?.url}/${mode}/search", body: { query: "{{query.text}}", user: "{{scope}}", limit: "{{topK}}" } }
      response: { results: "$.results[*]", docId: "$.id", score: "$.score"${text} }
      local: true
      storeCheck: { sample: 20, maxLoss: 0.6 }`;
  return [
    `name: ${name}`,
    `evalset: { format: memory, path: ${JSON.stringify(join(study.pkg, 'evalset', 'examples', 'alex-memory'))} }`,
    'measures: [nDCG@10]',
    'topK: 10',
    `qrels: ${qrels}`,
    'arms:',
    arm('facts', 'facts', ', text: "$.memory"'),
    arm('plain', 'plain', ''),
    'compare: { permutations: 200, resamples: 200 }',
    'judgments: judgments',
    `judge: { model: judge-m, baseURL: "${judgeServer?.baseURL}", local: true, depth: 10, concurrency: 8 }`,
    `output: reports-${name}`,
    'cache: cache',
  ].join('\n');
}

interface ReportJson {
  summary: { run: string; stratum: string; measure: string; mean: number }[];
  warnings: { code: string; subject: string }[];
  runs: { id: string; textMapping?: { hits?: Record<string, number>; results: number; returnedResults: number; returnedJudged: number } }[];
}

function reportFile(name: string, file: string): string {
  const out = join(study.dir, `reports-${name}`);
  return readFileSync(join(out, readdirSync(out).find((n) => !n.startsWith('.')) as string, file), 'utf8');
}

const report = (name: string): ReportJson => JSON.parse(reportFile(name, 'report.json')) as ReportJson;

const ndcg = (r: ReportJson, run: string) => r.summary.find((s) => s.run === run && s.stratum === 'all' && s.measure === 'nDCG@10')?.mean as number;

beforeAll(async () => {
  study = await installPackage();
  for (const q of jsonLines(join(study.pkg, 'evalset', 'examples', 'alex-memory', 'queries.jsonl')))
    gold.set(q['text'] as string, q['qrels'] as Record<string, number>);
  service = new MemoryService();
  memoryServer = await startLoopback((req) => service.handle(req.path.startsWith('/facts/') ? 'facts' : 'plain', req));
  judgeServer = await startChatServer(oracle);
  writeFileSync(join(study.dir, 'gold.yaml'), config('gold', 'gold'));
  writeFileSync(join(study.dir, 'union.yaml'), config('union', 'gold+judged'));
}, 600_000);

afterAll(async () => {
  await memoryServer?.close();
  await judgeServer?.close();
  study?.remove();
});

/** How close the rewriting store must come to the same retriever over the original memories (nDCG@10, absolute). */
const TOLERANCE = 0.1;

describe('a memory system that rewrites its memories, measured by the installed package', { shuffle: false }, () => {
  it('on gold qrels alone, its Returned items score 0 and the report says how many are unjudged', async () => {
    await step(study, 'ablate gold', ['ablate', '--config', 'gold.yaml']);
    const r = report('gold');
    const shares = r.runs.find((x) => x.id === 'facts')?.textMapping;
    expect(shares?.hits?.['byText']).toBeGreaterThan(0);
    expect(shares?.hits?.['byFuzzy']).toBeGreaterThan(0);
    expect(shares?.returnedResults).toBeGreaterThan(0);
    expect(shares?.returnedJudged).toBe(0);
    expect(r.runs.find((x) => x.id === 'plain')?.textMapping).toBeUndefined();
    // Returned items are not unknown ids: no silent-zero warning for the rewriting store.
    expect(r.warnings.filter((w) => w.subject === 'facts').map((w) => w.code)).not.toContain('unknown-ids');
  });

  it('judge grades the Returned items it pooled, as text, through the chat server', async () => {
    const ran = await step(study, 'judge', ['judge', '--config', 'gold.yaml']);
    expect(ran.stdout).toMatch(/judged: [1-9]\d*; parse failures: 0; sensitive, not sent: 0/);
    const recs = jsonLines(join(study.dir, 'judgments', 'judgments.jsonl'));
    const returned = recs.filter((r) => String(r['docId']).startsWith('returned:'));
    expect(returned.length).toBeGreaterThan(0);
    expect(returned.every((r) => r['status'] === 'judged')).toBe(true);
    // The judge read the text the store returned: every prompt's passage is a stored text.
    expect((judgeServer as ChatServer).calls.every((c) => service.sourceOf.has(/\nPassage: ([\s\S]*?)\n\nSplit this problem/.exec(c.prompt)?.[1] ?? ''))).toBe(
      true,
    );
  });

  it('on gold+judged it is scored on the union, within the tolerance of the same retriever over the originals', async () => {
    await step(study, 'ablate union', ['ablate', '--config', 'union.yaml']);
    const r = report('union');
    const shares = r.runs.find((x) => x.id === 'facts')?.textMapping;
    expect(shares?.returnedJudged).toBe(shares?.returnedResults);
    // report.md shows the shares: every Returned item judged, none left at 0 unjudged.
    const md = reportFile('union', 'report.md');
    expect(md).toContain('## Text mapping');
    expect(md).toMatch(
      new RegExp(
        `\\| facts \\| 0 \\(0\\.0%\\) \\| \\d+ \\([\\d.]+%\\) \\| \\d+ \\([\\d.]+%\\) \\| \\d+ \\([\\d.]+%\\) \\| ${shares?.results} \\| ${shares?.returnedResults} \\([\\d.]+%\\) \\| ${shares?.returnedJudged} \\| 0 \\|`,
      ),
    );
    expect(md).not.toContain('Unjudged Returned items score 0');
    const facts = ndcg(r, 'facts');
    const plain = ndcg(r, 'plain');
    expect(facts).toBeGreaterThan(ndcg(report('gold'), 'facts'));
    expect(facts).toBeGreaterThan(0);
    expect(Math.abs(facts - plain), `facts ${facts} vs plain ${plain}`).toBeLessThanOrEqual(TOLERANCE);
  });
});
