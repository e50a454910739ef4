import { mulberry32 } from '../testing/mulberry32.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrecFile, scanTrecQrels, scanTrecRun, type RunLineSink } from '../../evalset/trec.js';
import { formatLong, printfFixed } from '../metrics/printf.js';
import { REL_NONPOOL, REL_UNJUDGED } from '../metrics/ranking.js';
import { splitAtQueryBoundaries } from './pieces.js';
import { compileTrecPlan } from './plan.js';
import { TrecQueryWriter } from './print.js';
import { QrelsIndex } from './qrels-index.js';
import { lineAt, QrelsLines, scanTrecQrelsFast } from './qrels-lines.js';
import { scanTrecRunFast } from './run-scan.js';
import { evaluateTrecRunFile } from './stream-eval.js';
import { busyBetween, chooseThreads, MAX_THREADS, scoringSeconds } from './threads.js';
import { trecSettings } from '../testing/trec-settings.js';
import { tempDir } from '../testing/temp.js';

/** The streaming evaluator's own machinery: thread choice, the shareable qrels index, the per-block tables. */

const dir = tempDir('stream-eval');

const MB = 1 << 20;
const settings = trecSettings({ perQuery: true, measures: ['official'] });

describe('chooseThreads', () => {
  it('keeps runs under 128 MB on one thread, then adds one per 64 MB up to the idle cores and 8', () => {
    expect(chooseThreads(128 * MB - 1, 8, 0)).toBe(1);
    expect(chooseThreads(128 * MB, 8, 0)).toBe(2);
    expect(chooseThreads(200 * MB, 8, 0)).toBe(3);
    expect(chooseThreads(185 * MB, 2, 0)).toBe(2);
    expect(chooseThreads(10_000 * MB, 8, 0)).toBe(8);
    expect(chooseThreads(10_000 * MB, 16, 0)).toBe(MAX_THREADS);
    expect(chooseThreads(10_000 * MB, 1, 0)).toBe(1);
  });
  it('scales a big run with the idle cores of a big machine, up to 8 (issue 30, goal 3)', () => {
    // 500k x 100 at all_trec: ~1.9 GB of run, ~19 s of one thread's scoring.
    const big = { queries: 500_000, width: 99 };
    expect(MAX_THREADS).toBe(8);
    expect(chooseThreads(1_880e6, 16, 0, big)).toBe(8);
    expect(chooseThreads(1_880e6, 8, 0, big)).toBe(8);
    expect(chooseThreads(1_880e6, 16, 10, big)).toBe(6);
    expect(chooseThreads(1_880e6, 4, 0, big)).toBe(4);
    // Bytes still cap it: 300 MB is 4 threads' worth, however many cores are idle.
    expect(chooseThreads(300 * MB, 16, 0)).toBe(4);
    // Short runs stay on one thread on any machine.
    expect(chooseThreads(185e6, 16, 0, { queries: 5_000, width: 99 })).toBe(1);
    expect(chooseThreads(100 * MB, 64, 0)).toBe(1);
  });
  it('measures the busy cores over a window, less this process', () => {
    const since = { idle: 1000, total: 4000, own: 5e6, at: 20_000 };
    // 2 cores, 200 ticks: 50 idle (1.5 cores busy), this process 1 CPU second in 1 s: others keep 0.5 busy.
    expect(busyBetween(since, { idle: 1050, total: 4200, own: 6e6, at: 21_000 }, 2)).toBe(2 * (1 - 50 / 200) - 1);
    expect(chooseThreads(185 * MB, 2, 2 * (1 - 50 / 200) - 1)).toBe(1);
    // 100 of 200 idle: only this process ran, a core is free.
    expect(busyBetween(since, { idle: 1100, total: 4200, own: 6e6, at: 21_000 }, 2)).toBe(0);
    expect(chooseThreads(185 * MB, 2, 0)).toBe(2);
    // A tenth of a core of daemons is within the slack.
    expect(chooseThreads(185 * MB, 2, 0.1)).toBe(2);
  });
  it('counts only the cores no other thread is running on', () => {
    expect(chooseThreads(185 * MB, 2, 1)).toBe(1);
    expect(chooseThreads(185 * MB, 2, 0.4)).toBe(1);
    expect(chooseThreads(185 * MB, 2, 11)).toBe(1);
    expect(chooseThreads(10_000 * MB, 8, 5)).toBe(3);
  });
  it('gives one thread to a run whose scoring is too short for a worker to pay, once the work is known', () => {
    // The bench's two workloads (185 MB each, all_trec's 99 values a query), and a run 3x the second.
    const deep = { queries: 5_000, width: 99 };
    const wide = { queries: 50_000, width: 99 };
    const long = { queries: 150_000, width: 99 };
    expect(scoringSeconds(185e6, deep)).toBeCloseTo((185e6 * 6 + 5_000 * 99 * 160) / 1e9, 12);
    expect(scoringSeconds(185e6, wide)).toBeCloseTo((185e6 * 6 + 50_000 * 99 * 160) / 1e9, 12);
    expect(chooseThreads(185e6, 2, 0, deep)).toBe(1);
    expect(chooseThreads(185e6, 2, 0, wide)).toBe(1);
    expect(chooseThreads(564e6, 2, 0, long)).toBe(2);
    // Just under and at 4 s of scoring: 4e9 ns of run bytes alone at 6 ns a byte.
    expect(chooseThreads(4e9 / 6 - 6, 2, 0, { queries: 0, width: 99 })).toBe(1);
    expect(chooseThreads(4e9 / 6, 2, 0, { queries: 0, width: 99 })).toBe(2);
    // The work only ever takes threads away: busy cores and the bytes still cap it.
    expect(chooseThreads(564e6, 2, 1, long)).toBe(1);
    expect(chooseThreads(100 * MB, 8, 0, { queries: 1e6, width: 99 })).toBe(1);
    expect(chooseThreads(10_000 * MB, 8, 0, wide)).toBe(8);
  });
});

