import { mulberry32 } from '../testing/mulberry32.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { INDEX_NOTE_BYTES, indexNote } from '../cli/eval-run.js';
import { QrelsBlocks, type StreamableQrels, streamableQrels } from './qrels-stream.js';
import { fnv1a } from './qrels-lines.js';
import { compileTrecPlan } from './plan.js';
import { QrelsIndex } from './qrels-index.js';
import { evaluateStreamed, evaluateTrecRunFile } from './stream-eval.js';
import { trecSettings } from '../testing/trec-settings.js';
import { tempDir } from '../testing/temp.js';

/**
 * The merge join of `harness eval` without -q (qrels streamed one query at a time): every value, list and
 * error it gives must be the in-memory index's, which the conformance suite pins to trec_eval.
 */

const dir = tempDir('qrels-stream');

function file(name: string, text: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const rand = mulberry32(7);

// 400 qrels queries with zero-padded ids (bytewise order is numeric order), grades -1..3 and a long id; the
// run skips every 9th, adds queries without qrels (x*, and q0000 before the first), scores with ties.
const ids = Array.from({ length: 400 }, (_, q) => `q${String(q + 1).padStart(4, '0')}`);
let qrelsText = '# judged by hand\n';
const runBlocks: [string, string][] = [['q0000', 'q0000 Q0 d1 1 1 tag\n']];
for (const [q, id] of ids.entries()) {
  for (let d = 0; d < 30; d++) if (rand() < 0.6) qrelsText += `${id}\t0 d${d}${d === 3 ? 'y'.repeat(300) : ''} ${Math.floor(rand() * 5) - 1}\r\n`;
  if (q === 17) qrelsText += '\n';
  if (q % 9 === 4) continue;
  let lines = '';
  for (let d = 0; d < 45; d++)
    lines += `${id} Q0 d${d % 3 === 0 ? d : d + 100}${d === 3 ? 'y'.repeat(300) : ''} ${d} ${(Math.round(rand() * 8) / 2).toFixed(1)} tag\n`;
  runBlocks.push([id, lines]);
  if (q % 50 === 0) runBlocks.push([`${id}x`, `${id}x Q0 d1 1 1 tag\n`]);
}
const QRELS = file('sorted.qrels', qrelsText);
const RUN = file('sorted.run', runBlocks.map(([, l]) => l).join(''));
// The same run in another order (the last query first): the merge join gives up, the index takes over.
const UNSORTED = file('unsorted.run', [...runBlocks.slice(-1), ...runBlocks.slice(0, -1)].map(([, l]) => l).join(''));
const base = trecSettings({ measures: ['all_trec'] });

describe('QrelsBlocks', () => {
  it('holds one query at a time, with the index lookups and grade counts, at any chunk size', () => {
    const index = QrelsIndex.fromBuffer(Buffer.from(qrelsText), QRELS);
    for (const chunk of [64, 1000, 1 << 20]) {
      const blocks = new QrelsBlocks(QRELS, chunk);
      let n = 0;
      while (blocks.next()) {
        expect(blocks.qid).toBe(index.qids[n]);
        expect(blocks.qi).toBe(n);
        expect([...blocks.levels]).toEqual([...index.relLevels[n]!]);
        for (let d = 0; d < 30; d++) {
          const doc = Buffer.from(`d${d}${d === 3 ? 'y'.repeat(300) : ''}`);
          const h = fnv1a(doc, 0, doc.length) | 0;
          expect(blocks.lookup(doc, 0, doc.length, h)).toBe(index.lookup(n, doc, 0, doc.length, h));
        }
        n++;
      }
      blocks.close();
      expect(blocks.refused).toBe(false);
      expect(n).toBe(400);
    }
  });
});

describe('streamableQrels', () => {
  it('takes grouped queries in trec_eval order, comments, blank lines and CRLF', () => {
    expect(streamableQrels(QRELS)).toEqual({ queries: 400, highestGrade: 3 });
    expect(streamableQrels(file('neg.qrels', 'a 0 d -1\nb 0 d -2\n'))).toEqual({ queries: 2, highestGrade: -1 });
  });
  it('gives the reason for anything else, so that the whole file is indexed', () => {
    expect(streamableQrels(file('num.qrels', 'q9 0 d 1\nq10 0 d 1\n'))).toBe('query "q10" comes after "q9"');
    expect(streamableQrels(file('split.qrels', 'a 0 d 1\nb 0 d 1\na 0 e 1\n'))).toBe('query "a" comes after "b"');
    expect(streamableQrels(file('beir.qrels', 'query-id\tcorpus-id\tscore\nq1\td1\t1\n'))).toBe('not in the plain four-field format throughout');
    expect(streamableQrels(file('bad.qrels', 'a 0 d 1\na 0 e x\n'))).toBe('not in the plain four-field format throughout');
    expect(streamableQrels(file('gz.qrels', gzipSync('a 0 d 1\n')))).toBe('not in the plain four-field format throughout');
    expect(streamableQrels(file('bom.qrels', '\ufeffa 0 d 1\n'))).toBe('not in the plain four-field format throughout');
    expect(streamableQrels(file('empty.qrels', '# nothing\n'))).toBe('no judgments');
    expect(streamableQrels(join(dir, 'absent.qrels'))).toBe('unreadable');
  });
});

describe('evaluateStreamed', () => {
  it('gives the index path summary to the bit, and its missing and dropped queries (-c, -J, -M, -l)', async () => {
    const index = QrelsIndex.fromBuffer(Buffer.from(qrelsText), QRELS);
    const streamable = streamableQrels(QRELS);
    if (typeof streamable === 'string') throw new Error(streamable);
    for (const extra of [
      {},
      { averageComplete: true },
      { judgedOnly: true },
      { maxDocs: 10 },
      { relevanceLevel: 2 },
      { averageComplete: true, maxDocs: 0 },
      { perQuery: true },
      { perQuery: true, averageComplete: true, measures: ['all_trec', 'relstring.10'] },
    ]) {
      const plan = compileTrecPlan({ ...base, ...extra });
      const streamed = await evaluateStreamed(QRELS, RUN, plan, streamable);
      const indexed = await evaluateTrecRunFile(index, RUN, plan, { threads: 1 });
      if (typeof streamed === 'string') throw new Error(streamed);
      expect([...streamed.summary]).toEqual([...indexed.summary]);
      expect(streamed.queryIds).toEqual(plan.settings.perQuery ? indexed.queryIds : []);
      expect([...streamed.rows]).toEqual([...indexed.rows]);
      expect(streamed.relstrings).toEqual(indexed.relstrings);
      expect(streamed.evaluated).toBe(indexed.evaluated);
      expect(streamed.missingQueries).toEqual(indexed.missingQueries);
      expect(streamed.droppedRunQueries).toEqual(indexed.droppedRunQueries);
      expect(streamed.runTag).toBe('tag');
    }
    expect((await evaluateTrecRunFile(index, RUN, compileTrecPlan(base))).missingQueries).toHaveLength(44);
  });
  it('gives up, saying why, on a run out of trec_eval order, a query that recurs, a document judged twice', async () => {
    const streamable = streamableQrels(QRELS);
    if (typeof streamable === 'string') throw new Error(streamable);
    const notInOrder = "its queries are not in trec_eval's order";
    expect(await evaluateStreamed(QRELS, UNSORTED, compileTrecPlan(base), streamable)).toBe(notInOrder);
    const recurs = file('recurs.run', 'q0001 Q0 d1 1 1 t\nq0002 Q0 d1 1 1 t\nq0001 Q0 d2 2 0 t\n');
    expect(await evaluateStreamed(QRELS, recurs, compileTrecPlan(base), streamable)).toBe(notInOrder);
    for (const dup of ['a 0 d 1\na 0 e 1\na 0 d 0\nb 0 d 1\n', 'a 0 d 1\nb 0 d 1\nb 0 e 1\nb 0 d 0\n']) {
      const path = file('dup.qrels', dup);
      const ok = streamableQrels(path);
      expect(ok).toEqual({ queries: 2, highestGrade: 1 });
      const run = file('ab.run', 'a Q0 d 1 1 t\nb Q0 d 1 1 t\n');
      expect(await evaluateStreamed(path, run, compileTrecPlan(base), ok as StreamableQrels)).toMatch(/^a document is judged twice for query "[ab]"$/);
      // Even when the run fails first: the index reports the qrels' error before any of the run's.
      const bad = file('bad-first.run', 'a Q0 d 1 x t\n');
      expect(await evaluateStreamed(path, bad, compileTrecPlan(base), ok as StreamableQrels)).toMatch(/^a document is judged twice/);
    }
  });
  it("throws the run's errors as the index path does", async () => {
    const streamable = streamableQrels(QRELS);
    if (typeof streamable === 'string') throw new Error(streamable);
    const index = QrelsIndex.fromBuffer(Buffer.from(qrelsText), QRELS);
    for (const text of ['q0001 Q0 d1 1 1 t\nq0001 Q0 d1 2 0 t\n', 'q0001 Q0 d1 1\n', '# no lines\n', 'zz Q0 d1 1 1 t\n']) {
      const run = file('bad.run', text);
      const expected = await evaluateTrecRunFile(index, run, compileTrecPlan(base)).then(
        () => 'no error',
        (e: Error) => e.message,
      );
      expect(expected).not.toBe('no error');
      await expect(evaluateStreamed(QRELS, run, compileTrecPlan(base), streamable)).rejects.toThrow(expected);
    }
  });
});

describe('harness eval, qrels streamed', () => {
  // --threads 2 never streams the qrels (and a run this small stays on one thread): the index path.
  const gzRun = file('sorted.run.gz', gzipSync(runBlocks.map(([, l]) => l).join('')));
  const gzQrels = file('sorted.qrels.gz', gzipSync(qrelsText));
  it('prints what the index path prints, byte for byte, in every mode', async () => {
    for (const flags of [[], ['-c'], ['-J', '-M', '5'], ['-l', '2'], ['-q'], ['-q', '-c', '-M', '3', '-J'], ['--format', 'json'], ['-q', '--format', 'csv']]) {
      for (const [q, r] of [
        [QRELS, RUN],
        [QRELS, UNSORTED],
        [QRELS, gzRun],
        [gzQrels, RUN],
      ] as const) {
        const streamed = await runCaptured(['eval', '-m', 'all_trec', ...flags, q, r], dir);
        const indexed = await runCaptured(['eval', '--threads', '2', '-m', 'all_trec', ...flags, q, r], dir);
        expect(streamed.code).toBe(0);
        expect(streamed.out).toBe(indexed.out);
      }
    }
  });
  it('says on stderr when large qrels are indexed in memory, and why; small ones quietly', async () => {
    const sorted = await runCaptured(['eval', '-m', 'map', QRELS, RUN], dir);
    expect(sorted.log.join('\n')).not.toMatch(/indexed in memory/);
    // Small inputs that do not stream (numeric ids sort q10 before q9 bytewise) are indexed without a word.
    const unsorted = await runCaptured(['eval', '-m', 'map', QRELS, UNSORTED], dir);
    expect(unsorted.code).toBe(0);
    expect(unsorted.log.join('\n')).not.toMatch(/indexed in memory/);
    const numeric = await runCaptured(['eval', '-m', 'map', file('n.qrels', 'q9 0 d 1\nq10 0 d 1\n'), RUN], dir);
    expect(numeric.log.join('\n')).not.toMatch(/indexed in memory/);
    const reason = "unsorted.run: its queries are not in trec_eval's order; the qrels are indexed in memory";
    expect(indexNote(reason, INDEX_NOTE_BYTES - 1)).toBeUndefined();
    expect(indexNote(reason, INDEX_NOTE_BYTES)).toBe(reason);
    expect(indexNote(undefined, INDEX_NOTE_BYTES)).toBeUndefined();
    // A qrels file that does not stream for an error gets the error alone.
    for (const text of ['a 0 d 1\na 0 e x\n', 'q0001 0 d 1\nq0001 0 d 0\n']) {
      const bad = await runCaptured(['eval', '-m', 'map', file('b.qrels', text), RUN], dir);
      expect(bad.code).toBe(2);
      expect([...bad.log, bad.stderr].join('\n')).toMatch(/b\.qrels:2: (grade "x" is not an integer|document "d" is judged twice for query "q0001")/);
      expect([...bad.log, bad.stderr].join('\n')).not.toMatch(/indexed in memory/);
    }
    // The qrels' own error comes before a relevance level above every grade, as when they are indexed.
    const dupAndLevel = await runCaptured(['eval', '-l', '5', '-m', 'map', file('d.qrels', 'q0001 0 d 1\nq0001 0 d 0\n'), RUN], dir);
    expect(dupAndLevel.code).toBe(2);
    expect([...dupAndLevel.log, dupAndLevel.stderr].join('\n')).toMatch(/d\.qrels:2: document "d" is judged twice/);
  });
});
