import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JudgmentRecord } from '../judge/store.js';
import { memoryLogger } from '../log.js';
import { tempJudgments } from '../testing/judgments.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { formatKappaReport, kappaReport } from './report.js';
import { defaultSampleSize, kappaSample } from './sample.js';
import { runKappa } from './run.js';
import type { SessionState } from './session.js';

const BIN = join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'bin.js');

/** Cohen's kappa written out for the test: 1 - sum w O / sum w E over grades 0-3 (or 0-1). */
function kappa(a: number[], b: number[], w: (i: number, j: number) => number, k = 4): number {
  const n = a.length;
  let obs = 0;
  let exp = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const o = a.filter((x, t) => x === i && b[t] === j).length;
      const e = (a.filter((x) => x === i).length * b.filter((x) => x === j).length) / n;
      obs += w(i, j) * o;
      exp += w(i, j) * e;
    }
  }
  return 1 - obs / exp;
}
const unweighted = (i: number, j: number) => (i === j ? 0 : 1);
const quadratic = (i: number, j: number) => (i - j) ** 2;
const linear = (i: number, j: number) => Math.abs(i - j);

// The judge's grades, and what the human will say for each pair.
const pairs: { q: string; d: string; stratum: string; llm: number; human: number }[] = [
  { q: 'q1', d: 'd1', stratum: 'exact', llm: 3, human: 3 },
  { q: 'q1', d: 'd2', stratum: 'exact', llm: 2, human: 1 },
  { q: 'q1', d: 'd3', stratum: 'exact', llm: 0, human: 0 },
  { q: 'q1', d: 'd4', stratum: 'exact', llm: 1, human: 1 },
  { q: 'q2', d: 'd1', stratum: 'multi-hop', llm: 2, human: 2 },
  { q: 'q2', d: 'd5', stratum: 'multi-hop', llm: 2, human: 3 },
  { q: 'q2', d: 'd6', stratum: 'multi-hop', llm: 0, human: 1 },
  { q: 'q2', d: 'd2', stratum: 'multi-hop', llm: 1, human: 0 },
];

function fixture(): Promise<string> {
  const docs = ['d1', 'd2', 'd3', 'd4', 'd5', 'd6'].map((id) => JSON.stringify({ id, text: `memory text of ${id}` }));
  const records: JudgmentRecord[] = pairs.map((p) => ({
    queryId: p.q,
    docId: p.d,
    stratum: p.stratum,
    status: 'judged',
    grade: p.llm,
    samples: [p.llm],
    parseFailures: 0,
  }));
  records.push({ queryId: 'q2', docId: 'd3', stratum: 'multi-hop', status: 'parse-failure', grade: null, samples: [], parseFailures: 1 });
  return tempJudgments('kappa', records, 'abcdef0123456789', {
    files: {
      'es/corpus.jsonl': docs.join('\n'),
      'es/queries.jsonl': [
        JSON.stringify({ id: 'q1', text: 'first question', stratum: 'exact', qrels: { d1: 3 } }),
        JSON.stringify({ id: 'q2', text: 'second question', stratum: 'multi-hop', qrels: { d1: 2 } }),
      ].join('\n'),
    },
  });
}

function cli(args: string[], cwd: string, stdin: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd }, (error, out, err) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err });
    });
    child.stdin!.end(stdin);
  });
}

const humanOf = (it: { queryId: string; docId: string }) => pairs.find((p) => p.q === it.queryId && p.d === it.docId)!.human;
const llmOf = (it: { queryId: string; docId: string }) => pairs.find((p) => p.q === it.queryId && p.d === it.docId)!.llm;

