import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.js';
import { type JudgmentRecord, type JudgmentsManifest, readJudgments } from '../judge/store.js';
import { memoryLogger } from '../log.js';
import { runCaptured } from '../testing/cli.js';
import { tempJudgments } from '../testing/judgments.js';
import { formatKappaReport, kappaReport } from './report.js';
import { type KappaOptions, runKappa } from './run.js';
import { arrayElementLines, newSession, saveSession } from './session.js';

/**
 * Issue 32's kappa cases: a minimum sample (exit 1 with the counts), labels that are wrong or hand-edited
 * reported at their file:line, and a per-stratum table that never prints `undefined`.
 */

/** `n` judged pairs q<i>/d<i>, grade i mod 4, strata exact and multi-hop alternating. */
function records(n: number): JudgmentRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    queryId: `q${i}`,
    docId: `d${i}`,
    stratum: i % 2 === 0 ? 'exact' : 'multi-hop',
    status: 'judged' as const,
    grade: i % 4,
    samples: [i % 4],
    parseFailures: 0,
  }));
}

const judgments = (n: number, manifest: Partial<JudgmentsManifest> = {}) => tempJudgments('kappa-labels', records(n), '0123456789abcdef', { manifest });

const base = (dir: string): KappaOptions => ({
  judgments: join(dir, 'judgments'),
  reportOnly: false,
  seed: 42,
  on: 'binary',
  relevance: { relevantAt: 1, relevantFrom: 'the default' },
  threshold: 0.6,
  resamples: 200,
  level: 0.95,
});
const io = () => ({ input: new PassThrough(), write: () => {}, log: memoryLogger() });
const caught = (p: Promise<unknown>) => p.then(() => new Error('no error')).catch((e: unknown) => e as Error);

