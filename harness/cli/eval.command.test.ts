import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { attachNegativeValues, parseTrecEvalArgs } from './eval.command.js';
import { tempDir } from '../testing/temp.js';

const dir = tempDir('eval-cmd');

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Runs the CLI; `log` holds what it said on stderr, through the logger and the top-level error report. */
async function cli(args: string[]): Promise<{ code: number; out: string; log: string[] }> {
  const r = await runCaptured(args, dir);
  return { code: r.code, out: r.out, log: [...r.log, ...r.stderr.split('\n').filter((l) => l !== '')] };
}

// q1: a relevant at rank 2 (b non-relevant ranks first); q2: x relevant (grade 2) at rank 1; q3 judged only.
const QRELS = file('qrels', 'q1 0 a 1\nq1 0 b 0\nq2 0 x 2\nq3 0 y 1\n');
const RUN = file('run', 'q1 Q0 b 1 2.0 runA\nq1 Q0 a 2 1.0 runA\nq2 Q0 x 1 5.0 runA\nq9 Q0 z 1 1.0 runA\n');

describe('trec_eval command line', () => {
  it('reads attached values, grouped flags and options after the file names (getopt_long)', () => {
    const a = parseTrecEvalArgs(['-qc', '-mrelstring.20', 'Q', '-l2', 'R', '-M100', '-m', 'P.5', '--measure=map', '-J', '-N', '7']);
    expect(a.qrelsPath).toBe('Q');
    expect(a.runPath).toBe('R');
    expect(a.settings).toEqual({
      perQuery: true,
      summary: true,
      averageComplete: true,
      judgedOnly: true,
      relevanceLevel: 2,
      maxDocs: 100,
      numDocsInColl: 7,
      measures: ['relstring.20', 'P.5', 'map'],
    });
    expect(parseTrecEvalArgs(['--', '-odd-name', 'R']).qrelsPath).toBe('-odd-name');
    expect(parseTrecEvalArgs(['-n', '--query_eval', 'Q', 'R']).settings.summary).toBe(false);
  });
  it('rejects what trec_eval rejects, and what we do not implement, with a usage error', () => {
    expect(() => parseTrecEvalArgs(['-x', 'Q', 'R'])).toThrow(/unknown option '-x'/);
    expect(() => parseTrecEvalArgs(['Q', 'R', '-m'])).toThrow(/'-m' needs a value/);
    expect(() => parseTrecEvalArgs(['Q'])).toThrow(/expected QRELS and RUN/);
    expect(() => parseTrecEvalArgs(['-Z', 'z', 'Q', 'R'])).toThrow(/-Z/);
    expect(() => parseTrecEvalArgs(['-R', 'qrels_jg', 'Q', 'R'])).toThrow(/qrels_jg/);
  });
});