describe('kappaSample', () => {
  it('allocates by stratum size with multi-hop weighted twice, by largest remainder, deterministically', () => {
    const items = [
      ...Array.from({ length: 60 }, (_, i) => ({ queryId: `e${i}`, docId: 'd', stratum: 'exact' })),
      ...Array.from({ length: 30 }, (_, i) => ({ queryId: `p${i}`, docId: 'd', stratum: 'paraphrase' })),
      ...Array.from({ length: 10 }, (_, i) => ({ queryId: `m${i}`, docId: 'd', stratum: 'multi-hop' })),
    ];
    // weights 60, 30, 20 of 110; size 22: 12, 6, 4 exactly.
    const s = kappaSample(items, { size: 22, seed: 1 });
    const count = (st: string) => s.filter((x) => x.stratum === st).length;
    expect([count('exact'), count('paraphrase'), count('multi-hop')]).toEqual([12, 6, 4]);
    expect(new Set(s.map((x) => x.queryId)).size).toBe(22);
    expect(kappaSample(items, { size: 22, seed: 1 })).toEqual(s);
    // size 60: multi-hop wants 60 * 20 / 110 = 10.9 but holds 10; the surplus goes to the others.
    const big = kappaSample(items, { size: 60, seed: 1 });
    expect(big.filter((x) => x.stratum === 'multi-hop')).toHaveLength(10);
    expect(big).toHaveLength(60);
    expect(defaultSampleSize(1000)).toBe(200);
    expect(defaultSampleSize(100)).toBe(50);
    expect(defaultSampleSize(30)).toBe(30);
  });
});

