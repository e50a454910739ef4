import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../harness/errors.js';
import {
  formatTrecQrels,
  formatTrecRun,
  parseScore,
  parseTrecQrels,
  parseTrecRun,
  readTrecQrels,
  readTrecRun,
  streamTrecRun,
  writeTrecRun,
  type RunLineSink,
} from './trec.js';
import { tempDir } from '../harness/testing/temp.js';

const dir = tempDir('trec-test');

describe('TREC qrels', () => {
  it('reads graded and negative judgments, comment lines, blank lines and CRLF', () => {
    const q = parseTrecQrels('# a comment\n301 0 d1 2\r\n\n301 0 CR#93E-1 0\n  # indented comment\n302 0 d1 -1\n', 'q.txt');
    expect([...q.keys()]).toEqual(['301', '302']);
    expect([...q.get('301')!]).toEqual([
      ['d1', 2],
      ['CR#93E-1', 0],
    ]); // '#' inside an id is not a comment
    expect(q.get('302')!.get('d1')).toBe(-1);
  });
  it('names the file and line of a malformed line', () => {
    expect(() => parseTrecQrels('301 0 d1 1\n301 0 d2\n', 'q.txt')).toThrow(/q\.txt:2: a qrels line needs 4 fields .* found 3/);
    expect(() => parseTrecQrels('301 0 d1 1 extra\n', 'q.txt')).toThrow(/q\.txt:1: .*found 5/);
    expect(() => parseTrecQrels('301 0 d1 1.5\n', 'q.txt')).toThrow(/q\.txt:1: grade "1\.5" is not an integer/);
    expect(() => parseTrecQrels('\n\n301 0 d1 high\n', 'q.txt')).toThrow(/q\.txt:3: grade "high"/);
    expect(() => parseTrecQrels('301 0 d1 1\n301 0 d1 0\n', 'q.txt')).toThrow(/q\.txt:2: document "d1" is judged twice for query "301" \(first at line 1\)/);
    try {
      parseTrecQrels('x', 'q.txt');
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).line).toBe(1);
      expect((e as InputError).exitCode).toBe(2);
    }
  });
  it('writes what it reads', async () => {
    const text = '1 0 a 1\n1 0 b 0\n2 0 a -1\n';
    const q = parseTrecQrels(text, 'q');
    expect(formatTrecQrels(q)).toBe(text);
    writeFileSync(join(dir, 'q.txt'), text);
    expect(await readTrecQrels(join(dir, 'q.txt'))).toEqual(q);
    await expect(readTrecQrels(join(dir, 'missing.txt'))).rejects.toThrow(/missing\.txt: file not found/);
  });
});