describe('QrelsIndex', () => {
  const text = 'q2 0 a 1\nq1 0 b 0\nq2 0 c -1\nq1 0 a 3\nq10 0 a 2\n';
  const index = QrelsIndex.fromBuffer(Buffer.from(text), 'x.qrels');

  it('orders queries bytewise and counts judged documents per grade', () => {
    expect(index.qids).toEqual(['q1', 'q10', 'q2']);
    expect(index.relLevels.map((l) => [...l])).toEqual([
      [1, 0, 0, 1],
      [0, 0, 1],
      [0, 1],
    ]);
    expect(index.lookupId(2, 'a')).toBe(1);
    expect(index.lookupId(2, 'c')).toBe(REL_UNJUDGED);
    expect(index.lookupId(2, 'b')).toBe(REL_NONPOOL);
    expect(index.lookupId(0, 'a')).toBe(3);
  });

  it('shares its arrays through SharedArrayBuffers and answers the same from them', () => {
    const parts = index.share();
    for (const a of [parts.bytes, parts.levelStart, parts.levels, parts.docStart, parts.docEnd, parts.grade, parts.tabBase, parts.tabMask, parts.table]) {
      expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    }
    const copy = QrelsIndex.fromParts(parts);
    expect(copy.qids).toEqual(index.qids);
    expect(copy.relLevels.map((l) => [...l])).toEqual(index.relLevels.map((l) => [...l]));
    for (let q = 0; q < 3; q++) for (const d of ['a', 'b', 'c', 'zz']) expect(copy.lookupId(q, d)).toBe(index.lookupId(q, d));
  });

  it('built in shared memory: every array on a SharedArrayBuffer, share() copies nothing, the same answers', async () => {
    // Short lines first and long ones after (the capacity estimate, from the first 64 KB, too large: the kept
    // arrays are copied to their length), then the reverse (too small: the arrays grow), each file read into
    // shared memory.
    const line = (q: number, d: string, g: number) => `q${q} 0 ${d} ${g}\n`;
    const short = Array.from({ length: 6000 }, (_, i) => line(i % 50, `d${i}`, i % 4)).join('');
    const long = Array.from({ length: 3000 }, (_, i) => line(50 + (i % 7), `doc-with-a-long-id-${'x'.repeat(40)}-${i}`, i % 3)).join('');
    const folder = tempDir('qrels-shared');
    for (const [name, body] of [
      ['cut', short + long],
      ['grows', long + short],
    ] as const) {
      const path = join(folder, name);
      writeFileSync(path, body);
      const shared = QrelsIndex.fromBuffer(await readTrecFile(path, undefined, { shared: true }), path, { shared: true });
      const heap = QrelsIndex.fromBuffer(Buffer.from(body), path);
      const parts = shared.share();
      const again = shared.share();
      for (const k of ['bytes', 'levelStart', 'levels', 'docStart', 'docEnd', 'grade', 'tabBase', 'tabMask', 'table'] as const) {
        expect(parts[k].buffer, `${name} ${k}`).toBeInstanceOf(SharedArrayBuffer);
        expect(again[k], `${name} ${k}`).toBe(parts[k]);
      }
      expect(shared.qids).toEqual(heap.qids);
      expect(shared.relLevels.map((l) => [...l])).toEqual(heap.relLevels.map((l) => [...l]));
      for (let q = 0; q < heap.qids.length; q++)
        for (const d of ['d0', 'd17', 'd5999', `doc-with-a-long-id-${'x'.repeat(40)}-7`, 'none']) expect(shared.lookupId(q, d)).toBe(heap.lookupId(q, d));
    }
  });

  it('still rejects a document judged twice for one query', () => {
    expect(() => QrelsIndex.fromBuffer(Buffer.from('q 0 a 1\nq 0 b 1\nq 0 a 0\n'), 'd.qrels')).toThrow(
      /d\.qrels:3: document "a" is judged twice for query "q" \(first at line 1\)/,
    );
    // Blank and comment lines count; so do the lines of BEIR's TSV (read by scanTrecQrels, header included).
    expect(() => QrelsIndex.fromBuffer(Buffer.from('# c\n\nq 0 a 1\n\r\nr 0 a 1\nq 0 b 1\nq\t0 a 0\n'), 'd.qrels')).toThrow(
      /d\.qrels:7: document "a" is judged twice for query "q" \(first at line 3\)/,
    );
    expect(() => QrelsIndex.fromBuffer(Buffer.from('query-id\tcorpus-id\tscore\nq\ta b\t1\nq\tc\t1\nq\ta b\t2\n'), 'd.tsv')).toThrow(
      /d\.tsv:4: document "a b" is judged twice for query "q" \(first at line 2\)/,
    );
  });
});