describe('harness kappa', () => {
  it('labels some pairs from its stdin, quits, resumes (skip, back), finishes, and reports the kappas', async () => {
    expect(existsSync(BIN), `${BIN} is missing: run npm run build first`).toBe(true);
    const dir = await fixture();
    const session = join(dir, 'judgments', 'kappa-session.json');
    const args = ['kappa', '--judgments', 'judgments', '--sample', '8', '--resamples', '500', '--disagreements', 'dis.csv'];
    // An empty stdin: the session is drawn and saved, nothing labelled.
    const first = await cli(args, dir, '');
    expect(first.code, first.err).toBe(0);
    const drawn = JSON.parse(readFileSync(session, 'utf8')) as SessionState;
    expect(drawn.items).toHaveLength(8);
    expect(drawn.items.some((it) => it.docId === 'd3' && it.queryId === 'q2')).toBe(false);
    const order = drawn.items;
    // Blind: the screen shows query and memory text, never the judge's grade.
    expect(first.err).toContain(`query ${order[0]!.queryId}: `);
    expect(first.err).not.toMatch(/judge|llm/i);

    // Three labels (one wrong, fixed later), then quit: the rest of the input is not read.
    const wrong = (humanOf(order[2]!) + 1) % 4;
    const second = await cli(args, dir, `${humanOf(order[0]!)}\n${humanOf(order[1]!)}\n${wrong}\nq${humanOf(order[3]!)}`);
    expect(second.code, second.err).toBe(0);
    expect(second.out).toBe('');
    const saved = JSON.parse(readFileSync(session, 'utf8')) as SessionState;
    expect(saved.labels).toEqual([humanOf(order[0]!), humanOf(order[1]!), wrong, null, null, null, null, null]);
    expect(saved.position).toBe(3);

    // Resume: back to the third pair and fix it, skip the fourth, label the rest.
    const rest = order.slice(4).map(humanOf).join('');
    const third = await cli(args, dir, `b${humanOf(order[2]!)}s${rest}`);
    const done = JSON.parse(readFileSync(session, 'utf8')) as SessionState;
    expect(done.labels).toEqual([...order.slice(0, 3).map(humanOf), 'skip', ...order.slice(4).map(humanOf)]);
    expect(done.position).toBe(8);

    const kept = order.filter((_, i) => i !== 3);
    const h = kept.map(humanOf);
    const l = kept.map(llmOf);
    const out = third.out;
    expect(out).toContain('qrels version abcdef0123456789');
    expect(out).toContain('n = 7 labelled pairs');
    const value = (label: string) => Number(new RegExp(`^  ${label}\\s+(-?[\\d.]+)`, 'm').exec(out)![1]);
    expect(value('unweighted')).toBeCloseTo(kappa(h, l, unweighted), 3);
    expect(value('linear')).toBeCloseTo(kappa(h, l, linear), 3);
    expect(value('quadratic')).toBeCloseTo(kappa(h, l, quadratic), 3);
    // Without --config the binary kappa splits at grade 1 (the default), and says so.
    const bin = (xs: number[]) => xs.map((g) => (g >= 1 ? 1 : 0));
    const kb = kappa(bin(h), bin(l), unweighted, 2);
    expect(value('binary')).toBeCloseTo(kb, 3);
    expect(out).toContain("(relevant at grade >= 1, the default: trec_eval's relevance level 1, where nDCG's gains start");
    // 7 labels (one pair skipped) of the 8 judged pairs: below the minimum (50, or every judged pair when fewer).
    expect(third.code).toBe(1);
    expect(out).toContain('kappa check: TOO-FEW: 7 labelled pairs, the check needs 8 (at least 50, or every judged pair when fewer; 8 judged)');
    expect(out).not.toMatch(/PASS|FAIL/);
    expect(third.err).toContain('kappa check not made: 7 labelled pairs (1 skipped), it needs at least 8');
    const csv = readFileSync(join(dir, 'dis.csv'), 'utf8').trim().split('\n');
    expect(csv[0]).toBe('queryId,docId,stratum,human,judge');
    expect(csv).toHaveLength(1 + kept.filter((it) => humanOf(it) !== llmOf(it)).length);
  });

  it('reads human labels from a file, and the report carries every number computed here', async () => {
    const dir = await fixture();
    const labels = pairs.map((p) => `${p.q} 0 ${p.d} ${p.human}`).join('\n');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir, 'human.qrels'), labels);
    const result = await runKappa(
      {
        judgments: join(dir, 'judgments'),
        labels: join(dir, 'human.qrels'),
        reportOnly: false,
        seed: 42,
        on: 'quadratic',
        relevance: { relevantAt: 2, relevantFrom: 'set by hand' },
        threshold: 0.6,
        resamples: 1000,
        level: 0.95,
      },
      { input: new PassThrough(), write: () => {}, log: memoryLogger() },
    );
    const r = result.report!;
    const h = pairs.map((p) => p.human);
    const l = pairs.map((p) => p.llm);
    expect(r.n).toBe(8);
    expect(r.none.kappa).toBeCloseTo(kappa(h, l, unweighted), 12);
    expect(r.quadratic.kappa).toBeCloseTo(kappa(h, l, quadratic), 12);
    expect(r.quadratic.ci!.lo).toBeLessThanOrEqual(r.quadratic.kappa!);
    expect(r.quadratic.ci!.hi).toBeGreaterThanOrEqual(r.quadratic.kappa!);
    // rows human, columns judge: human 1 / judge 2 is q1:d2; human 1 / judge 0 is q2:d6.
    expect(r.confusion).toEqual([
      [1, 1, 0, 0],
      [1, 1, 1, 0],
      [0, 0, 1, 0],
      [0, 0, 1, 1],
    ]);
    expect(r.baseRates.human).toEqual([2 / 8, 3 / 8, 1 / 8, 2 / 8]);
    expect(r.baseRates.llm).toEqual([2 / 8, 2 / 8, 3 / 8, 1 / 8]);
    const exact = r.strata.find((s) => s.stratum === 'exact')!;
    expect(exact.n).toBe(4);
    expect(exact.none.kappa).toBeCloseTo(kappa([3, 1, 0, 1], [3, 2, 0, 1], unweighted), 12);
    expect(r.check).toBe(r.quadratic.kappa! >= 0.6 ? 'PASS' : 'FAIL');
    // The same pairs through the kernel directly give the same report.
    expect(
      kappaReport(
        pairs.map((p) => ({ queryId: p.q, docId: p.d, stratum: p.stratum, human: p.human, llm: p.llm })),
        {
          qrelsVersion: 'abcdef0123456789',
          on: 'quadratic',
          relevantAt: 2,
          relevantFrom: 'set by hand',
          threshold: 0.6,
          resamples: 1000,
          seed: 42,
          level: 0.95,
          judged: 8,
          judge: { model: 'judge-m', servedModels: [] },
        },
      ),
    ).toEqual({ ...r, queries: undefined });
    expect(r.queries).toEqual({ complete: 2, incomplete: 0 });
    // Every judged pair is labelled: the check is made, and its line says what it read.
    expect(formatKappaReport(r)).toContain(`kappa check: ${r.check}: quadratic kappa ${r.quadratic.kappa!.toFixed(3)}`);
  });
});