describe('harness eval', () => {
  it('prints trec_eval output: per query in qrels order, then the summary', async () => {
    const { code, out, log } = await cli(['eval', '-q', '-m', 'P.1,2', '-m', 'recip_rank', QRELS, RUN]);
    expect(code).toBe(0);
    expect(out).toBe(
      [
        'recip_rank            \tq1\t0.5000', // a at rank 2
        'P_1                   \tq1\t0.0000',
        'P_2                   \tq1\t0.5000',
        'recip_rank            \tq2\t1.0000',
        'P_1                   \tq2\t1.0000',
        'P_2                   \tq2\t0.5000',
        'recip_rank            \tall\t0.7500', // (0.5 + 1) / 2: q3 has no results and is left out without -c
        'P_1                   \tall\t0.5000',
        'P_2                   \tall\t0.5000',
        '',
      ].join('\n'),
    );
    expect(log.join('\n')).toMatch(/1 run query has no qrels/);
    expect(log.join('\n')).toMatch(/1 qrels query is missing from the run; left out of the averages/);
  });
  it('-c averages over every qrels query, the missing one scoring 0', async () => {
    const { out } = await cli(['eval', '-c', '-m', 'recip_rank', '-m', 'num_q', QRELS, RUN]);
    expect(out).toBe('num_q                 \tall\t3\nrecip_rank            \tall\t0.5000\n'); // (0.5 + 1 + 0) / 3
  });
  it('-l2 raises the relevance level', async () => {
    const { out } = await cli(['eval', '-l2', '-m', 'num_rel', QRELS, RUN]);
    expect(out).toBe('num_rel               \tall\t1\n'); // only x has grade >= 2
  });
  it('-J drops unjudged documents before ranking, -M keeps the top M', async () => {
    const qrels = file('j.qrels', 'q 0 a 1\nq 0 b 0\n');
    const run = file('j.run', 'q Q0 x 1 3.0 r\nq Q0 a 2 2.0 r\nq Q0 b 3 1.0 r\n'); // x has no judgment
    const m = ['-m', 'num_ret', '-m', 'recip_rank'];
    expect((await cli(['eval', ...m, qrels, run])).out).toBe('num_ret               \tall\t3\nrecip_rank            \tall\t0.5000\n');
    expect((await cli(['eval', '-J', ...m, qrels, run])).out).toBe('num_ret               \tall\t2\nrecip_rank            \tall\t1.0000\n');
    expect((await cli(['eval', '-M1', ...m, qrels, run])).out).toBe('num_ret               \tall\t1\nrecip_rank            \tall\t0.0000\n');
  });
  it('--format csv/json/table use canonical measure names', async () => {
    const csv = await cli(['eval', '-q', '-m', 'P.1', '-m', 'ndcg_cut.10', '--format', 'csv', QRELS, RUN]);
    expect(csv.out).toBe(`query,P@1,nDCG@10\nq1,0,${1 / Math.log2(3)}\nq2,1,1\nall,0.5,${(1 / Math.log2(3) + 1) / 2}\n`);
    const json = JSON.parse((await cli(['eval', '-l2', '-m', 'P.1', '--format=json', QRELS, RUN])).out) as Record<string, unknown>;
    expect(json['summary']).toEqual({ 'P(rel=2)@1': 0.5 });
    expect(json['missingQueries']).toEqual(['q3']);
    expect(json['droppedRunQueries']).toEqual(['q9']);
    const table = await cli(['eval', '-m', 'map', '-m', 'num_ret', '--format', 'table', QRELS, RUN]);
    expect(table.out).toBe('measure     all\n-------  ------\nNumRet        3\nAP       0.7500\n');
  });
  it("gives the same numbers when a query's lines are not contiguous", async () => {
    const split = file('split.run', 'q1 Q0 b 1 2.0 runA\nq2 Q0 x 1 5.0 runA\nq1 Q0 a 2 1.0 runA\n');
    const a = await cli(['eval', '-q', '-m', 'all_trec', QRELS, RUN]);
    const b = await cli(['eval', '-q', '-m', 'all_trec', QRELS, split]);
    expect(b.code).toBe(0);
    expect(b.out).toBe(a.out);
  });
  it('orders tied scores by docId descending whatever the file order (sorted, tie groups, unsorted)', async () => {
    const qrels = file('tie.qrels', 't 0 d2 1\n');
    // d2 is relevant; it ties with d1 and d3 at 1.0, so trec_eval ranks d3 d2 d1 after the 2.0 document.
    const inOrder = file('tie1.run', 't Q0 top 1 2.0 r\nt Q0 d3 2 1.0 r\nt Q0 d2 3 1.0 r\nt Q0 d1 4 1.0 r\n');
    const tiesAscending = file('tie2.run', 't Q0 top 1 2.0 r\nt Q0 d1 2 1.0 r\nt Q0 d2 3 1.0 r\nt Q0 d3 4 1.0 r\n');
    const shuffled = file('tie3.run', 't Q0 d1 2 1.0 r\nt Q0 top 1 2.0 r\nt Q0 d2 3 1.0 r\nt Q0 d3 4 1.0 r\n');
    for (const run of [inOrder, tiesAscending, shuffled]) {
      expect((await cli(['eval', '-m', 'recip_rank', qrels, run])).out).toBe('recip_rank            \tall\t0.3333\n');
    }
  });
  it('exits 2 with file:line on malformed input, never printing numbers', async () => {
    const bad = file('bad.run', 'q1 Q0 a 1 1.0 r\nq1 Q0 b 2 x r\n');
    const r = await cli(['eval', QRELS, bad]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    const dup = file('dup.qrels', 'q1 0 a 1\nq1 0 a 1\n');
    expect((await cli(['eval', dup, RUN])).code).toBe(2);
    expect((await cli(['eval', '-m', 'nope', QRELS, RUN])).code).toBe(2);
    expect((await cli(['eval', '--threads', 'many', QRELS, RUN])).code).toBe(2);
    const none = file('other.run', 'zz Q0 a 1 1.0 r\n');
    expect((await cli(['eval', QRELS, none])).code).toBe(2);
  });
});

describe('harness eval: strict flag values', () => {
  // trec_eval's atol() read each of these as a number (1e3 -> 1, abc -> 0, 2.9 -> 2) and printed results.
  const cases: [string[], RegExp][] = [
    [['-M', '1e3'], /-M "1e3": not a whole number; write -M 1000/],
    [['-M1e3'], /-M "1e3": not a whole number/],
    [['-M', 'abc'], /-M "abc": not a whole number/],
    [['-l', 'abc'], /-l "abc": not a whole number/],
    [['-l', '2.9'], /-l "2.9": not a whole number/],
    [['-N', '7x'], /-N "7x": not a whole number/],
    [['-l', '-1'], /-l -1: the relevance level must be 0 or more/],
    [['-M', '-5'], /-M -5: give how many documents/],
    [['-M', '0'], /-M 0: give how many documents/],
    [['-N', '-3'], /-N -3: the collection size must be 0 or more/],
    [['--Max_retrieved_per_topic', '-5'], /-M -5/],
  ];
  for (const [flags, message] of cases) {
    it(`refuses ${flags.join(' ')} naming the flag, exit 2, no numbers`, async () => {
      const r = await cli(['eval', ...flags, '-m', 'map', QRELS, RUN]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.log.join('\n')).toMatch(message);
    });
  }
  it('still reads whole numbers in every form getopt allows', () => {
    expect(parseTrecEvalArgs(['-l', '+2', '-M', '010', 'Q', 'R']).settings).toMatchObject({ relevanceLevel: 2, maxDocs: 10 });
  });
});

describe('harness eval: measure names from other tools', () => {
  it('answers a canonical or alias name with the trec_eval spelling that gives the same number', async () => {
    const r = await cli(['eval', '-m', 'nDCG@10', QRELS, RUN]);
    expect(r.code).toBe(2);
    expect(r.log.join('\n')).toMatch(/-m nDCG@10: harness eval -m takes trec_eval's measure names; nDCG@10 is `-m ndcg_cut.10`/);
    expect((await cli(['eval', '-m', 'MAP', QRELS, RUN])).log.join('\n')).toMatch(/AP is `-m map`/);
    expect((await cli(['eval', '-m', 'P(rel=2)@5', QRELS, RUN])).log.join('\n')).toMatch(/`-l 2 -m P.5`/);
    expect((await cli(['eval', '-m', 'Judged@10', QRELS, RUN])).log.join('\n')).toMatch(/Judged@10 has no trec_eval equivalent/);
  });
  it('suggests the trec_eval name for a mistyped one, ignoring case', async () => {
    expect((await cli(['eval', '-m', 'NDCG_CUT.10', QRELS, RUN])).log.join('\n')).toMatch(/`-m ndcg_cut.10`/);
    expect((await cli(['eval', '-m', 'Num_Ret', QRELS, RUN])).log.join('\n')).toMatch(/`-m num_ret`/);
    expect((await cli(['eval', '-m', 'ndcg_cutt.10', QRELS, RUN])).log.join('\n')).toMatch(/did you mean 'ndcg_cut'/);
  });
  it('lists both spellings of the measures in --help', async () => {
    const r = await cli(['eval', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/trec_eval measures \(-m\): num_q, num_ret/);
    expect(r.out).toMatch(/ndcg_cut/);
    expect(r.out).toMatch(/nDCG +normalised DCG/);
    expect(r.out).toMatch(/R-all +1 if every relevant document/);
  });
});

describe('harness eval: relevance level above every grade', () => {
  it('refuses -l above the highest grade instead of printing zeros', async () => {
    const r = await cli(['eval', '-l', '9', '-m', 'map', QRELS, RUN]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.log.join('\n')).toMatch(/-l 9: relevance level 9 is above the highest grade in the qrels \(2\)/);
    expect((await cli(['eval', '-l', '2', '-m', 'map', QRELS, RUN])).code).toBe(0);
  });
});

describe('harness eval: input formats', () => {
  const plain = async (qrels: string, run: string) => (await cli(['eval', '-q', '-m', 'all_trec', qrels, run])).out;
  it('drops a UTF-8 byte-order mark with a note, so the first query keeps its id', async () => {
    // With the mark kept, q1 of the run became "\uFEFFq1" and lost its judgments (map 0.4167, not 0.6667).
    const bomRun = file('bom.run', `\uFEFF${readFileSync(RUN, 'utf8')}`);
    const bomQrels = file('bom.qrels', `\uFEFF${readFileSync(QRELS, 'utf8')}`);
    const r = await cli(['eval', '-q', '-m', 'all_trec', bomQrels, bomRun]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(await plain(QRELS, RUN));
    expect(r.log.join('\n')).toMatch(/bom\.run: a UTF-8 byte-order mark at the start of the file was ignored/);
    expect(r.log.join('\n')).toMatch(/bom\.qrels: a UTF-8 byte-order mark/);
  });
  it('reads gzip runs and qrels, whatever their names', async () => {
    const gzRun = join(dir, 'run.gz');
    writeFileSync(gzRun, gzipSync(readFileSync(RUN)));
    const gzQrels = join(dir, 'qrels-gz'); // named without .gz: the magic bytes decide
    writeFileSync(gzQrels, gzipSync(readFileSync(QRELS)));
    const r = await cli(['eval', '-q', '-m', 'all_trec', gzQrels, gzRun]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(await plain(QRELS, RUN));
    const broken = join(dir, 'broken.gz');
    writeFileSync(broken, gzipSync(readFileSync(RUN)).subarray(0, 20));
    const b = await cli(['eval', QRELS, broken]);
    expect(b.code).toBe(2);
    expect(b.log.join('\n')).toMatch(/broken\.gz: cannot decompress/);
  });
  it("reads BEIR's qrels TSV (header query-id corpus-id score)", async () => {
    const tsv = file('test.tsv', 'query-id\tcorpus-id\tscore\nq1\ta\t1\nq1\tb\t0\nq2\tx\t2\nq3\ty\t1\n');
    const r = await cli(['eval', '-q', '-m', 'all_trec', tsv, RUN]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(await plain(QRELS, RUN));
  });
  it('exits 2 naming the directory when a folder is given as RUN or QRELS', async () => {
    for (const args of [
      [QRELS, dir],
      [dir, RUN],
    ]) {
      const r = await cli(['eval', ...args]);
      expect(r.code).toBe(2);
      expect(r.log.join('\n')).toMatch(/is a directory, not a TREC file/);
    }
  });
});

describe('negative flag values reach our getopt whole', () => {
  it('joins a separate negative value to its flag, and stops at --', () => {
    expect(attachNegativeValues(['-l', '-1', '-qM', '-5', '--Max_retrieved_per_topic', '-2', 'Q', '--', '-l', '-3'])).toEqual([
      '-l-1',
      '-qM-5',
      '--Max_retrieved_per_topic=-2',
      'Q',
      '--',
      '-l',
      '-3',
    ]);
    expect(attachNegativeValues(['-c', '-5'])).toEqual(['-c', '-5']); // -c takes no value
  });
});