describe('run blocks', () => {
  it('finds a duplicate in a late block and allows the same document in every block', async () => {
    // 3,000 blocks: far more than the duplicate table's generations per reset would ever need to wrap.
    let run = '';
    let qrels = '';
    for (let q = 0; q < 3000; q++) {
      qrels += `q${q} 0 same 1\n`;
      run += `q${q} Q0 same 1 2 t\nq${q} Q0 other 2 1 t\n`;
    }
    const okPath = join(dir, 'ok.run');
    writeFileSync(okPath, run);
    const index = QrelsIndex.fromBuffer(Buffer.from(qrels), 'q.qrels');
    const plan = compileTrecPlan(settings);
    const ev = await evaluateTrecRunFile(index, okPath, plan);
    expect(ev.queryIds).toHaveLength(3000);
    const badPath = join(dir, 'bad.run');
    writeFileSync(badPath, `${run}q2999 Q0 same 3 0.5 t\n`);
    // The late line re-opens q2999's block (it follows q2999's lines directly), so it is a duplicate there.
    await expect(evaluateTrecRunFile(index, badPath, plan)).rejects.toThrow(
      /bad\.run:6001: document "same" appears twice for query "q2999" \(first at line 5999\)/,
    );
  });

  it('grows a block past its first tables (depth 5,000) without losing a duplicate', async () => {
    let run = '';
    for (let d = 0; d < 5000; d++) run += `q Q0 d${d} ${d} ${5000 - d} t\n`;
    const path = join(dir, 'deep.run');
    writeFileSync(path, `${run}q Q0 d17 0 0.5 t\n`);
    const index = QrelsIndex.fromBuffer(Buffer.from('q 0 d1 1\n'), 'q.qrels');
    await expect(evaluateTrecRunFile(index, path, compileTrecPlan(settings))).rejects.toThrow(
      /deep\.run:5001: document "d17" appears twice for query "q" \(first at line 18\)/,
    );
  });
});