describe('TREC runs', () => {
  it('ignores the rank column and trailing fields, keeps the last run tag', () => {
    const { run, runTag } = parseTrecRun('q1 Q0 a 7 1.5 tagA more junk\n# c\n\nq1\tQ0\tb\t1\t2.5\ttagB\n', 'r.txt');
    expect([...run.get('q1')!]).toEqual([
      ['a', 1.5],
      ['b', 2.5],
    ]);
    expect(runTag).toBe('tagB');
  });
  it('reads decimal scores exactly as strtod (correctly rounded)', () => {
    const texts = ['1', '-2', '+.5', '1e-3', '2.5E+2', '0.43973446508046793', '123456789012345678901234567890', '0.1', '-0.0'];
    for (const t of texts) {
      const b = Buffer.from(t);
      expect(Object.is(parseScore(b, 0, b.length), Number(t))).toBe(true);
    }
    for (const bad of ['abc', '1.2.3', '1e', '', '.', '0x10', 'inf', 'NaN', '1,5']) {
      const b = Buffer.from(bad);
      expect(parseScore(b, 0, b.length)).toBeNaN();
    }
    let seed = 3;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 5000; i++) {
      const t = (rnd() * 10 ** Math.floor(rnd() * 12 - 6)).toPrecision(1 + Math.floor(rnd() * 17));
      const b = Buffer.from(t);
      expect(parseScore(b, 0, b.length)).toBe(Number(t));
    }
  });
  it('names the file and line of a malformed line', () => {
    expect(() => parseTrecRun('q Q0 a 1 1.0 r\nq Q0 b 2 1.0\n', 'r.txt')).toThrow(/r\.txt:2: a run line needs 6 fields .* found 5/);
    expect(() => parseTrecRun('q Q0 a 1 high r\n', 'r.txt')).toThrow(/r\.txt:1: score "high" is not a decimal number/);
    expect(() => parseTrecRun('q Q0 a 1 1 r\nq Q0 a 2 0.5 r\n', 'r.txt')).toThrow(/r\.txt:2: document "a" appears twice/);
  });
  it('streams across chunk boundaries with the same lines and line numbers', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 200; i++) lines.push(`q${i % 7 === 0 ? 'x' : i >> 4} Q0 doc-${i} ${i} ${(1000 - i) / 7} run${i % 3}`);
    const text = `${lines.join('\n')}\n`;
    const path = join(dir, 'stream.run');
    writeFileSync(path, text);
    const seen: string[] = [];
    const sink: RunLineSink = {
      line(buf, lineNo, qs, qe, ds, de, score, ts, te) {
        seen.push(`${lineNo} ${buf.toString('utf8', qs, qe)} ${buf.toString('utf8', ds, de)} ${score} ${buf.toString('utf8', ts, te)}`);
      },
    };
    await streamTrecRun(path, sink, 16);
    expect(seen).toEqual(
      lines.map((l, i) => {
        const f = l.split(' ');
        return `${i + 1} ${f[0]} ${f[2]} ${Number(f[4])} ${f[5]}`;
      }),
    );
    writeFileSync(path, `${text}q Q0 d 1 oops r\n`);
    await expect(streamTrecRun(path, sink, 16)).rejects.toThrow(/stream\.run:201: score "oops"/);
  });
  it('writes rank = position in trec_eval order (score desc, docId desc) and reads back the same run', async () => {
    const run = new Map([
      [
        'q2',
        new Map([
          ['a', 1],
          ['b', 1],
          ['c', 3],
        ]),
      ],
      ['q1', new Map([['z', 0.1]])],
    ]);
    const text = formatTrecRun(run, 'my-run');
    expect(text).toBe('q1 Q0 z 1 0.1 my-run\nq2 Q0 c 1 3 my-run\nq2 Q0 b 2 1 my-run\nq2 Q0 a 3 1 my-run\n');
    const path = join(dir, 'out', 'w.run');
    await writeTrecRun(path, run, 'my-run');
    expect(readFileSync(path, 'utf8')).toBe(text);
    const back = await readTrecRun(path);
    expect(back.runTag).toBe('my-run');
    expect(back.run).toEqual(
      new Map([
        ['q1', run.get('q1')],
        [
          'q2',
          new Map([
            ['c', 3],
            ['b', 1],
            ['a', 1],
          ]),
        ],
      ]),
    );
    expect(() => formatTrecRun(new Map([['q', new Map([['has space', 1]])]]), 'r')).toThrow(UsageError);
    expect(() => formatTrecRun(run, '')).toThrow(/run tag/);
  });
  it('keeps every score bit through a write and a read', () => {
    const scores = [0.1 + 0.2, 1e-300, -5e-324, 123456.789e10, 2 ** 53 + 2];
    const run = new Map([['q', new Map(scores.map((s, i) => [`d${i}`, s]))]]);
    const back = parseTrecRun(formatTrecRun(run, 't'), 'x').run.get('q')!;
    scores.forEach((s, i) => expect(back.get(`d${i}`)).toBe(s));
  });
});

