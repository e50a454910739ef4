import { describe, expect, it } from 'vitest';
import { scanTrecRun } from '../../../evalset/trec.js';
import { Rng } from '../../stats/rng.js';
import { fnv1a } from '../qrels-lines.js';
import { RunScanMemory } from '../run-scan.js';
import { H, STOP } from './run-scan-kernels.js';

/** One kernel stop: why, where, and the block lines it took since the last stop. */
interface Stop {
  readonly stop: number;
  readonly pos: number;
  readonly line: number;
  readonly taken: (string | number)[][];
  readonly disorder: number;
  readonly ties: number;
}

/**
 * Drives a RunScanMemory over `text` as BlockSink does, with the judged hashes given per query id: a new
 * query opens a block, a line the kernel does not take is stepped over, a full block grows. Returns every stop.
 */
function drive(set: 'js' | 'wasm', text: Buffer, judged: (qid: string) => Int32Array | null | undefined, chunk = text.length): Stop[] {
  const mem = new RunScanMemory(set);
  const stops: Stop[] = [];
  let line = 1;
  for (let start = 0; start < text.length; ) {
    const end = Math.min(text.length, start + chunk);
    const cut = end === text.length ? end : text.lastIndexOf(10, end - 1) + 1;
    const range = mem.load(text, start, cut > start ? cut : end, line);
    for (;;) {
      const from = mem.header[H.N]!;
      const stop = mem.kernels.scan();
      const h = mem.header;
      const taken: (string | number)[][] = [];
      for (let i = from; i < h[H.N]!; i++) {
        taken.push([mem.view.toString('latin1', mem.docStart[i]!, mem.docEnd[i]!), mem.scores[i]!, mem.lines[i]!, mem.hashes[i]!, mem.grades[i]!]);
      }
      stops.push({ stop, pos: h[H.POS]! - range.stop, line: h[H.LINE]!, taken, disorder: h[H.DISORDER]!, ties: h[H.TIES]! });
      if (stop === STOP.END) break;
      if (stop === STOP.FULL) mem.reserveLine();
      else if (stop === STOP.NEW_QUERY) {
        const qid = mem.view.toString('latin1', h[H.QS]!, h[H.QE]!);
        mem.startBlock(mem.view, h[H.QS]!, h[H.QE]!, judged(qid));
      } else {
        h[H.POS] = mem.view.indexOf(10, h[H.POS]!) + 1;
        h[H.LINE]! += 1;
      }
    }
    line = mem.header[H.LINE]!;
    start = cut > start ? cut : end;
  }
  return stops;
}

/** A run text of `lines` lines drawn from the bytes and shapes that matter to the scanner. */
function randomRun(rng: Rng, lines: number): string {
  const pick = <T>(xs: readonly T[]): T => xs[rng.nextInt(xs.length)]!;
  const blank = () => pick([' ', ' ', ' ', '\t', '  ', ' \t']);
  const score = () =>
    pick([
      () => String(rng.nextInt(100)),
      () => (rng.nextFloat() * 50).toFixed(rng.nextInt(10)),
      () => (rng.nextFloat() * 50).toFixed(6),
      () => `-${rng.nextFloat().toFixed(3)}`,
      () => `${rng.nextFloat().toExponential(3)}`,
      () => '1234567890.5',
      () => '0.1234567890',
      () => '123456789.123456',
      () => '12345678.1234567',
      () => '.5',
      () => '7.',
      () => '1.2.3',
    ])();
  let q = 1;
  let out = '';
  for (let k = 0; k < lines; k++) {
    if (rng.nextFloat() < 0.05) q++;
    const qid = rng.nextFloat() < 0.01 ? `q${'x'.repeat(70)}${q}` : `q${q}`;
    const doc = rng.nextFloat() < 0.03 ? 'D1' : `D${rng.nextInt(rng.nextFloat() < 0.5 ? 30 : 2_000_000)}`;
    const tag = rng.nextFloat() < 0.02 ? `tag${'-'.repeat(60)}` : 'run';
    const fields = [qid, 'Q0', doc, String(k + 1), score(), tag];
    const shape = rng.nextFloat();
    if (shape < 0.02) out += '\n';
    else if (shape < 0.04) out += `# a comment\n`;
    else if (shape < 0.06) out += `${blank()}${fields.join(blank())}\n`;
    else if (shape < 0.08) out += `${fields.join(' ')}\r\n`;
    else if (shape < 0.1) out += `${fields.slice(0, 5).join(' ')}\n`;
    else if (shape < 0.12) out += `${fields.join(' ')} extra\n`;
    else if (shape < 0.14) out += `${fields.join(' ')}\v\n`;
    else out += `${fields.join(rng.nextFloat() < 0.1 ? blank() : ' ')}\n`;
  }
  return out;
}