describe('a run scanned in chunks by the scan kernel (BlockSink.scan)', () => {
  // 300 queries x 30 lines of about 40 bytes: 360 KB, one chunk, 300 of the kernel's stops for a new query;
  // the last line has no '\n' (read by scanTrecRun).
  const qrels = Array.from({ length: 300 }, (_, q) => `q${q} 0 doc-${q}-7 1\nq${q} 0 doc-${q}-3 2\n`).join('');
  const block = (q: number) => Array.from({ length: 30 }, (_, d) => `q${q} Q0 doc-${q}-${d} ${d} ${(30 - d) / 4} tag\n`).join('');
  const all = Array.from({ length: 300 }, (_, q) => block(q)).join('');

  it('scores each query as a file holding it alone, and counts lines across slices', async () => {
    const index = QrelsIndex.fromBuffer(Buffer.from(qrels), 'q.qrels');
    const plan = compileTrecPlan({ ...settings, measures: ['all_trec'] });
    const path = join(dir, 'sliced.run');
    writeFileSync(path, all.slice(0, -1));
    const ev = await evaluateTrecRunFile(index, path, plan, { threads: 1 });
    expect(ev.queryIds).toHaveLength(300);
    const w = plan.width;
    for (const q of [0, 1, 149, 150, 298, 299]) {
      const one = join(dir, `one-${q}.run`);
      writeFileSync(one, block(q));
      const alone = await evaluateTrecRunFile(index, one, plan, { threads: 1 });
      const k = ev.queryIds.indexOf(`q${q}`);
      expect([...ev.rows.subarray(k * w, (k + 1) * w)], `q${q}`).toEqual([...alone.rows.subarray(0, w)]);
    }
    const bad = join(dir, 'sliced-bad.run');
    const lines = all.split('\n');
    lines[7776] = 'q259 Q0 doc-259-6 6 x1 tag';
    writeFileSync(bad, lines.join('\n'));
    await expect(evaluateTrecRunFile(index, bad, plan, { threads: 1 })).rejects.toThrow(/sliced-bad\.run:7777: score "x1" is not a decimal number/);
  });
});

describe('splitAtQueryBoundaries', () => {
  it('gives the first part its share and cuts only where a query begins', () => {
    let run = '';
    for (let q = 0; q < 100; q++) for (let d = 0; d < 10; d++) run += `q${String(q).padStart(3, '0')} Q0 d${d} ${d} 1 t\n`;
    const path = join(dir, 'split.run');
    writeFileSync(path, run);
    const cuts = splitAtQueryBoundaries(path, 3, 0.2);
    expect(cuts).toHaveLength(4);
    // A cut goes to the first query that starts after the line holding byte size * share; here both shares
    // (0.2, and 0.2 + 0.8 / 2 for the second part) land exactly on a query start, whose first line is skipped.
    const block = run.length / 100;
    expect(cuts[1]).toBe((Math.floor((run.length * 0.2) / block) + 1) * block);
    expect(cuts[2]).toBe((Math.floor((run.length * 0.6) / block) + 1) * block);
    expect(cuts[3]).toBe(run.length);
  });
});