describe('the kappa check needs its minimum sample', () => {
  it('3 labels of 60 judged pairs: the numbers print, the check is TOO-FEW, exit 1 with the counts and the minimum of 50', async () => {
    const dir = await judgments(60, { servedModels: ['judge-m-2026-01-15'] });
    writeFileSync(join(dir, 'human.txt'), 'q0 0 d0 0\nq1 0 d1 1\nq2 d2 2\n');
    const r = await runCaptured(['kappa', '--judgments', 'judgments', '--labels', 'human.txt', '--resamples', '100'], dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain('n = 3 labelled pairs');
    expect(r.out).toContain('kappa check: TOO-FEW: 3 labelled pairs, the check needs 50 (at least 50, or every judged pair when fewer; 60 judged)');
    expect(r.out).not.toMatch(/PASS|FAIL/);
    expect(r.out).toContain('kappa: hand labels vs the judge, qrels version 0123456789abcdef\nn = 3 labelled pairs;');
    expect(r.out).toContain('\njudge: model judge-m, served as judge-m-2026-01-15\n');
    expect(r.stderr).toContain(
      'kappa check not made: 3 labelled pairs, it needs at least 50 (50, or every judged pair when the judgments hold fewer; they hold 60)',
    );
    expect(r.stderr).toContain('--sample 50');
  });

  it('50 labels of 60 reach it: the check is made', async () => {
    const dir = await judgments(60);
    writeFileSync(
      join(dir, 'human.txt'),
      records(50)
        .map((x) => `${x.queryId} 0 ${x.docId} ${x.grade}`)
        .join('\n'),
    );
    const out = await runKappa({ ...base(dir), labels: join(dir, 'human.txt') }, io());
    expect(out.report!.n).toBe(50);
    expect(out.report!.check).toBe('PASS');
  });
});

describe('labels that are wrong are reported at their line, never dropped', () => {
  it('a labels file: bad grade, unknown pair, a pair twice, a short line, each at file:line', async () => {
    const dir = await judgments(10);
    const file = join(dir, 'human.txt');
    writeFileSync(file, ['q0 0 d0 1', 'q1 0 d1 x', '# a comment', 'q9 0 d99 2', 'q0 0 d0 2', 'q3 d3', 'q4 0 d4 1.5'].join('\n'));
    const err = await caught(runKappa({ ...base(dir), labels: file }, io()));
    expect((err as { exitCode?: number }).exitCode).toBe(2);
    expect(err.message).toContain(`${file}:2: query q1, document d1: grade "x" is not 0-3`);
    expect(err.message).toContain(`${file}:4: query q9, document d99: the judge has no grade for this pair`);
    expect(err.message).toContain(`${file}:5: query q0, document d0: labelled twice (first at line 1)`);
    expect(err.message).toContain(`${file}:6: not a label line`);
    expect(err.message).toContain(`${file}:7: query q4, document d4: grade "1.5" is not 0-3`);
  });

  it('a hand-edited session: labels and items that are not what the harness writes are named at their line', async () => {
    const dir = await judgments(10);
    const file = join(dir, 'judgments', 'kappa-session.json');
    const items = records(4).map((x) => ({ queryId: x.queryId, docId: x.docId, stratum: x.stratum }));
    const s = newSession('0123456789abcdef', 42, items);
    s.labels.splice(0, 4, 1, 2, null, null);
    s.position = 2;
    await saveSession(file, s);
    // Edited by hand: a label of 7, a label as a string, an item moved to a pair the judge never graded.
    const text = readFileSync(file, 'utf8').split('\n');
    const labelsAt = text.indexOf('"labels":[');
    text[labelsAt + 2] = '7,';
    text[labelsAt + 3] = '"2",';
    text[3] = text[3]!.replace('"d1"', '"d77"');
    writeFileSync(file, text.join('\n'));
    const err = await caught(runKappa({ ...base(dir), reportOnly: true }, io()));
    expect((err as { exitCode?: number }).exitCode).toBe(2);
    // Lines: 1 head, 2 "items":[, 3-6 items, 7 ], 8 "labels":[, 9-12 labels.
    expect(err.message).toContain(`${file}:4: items[1]: query q1, document d77 is not a pair the judge graded (edited?)`);
    expect(err.message).toContain(`${file}:10: labels[1] (query q1, document d77): 7 is not a label`);
    expect(err.message).toContain(`${file}:11: labels[2] (query q2, document d2): "2" is not a label`);
  });

  it('finds array elements on one line and across lines, strings with brackets skipped', () => {
    expect(arrayElementLines('{"a":"[x]","labels":[1,null,"skip"],"b":[2]}', 'labels')).toEqual([1, 1, 1]);
    expect(arrayElementLines('{"items":[\n{"q":"]"},\n{"q":"a"}\n],\n"labels":[\n0,\n[1]\n]}', 'labels')).toEqual([6, 7]);
    expect(arrayElementLines('{"items":[\n{"q":"]"},\n{"q":"a"}\n]}', 'items')).toEqual([2, 3]);
    expect(arrayElementLines('{"labels":[]}', 'labels')).toEqual([]);
  });

  it('a judgments record without a stratum is refused at its line', async () => {
    const dir = await judgments(3);
    const file = join(dir, 'judgments', 'judgments.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = JSON.stringify({ ...JSON.parse(lines[1]!), stratum: undefined });
    writeFileSync(file, lines.join('\n'));
    const err = await caught(readJudgments(join(dir, 'judgments')));
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toContain(`${file}:2: not a judgment record`);
  });
});

describe('the per-stratum table', () => {
  it('prints n/a, never undefined, where a stratum has one grade only', () => {
    const pairs = [
      ...Array.from({ length: 6 }, (_, i) => ({ queryId: `q${i}`, docId: 'd', stratum: 'exact', human: i % 4, llm: (i + 1) % 4 })),
      ...Array.from({ length: 3 }, (_, i) => ({ queryId: `m${i}`, docId: 'd', stratum: 'multi-hop', human: 2, llm: 2 })),
    ];
    const text = formatKappaReport(
      kappaReport(pairs, {
        qrelsVersion: 'v',
        on: 'binary',
        relevantAt: 2,
        relevantFrom: 'test',
        threshold: 0.6,
        resamples: 50,
        seed: 1,
        level: 0.95,
        judged: 9,
      }),
    );
    expect(text).not.toContain('undefined');
    expect(text).toMatch(/multi-hop\s+3 {2}n\/a {2}n\/a {2}n\/a/);
    expect(text).toContain('(n/a: no kappa where both raters gave one grade only)');
  });
});