describe('run scan kernel: the js and wasm sets agree, and agree with scanTrecRun', () => {
  for (const [seed, lines, chunk] of [
    [301, 3000, 1 << 30],
    [302, 3000, 4096],
    [303, 20_000, 1 << 30],
  ] as const) {
    it(`${lines} random lines, chunks of ${chunk === 1 << 30 ? 'the whole text' : `${chunk} bytes`}: the same stops, lines, values and counts`, () => {
      const rng = new Rng(seed);
      const text = Buffer.from(randomRun(rng, lines), 'latin1');
      // Judged hashes: none for every third query, not given for every fifth, else a few of D0..D29.
      const judged = (qid: string): Int32Array | null | undefined => {
        const q = Number(qid.replace(/\D/g, '')) || 0;
        if (q % 3 === 0) return null;
        if (q % 5 === 0) return undefined;
        const ids = Array.from({ length: 1 + (q % 7) }, (_, k) => Buffer.from(`D${(q * 7 + k) % 30}`));
        return Int32Array.from(ids, (b) => fnv1a(b, 0, b.length) | 0);
      };
      const js = drive('js', text, judged, chunk);
      const wasm = drive('wasm', text, judged, chunk);
      expect(wasm.length).toBe(js.length);
      for (let k = 0; k < js.length; k++) expect(wasm[k], `stop ${k}`).toEqual(js[k]);
      expect(js.some((s) => s.stop === STOP.MAYBE_DUPLICATE)).toBe(true);
      expect(js.some((s) => s.stop === STOP.UNCOMMON)).toBe(true);
      expect(js.filter((s) => s.stop === STOP.NEW_QUERY).length).toBeGreaterThan(10);
    });
  }

  it('takes a line only as scanTrecRun reads it: the same fields, score and hash', () => {
    const rng = new Rng(304);
    const text = Buffer.from(randomRun(rng, 5000), 'latin1');
    const reference = new Map<number, (string | number)[]>();
    const sink = {
      line: (buf: Buffer, lineNo: number, _qs: number, _qe: number, ds: number, de: number, score: number) => {
        reference.set(lineNo, [buf.toString('latin1', ds, de), score, fnv1a(buf, ds, de) | 0]);
      },
    };
    // Line by line: scanTrecRun throws at a score it does not read (the kernel steps over that line).
    for (let at = 0, lineNo = 1; at < text.length; lineNo++) {
      const next = text.indexOf(10, at) + 1;
      try {
        scanTrecRun(text, at, next, lineNo, 'run', sink);
      } catch {}
      at = next;
    }
    let taken = 0;
    for (const stop of drive('wasm', text, () => undefined)) {
      for (const [doc, score, line, hash] of stop.taken) {
        expect([doc, score, hash], `line ${line}`).toEqual(reference.get(line as number));
        taken++;
      }
    }
    expect(taken).toBeGreaterThan(2000);
  });

  it('grows its memory for a long query and a large chunk, keeping the block and its duplicate table', () => {
    const lines: string[] = [];
    for (let k = 0; k < 5000; k++) lines.push(`q1 Q0 D${k} ${k + 1} ${(5000 - k) / 8} run`);
    lines.push('q1 Q0 D17 5001 0 run');
    const text = Buffer.from(`${lines.join('\n')}\n${'q2 Q0 D1 1 1 run\n'.repeat(1)}${`q3 Q0 D1 1 1 ${'t'.repeat(40)}\n`.repeat(40_000)}`);
    for (const set of ['js', 'wasm'] as const) {
      const stops = drive(set, text, () => null);
      const q1 = stops.slice(0, stops.findIndex((s) => s.stop === STOP.MAYBE_DUPLICATE) + 1);
      expect(q1.filter((s) => s.stop === STOP.FULL).length, set).toBe(3);
      expect(q1.flatMap((s) => s.taken).length, set).toBe(5000);
      expect(q1.at(-1)!.line, set).toBe(5001);
      expect(q1.at(-1)!.disorder, set).toBe(0);
    }
  });
});