describe('TrecQueryWriter', () => {
  it('prints %-22s\\t%s\\t%6.4f lines, %ld for counts, and values too wide for the fast path', () => {
    const plan = compileTrecPlan({ ...settings, measures: ['num_ret', 'map', 'relstring'] });
    const row = new Float64Array(plan.width);
    row[plan.instances.find((i) => i.name === 'num_ret')!.offset] = 1234;
    row[plan.instances.find((i) => i.name === 'map')!.offset] = 123456.78916;
    let out = '';
    const w = new TrecQueryWriter(plan, (t) => (out += t));
    w.query('q7', row, 0, 'RN');
    w.flush();
    expect(out).toBe(`${'num_ret'.padEnd(22)}\tq7\t1234\n${'map'.padEnd(22)}\tq7\t123456.7892\n${'relstring'.padEnd(22)}\tq7\t'RN'\n`);
  });

  it('prints every count and value as formatLong and printfFixed(x, 6, 4) do, relstrings as quoted', () => {
    const plan = compileTrecPlan({ ...settings, measures: ['num_ret', 'map', 'relstring'] });
    const ret = plan.instances.find((i) => i.name === 'num_ret')!.offset;
    const map = plan.instances.find((i) => i.name === 'map')!.offset;
    // Edges of the digit paths (int32 counts, 4 fraction digits, rounding near .5), then seeded random values.
    const counts = [0, -0, 0.9, -0.5, -3, 7, 9, 10, 99, 100, 1234, 2 ** 31 - 1, 2 ** 31, 3e9, 1e21, Number.NaN, Infinity];
    const values = [0, -0, 1e-5, 0.00005, 0.03125, 0.99995, 0.5, 1, 9.99996, 10, -0.25, -12.5, 999999.99995, 1e6, 1e300, Number.NaN, -Infinity];
    let seed = 7;
    const rand = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (let k = 0; k < 2000; k++) {
      counts.push(Math.floor(rand() * 10 ** Math.floor(rand() * 12)));
      values.push((rand() - 0.1) * 10 ** Math.floor(rand() * 8 - 4));
    }
    const rels = ['', 'R', 'RN-0123', 'N\u00e9'];
    const row = new Float64Array(plan.width * counts.length);
    let expected = '';
    for (let q = 0; q < counts.length; q++) {
      row[q * plan.width + ret] = counts[q]!;
      row[q * plan.width + map] = values[q]!;
      const rel = rels[q % rels.length]!;
      expected += `${'num_ret'.padEnd(22)}\tq${q}\t${formatLong(counts[q]!)}\n${'map'.padEnd(22)}\tq${q}\t${printfFixed(values[q]!, 6, 4)}\n`;
      expected += `${'relstring'.padEnd(22)}\tq${q}\t'${rel}'\n`;
    }
    let out = '';
    const w = new TrecQueryWriter(plan, (t) => (out += t));
    for (let q = 0; q < counts.length; q++) w.query(`q${q}`, row, q * plan.width, rels[q % rels.length]);
    w.flush();
    expect(out).toBe(expected);
  });
});

describe('scanTrecRun', () => {
  const fields = (text: string) => {
    const got: string[][] = [];
    const sink: RunLineSink = {
      line(b, lineNo, qs, qe, ds, de, score, ts, te) {
        got.push([String(lineNo), b.toString('utf8', qs, qe), b.toString('utf8', ds, de), String(score), b.toString('utf8', ts, te)]);
      },
    };
    const buf = Buffer.from(text);
    const lines = scanTrecRun(buf, 0, buf.length, 1, 'r.txt', sink);
    return { got, lines };
  };

  it('reads fields 1, 3, 5 and 6 across blanks (\t \v \f \r), skips blank and comment lines, ignores fields after the 6th', () => {
    expect(fields('\n# c\n \tq1 Q0\td1  3 -1.5e2 tag extra more\r\nq2\x0bQ0\x0cd2 1 7 t\n\n')).toEqual({
      got: [
        ['3', 'q1', 'd1', '-150', 'tag'],
        ['4', 'q2', 'd2', '7', 't'],
      ],
      lines: 5,
    });
  });

  it('counts the fields of a short line, also when it ends the buffer or trails blanks', () => {
    for (const [line, found] of [
      ['q', 1],
      ['q Q0', 2],
      ['q Q0 d', 3],
      ['q Q0 d 1', 4],
      ['q Q0 d 1 2.5', 5],
      ['q Q0 d 1 2.5 \t', 5],
    ] as const) {
      expect(() => fields(`${line}\n`)).toThrow(new RegExp(`r\\.txt:1: a run line needs 6 fields .* found ${found}$`));
      expect(() => fields(line)).toThrow(new RegExp(`found ${found}$`));
    }
  });
});