describe('TREC files from other tools', () => {
  it("reads BEIR's qrels TSV: header, 3 tab-separated fields, ids that hold spaces", () => {
    const q = parseTrecQrels('query-id\tcorpus-id\tscore\r\nq1\tdoc one\t2\r\nq1\td2\t0\nq2\td1\t1\n', 'test.tsv');
    expect([...q.get('q1')!]).toEqual([
      ['doc one', 2],
      ['d2', 0],
    ]);
    expect(q.get('q2')!.get('d1')).toBe(1);
    expect(() => parseTrecQrels('query-id\tcorpus-id\tscore\nq1\td1\n', 'test.tsv')).toThrow(/test\.tsv:2: a BEIR qrels line needs 3 tab-separated fields/);
    expect(() => parseTrecQrels('query-id\tcorpus-id\tscore\nq1\td1\tx\n', 'test.tsv')).toThrow(/test\.tsv:2: grade "x" is not an integer/);
    // Without the header a 3-field line is malformed TREC, and the message says how BEIR's file is recognised.
    try {
      parseTrecQrels('q1\td1\t1\n', 'test.tsv');
      expect.unreachable();
    } catch (e) {
      expect((e as InputError).message).toMatch(/test\.tsv:1: a qrels line needs 4 fields .* found 3/);
      expect((e as InputError).hint).toMatch(/query-id<TAB>corpus-id<TAB>score/);
    }
  });
  it('drops a UTF-8 byte-order mark at the start, and only there', async () => {
    expect([...parseTrecQrels('\uFEFFq1 0 d1 1\n', 'q').keys()]).toEqual(['q1']);
    expect([...parseTrecRun('\uFEFFq1 Q0 d1 1 1 r\n', 'r').run.keys()]).toEqual(['q1']);
    const path = join(dir, 'bom.run');
    writeFileSync(path, '\uFEFFq1 Q0 d1 1 1 r\nq2 Q0 d1 1 1 r\n');
    const notes: string[] = [];
    expect([...(await readTrecRun(path, (n) => notes.push(n))).run.keys()]).toEqual(['q1', 'q2']);
    expect(notes).toEqual([`${path}: a UTF-8 byte-order mark at the start of the file was ignored`]);
    const streamed: string[] = [];
    await streamTrecRun(path, { line: (b, _l, qs, qe) => void streamed.push(b.toString('utf8', qs, qe)) }, 8);
    expect(streamed).toEqual(['q1', 'q2']);
  });
  it('reads gzip files, streamed or whole, with the same lines and line numbers', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `q${i >> 6} Q0 d${i} ${i} ${3000 - i} tag`);
    const path = join(dir, 'big.run.gz');
    writeFileSync(path, gzipSync(`\uFEFF${lines.join('\n')}\n`));
    const seen: string[] = [];
    const notes: string[] = [];
    await streamTrecRun(
      path,
      { line: (b, lineNo, qs, qe, ds, de) => void seen.push(`${lineNo} ${b.toString('utf8', qs, qe)} ${b.toString('utf8', ds, de)}`) },
      64,
      undefined,
      undefined,
      (n) => notes.push(n),
    );
    expect(seen).toEqual(lines.map((l, i) => `${i + 1} ${l.split(' ')[0]} ${l.split(' ')[2]}`));
    expect(notes).toHaveLength(1);
    expect((await readTrecRun(path)).run.size).toBe(Math.ceil(3000 / 64));
    writeFileSync(path, gzipSync(`${lines.join('\n')}\nq Q0 x 1 bad tag\n`));
    await expect(streamTrecRun(path, { line() {} })).rejects.toThrow(/big\.run\.gz:3001: score "bad"/);
    await expect(streamTrecRun(path, { line() {} }, 64, undefined, { start: 10, end: 100 })).rejects.toThrow(/cannot be read from byte 10/);
  });
  it('names a directory given as a file, with exit code 2', async () => {
    for (const read of [() => readTrecRun(dir), () => readTrecQrels(dir), () => streamTrecRun(dir, { line() {} })]) {
      await expect(read()).rejects.toThrow(/is a directory, not a TREC file/);
      await expect(read()).rejects.toBeInstanceOf(InputError);
    }
  });
});