describe('scanTrecRunFast', () => {
  /** What a scanner hands on (every field and the line number) or the error it throws, and its line count. */
  const outcome = (scan: typeof scanTrecRun, text: string, start = 0) => {
    const got: string[] = [];
    const sink: RunLineSink = {
      line(b, lineNo, qs, qe, ds, de, score, ts, te) {
        got.push(`${lineNo}|${b.toString('utf8', qs, qe)}|${b.toString('utf8', ds, de)}|${Object.is(score, -0) ? '-0' : score}|${b.toString('utf8', ts, te)}`);
      },
    };
    const buf = Buffer.from(text);
    try {
      return { got, lines: scan(buf, start, buf.length, 7, 'r.txt', sink) };
    } catch (e) {
      return { got, error: (e as Error).message };
    }
  };

  const tricky = [
    'q1 Q0 d1 1 2.5 tag\n',
    'q1 Q0 d1 1 2.5 tag',
    'q1\tQ0\td1\t1\t-2.5\ttag extra\r\n',
    '\n# comment\n  q1 Q0 d1 1 3 t\n\n',
    'q1 Q0 d1 1 1e3 t\nq1 Q0 d2 1 +4 t\nq1 Q0 d3 1 .5 t\nq1 Q0 d4 1 5. t\n',
    'q1 Q0 d1 1 1234567890.123456789 t\nq1 Q0 d2 1 0.000000000000000000001 t\n',
    'q1 Q0 d1 1 2.5.1 t\n',
    'q1 Q0 d1 1 x t\n',
    'q1 Q0 d1 1 . t\n',
    'q1 Q0 d1 1 2.5\n',
    'q1 Q0 d1 1 2.5 \t\n',
    'q1 Q0 d1 1\n',
    'q1 Q0\n',
    'q1\n',
    'q1\x0bQ0\x0cd1 1 2 t\n',
    'q1 Q0 d\x01x 1 2 t\n',
    'q1 Q0 d\u00e9 1 2 t\u00e9\n',
    'q1 Q0 d1 1 2 t\rq2 Q0 d2 1 2 t\n',
    '#q1 Q0 d1 1 2 t\nq2 Q0 d2 1 -0 t\n',
    // Digit counts at the fast path's edges: 9 and 10 digits on either side of the point, 15 and 16 in all.
    'q1 Q0 d1 1 999999999.999999 t\nq1 Q0 d2 1 2147483648.5 t\nq1 Q0 d3 1 0.999999999 t\nq1 Q0 d4 1 0.9999999999 t\n',
    'q1 Q0 d1 1 123456.123456789 t\nq1 Q0 d2 1 1234567.123456789 t\nq1 Q0 d3 1 999999999 t\nq1 Q0 d4 1 4294967296 t\n',
    'q1 Q0 d1 1 000000000000000.5 t\nq1 Q0 d2 1 0.000000001 t\nq1 Q0 d3 1 30.123456 t\nq1 Q0 d4 1 00 t\n',
  ];

  it('hands on the same lines, values and errors as scanTrecRun', () => {
    for (const text of tricky) expect(outcome(scanTrecRunFast, text), JSON.stringify(text)).toEqual(outcome(scanTrecRun, text));
    // From inside a buffer: the same as scanning that part alone.
    expect(outcome(scanTrecRunFast, 'junk\nq1 Q0 d1 1 2 t\n', 5)).toEqual(outcome(scanTrecRun, 'junk\nq1 Q0 d1 1 2 t\n', 5));
  });

  it('parses random plain decimal scores of 1 to 17 digits as scanTrecRun does', () => {
    let seed = 11;
    const rand = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const digits = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');
    let text = '';
    for (let k = 0; k < 3000; k++) {
      const whole = Math.floor(rand() * 12);
      const frac = Math.floor(rand() * 12);
      text += `q Q0 d${k} 1 ${digits(whole)}${rand() < 0.8 ? '.' : ''}${digits(frac)} t\n`;
    }
    expect(outcome(scanTrecRunFast, text)).toEqual(outcome(scanTrecRun, text));
  });

  it('agrees with scanTrecRun on random lines built from the bytes that matter', () => {
    // mulberry32: seeded, so a failure reproduces.
    const rand = mulberry32(12345);
    const parts = ['q1', 'Q0', 'd', '7', '0.25', '-3', '1e2', '.', '#', ' ', ' ', ' ', '\t', '\r', '\x0b', '\n', '\n', 'tag', '12.5', '\x02'];
    for (let k = 0; k < 2000; k++) {
      let text = '';
      const n = 1 + Math.floor(rand() * 30);
      for (let j = 0; j < n; j++) text += parts[Math.floor(rand() * parts.length)];
      if (rand() < 0.5) text += ' q Q0 d 1 2 t\n';
      expect(outcome(scanTrecRunFast, text), JSON.stringify(text)).toEqual(outcome(scanTrecRun, text));
    }
  });
});

describe('scanTrecQrelsFast', () => {
  // Capacity 1 (raised to QrelsLines' minimum): long inputs grow the arrays while scanning.
  const collect = (lines: QrelsLines, buf: Buffer): string[] => {
    const got: string[] = [];
    for (let k = 0; k < lines.n; k++)
      got.push(
        `${lineAt(buf, lines.qs[k]!)}|${buf.toString('utf8', lines.qs[k], lines.qe[k])}|${buf.toString('utf8', lines.ds[k], lines.de[k])}|${lines.grade[k]}|${lines.hash[k]}|${lines.same[k]}`,
      );
    return got;
  };
  /** The fast scanner either takes the whole file, handing on what scanTrecQrels does, or gives up after a prefix of it. */
  const check = (text: string) => {
    const buf = Buffer.from(text);
    const fast = new QrelsLines(1);
    const took = scanTrecQrelsFast(buf, fast);
    const full = new QrelsLines(1);
    let error: string | undefined;
    try {
      scanTrecQrels(buf, 'q.txt', full);
    } catch (e) {
      error = (e as Error).message;
    }
    if (took) {
      expect(error, JSON.stringify(text)).toBeUndefined();
      expect(collect(fast, buf), JSON.stringify(text)).toEqual(collect(full, buf));
    } else expect(collect(full, buf).slice(0, fast.n), JSON.stringify(text)).toEqual(collect(fast, buf));
    return took;
  };

  it('takes the common file and hands on what scanTrecQrels does', () => {
    expect(check('q1 0 d1 1\nq1 0 d2 0\r\n\n# note\n  q2\t0\td3  -1 \nq2 0 d4 +2')).toBe(true);
    expect(check('q1 0 d1 -0\n')).toBe(true);
    // 100 lines: the arrays grow from 16 to 128 lines during the scan.
    expect(check(Array.from({ length: 100 }, (_, i) => `q${i % 7} 0 d${i} ${i % 3}\n`).join(''))).toBe(true);
    const lines = new QrelsLines(1);
    const buf = Buffer.from('q1 0 ab 1\nq1 0 b 0\nq10 0 ab 1\n\nq10\t0 c 2\nq1 0 d 1\n');
    expect(scanTrecQrelsFast(buf, lines)).toBe(true);
    // Each query id compared with the line before's, the blank line in between notwithstanding.
    expect([...lines.same.subarray(0, lines.n)]).toEqual([0, 1, 0, 1, 0]);
    // fnv1a('ab') by hand: h = (0x811c9dc5 ^ 0x61) * 0x01000193, then (h ^ 0x62) * 0x01000193, mod 2^32.
    const step = (h: number, c: number) => Math.imul(h ^ c, 0x01000193);
    expect(lines.hash[0]).toBe(step(step(0x811c9dc5 | 0, 0x61), 0x62));
    expect(lines.hash[2]).toBe(lines.hash[0]);
    for (const text of [
      'query-id\tcorpus-id\tscore\nq1\td1\t1\n',
      'q1 0 d1\n',
      'q1 0 d1 1 x\n',
      'q1 0 d1 1.5\n',
      'q1 0 d1 1234567890\n',
      'q1\x0b0 d1 1\n',
      '\r\n',
    ])
      expect(check(text), JSON.stringify(text)).toBe(false);
  });

  it('agrees with scanTrecQrels on random lines built from the bytes that matter', () => {
    const rand = mulberry32(777);
    const parts = ['q1', '0', 'd', '7', '-3', '+', '#', ' ', ' ', '\t', '\r', '\x0b', '\n', '\n', 'x', '1.5'];
    let took = 0;
    for (let k = 0; k < 2000; k++) {
      let text = '';
      if (rand() < 0.5) text += 'q 0 d 1\n';
      const n = 1 + Math.floor(rand() * 20);
      for (let j = 0; j < n; j++) text += parts[Math.floor(rand() * parts.length)];
      if (check(text)) took++;
    }
    // Both outcomes are exercised.
    expect(took).toBeGreaterThan(50);
    expect(took).toBeLessThan(1950);
  });
});

describe('evaluation without -q', () => {
  // 300 qrels queries; the run skips every 7th and adds queries without qrels (x*), scores with ties.
  const rand = mulberry32(99);
  let qrels = '';
  const blocks: [string, string][] = [];
  for (let q = 1; q <= 300; q++) {
    for (let d = 0; d < 20; d++) if (rand() < 0.6) qrels += `q${q} 0 d${d} ${Math.floor(rand() * 4) - (rand() < 0.05 ? 2 : 0)}\n`;
    if (q % 7 === 0) continue;
    let lines = '';
    for (let d = 0; d < 40; d++)
      lines += `q${q} Q0 d${Math.floor(rand() * 1000) % 60 === d ? d : d + 100 * Math.floor(rand() * 3)}x${d} ${d} ${(Math.round(rand() * 8) / 2).toFixed(1)} tag\n`;
    blocks.push([`q${q}`, lines]);
    if (q % 50 === 0) blocks.push([`x${q}`, `x${q} Q0 d1 1 1 tag\n`]);
  }
  const qrelsPath = join(dir, 'sums.qrels');
  writeFileSync(qrelsPath, qrels);
  const numeric = join(dir, 'sums-numeric.run');
  writeFileSync(numeric, blocks.map(([, l]) => l).join(''));
  const bytewise = join(dir, 'sums-bytewise.run');
  writeFileSync(
    bytewise,
    [...blocks]
      .sort(([x], [y]) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
      .map(([, l]) => l)
      .join(''),
  );

  it('keeps only running sums, and sums to the same bits as the rows of every query (in and out of order, with and without -c)', async () => {
    const index = QrelsIndex.fromBuffer(Buffer.from(qrels), qrelsPath);
    for (const averageComplete of [false, true]) {
      for (const runPath of [bytewise, numeric]) {
        const base = { ...settings, averageComplete, measures: ['all_trec'] };
        const withRows = await evaluateTrecRunFile(index, runPath, compileTrecPlan({ ...base, perQuery: true }), { threads: 1 });
        const sums = await evaluateTrecRunFile(index, runPath, compileTrecPlan({ ...base, perQuery: false }), { threads: 1 });
        expect(withRows.rows.length).toBeGreaterThan(0);
        expect(sums.rows.length).toBe(0);
        expect([...sums.summary]).toEqual([...withRows.summary]);
        expect(sums.queryIds).toEqual(withRows.queryIds);
        expect(sums.missingQueries).toEqual(withRows.missingQueries);
        expect(sums.droppedRunQueries).toEqual(withRows.droppedRunQueries);
        expect(sums.runTag).toBe('tag');
      }
    }
  });
});
