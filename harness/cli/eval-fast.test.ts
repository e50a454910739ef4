import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { memoryLogger } from '../log.js';
import { runCaptured } from '../testing/cli.js';
import { evalArgsOf, fastEvalArgs, runEvalFast } from './eval-fast.js';
import { tempDir } from '../testing/temp.js';

const dir = tempDir('eval-fast');

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const QRELS = file('qrels', 'q1 0 a 1\nq1 0 b 0\nq2 0 x 2\nq3 0 y 1\n');
const RUN = file('run', 'q1 Q0 b 1 2.0 runA\nq1 Q0 a 2 1.0 runA\nq2 Q0 x 1 5.0 runA\nq9 Q0 z 1 1.0 runA\n');
const BAD = file('bad', 'q1 Q0 b 1 2.0 runA\nq1 Q0 a 2 oops runA\n');

/** runEvalFast as runCaptured runs the CLI: exit code, stdout, stderr and the logger's lines. */
async function fast(args: string[]) {
  let out = '';
  let stderr = '';
  const log = memoryLogger();
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    stderr += String(s);
    return true;
  });
  try {
    const code = await runEvalFast(args, { out: (t) => void (out += t), log, env: {}, cwd: dir });
    return { code, out, stderr, log: log.lines };
  } finally {
    spy.mockRestore();
  }
}

describe('harness eval without yargs', () => {
  it('prints, logs and exits as the full CLI does, results and errors alike', async () => {
    const lines = [
      ['-q', '-m', 'P.1,2', '-m', 'recip_rank', QRELS, RUN],
      [QRELS, RUN, '--format', 'csv', '-q'],
      ['--format=json', '--threads=1', QRELS, RUN],
      ['--threads', '2', '-c', '-m', 'all_trec', QRELS, RUN],
      ['--threads', '0', QRELS, RUN],
      ['-l', '-1', QRELS, RUN],
      ['-m', 'nDCG@10', QRELS, RUN],
      ['-x', QRELS, RUN],
      [QRELS, BAD],
      [QRELS, join(dir, 'missing')],
      [QRELS],
    ];
    for (const args of lines) {
      const got = await fast(args);
      const want = await runCaptured(['eval', ...args], dir);
      expect(got, args.join(' ')).toEqual(want);
    }
  });

  it('prints the same bytes when the output takes bytes (outBytes) as when it takes strings', async () => {
    const chunks: string[] = [];
    const io = (bytes: boolean) => ({
      out: (t: string) => void chunks.push(`s:${t}`),
      ...(bytes ? { outBytes: (b: Uint8Array) => void chunks.push(`b:${Buffer.from(b).toString('utf8')}`) } : {}),
      log: memoryLogger(),
      env: {},
      cwd: dir,
    });
    // Queries out of trec_eval's order: the qrels are indexed and the -q lines written at the end (not spooled).
    const args = ['--threads', '1', '-q', '-m', 'all_trec', '-c', QRELS, file('run-unsorted', 'q2 Q0 x 1 5.0 runA\nq1 Q0 b 1 2.0 runA\nq1 Q0 a 2 1.0 runA\n')];
    expect(await runEvalFast(args, io(false))).toBe(0);
    const strings = chunks.splice(0);
    expect(await runEvalFast(args, io(true))).toBe(0);
    expect(chunks.some((c) => c.startsWith('b:'))).toBe(true);
    expect(chunks.map((c) => c.slice(2)).join('')).toBe(strings.map((c) => c.slice(2)).join(''));
  });

  it('leaves to yargs what only yargs reads', () => {
    for (const args of [
      ['--help'],
      ['-h', QRELS, RUN],
      ['--version'],
      ['--format', 'xml', QRELS, RUN],
      ['--format', QRELS, RUN, '--format', 'csv'],
      ['--threads'],
      ['--', QRELS, RUN],
      ['--no-verbose', QRELS, RUN],
    ]) {
      expect(fastEvalArgs(args), args.join(' ')).toBeUndefined();
    }
    expect(fastEvalArgs(['-qc', '--format', 'table', QRELS, '--verbose', RUN])).toEqual({
      args: ['-qc', QRELS, RUN],
      format: 'table',
      threads: 'auto',
      verbose: true,
    });
  });

  it('takes eval options given before the command, as yargs does', async () => {
    for (const line of [
      ['--threads', '1', 'eval', '-q', '-m', 'all_trec', QRELS, RUN],
      ['--threads=2', '--verbose', 'eval', QRELS, BAD],
      ['--format', 'csv', 'eval', '-q', QRELS, RUN],
    ]) {
      const args = evalArgsOf(line);
      expect(args, line.join(' ')).toBeDefined();
      expect(await fast(args!), line.join(' ')).toEqual(await runCaptured(line, dir));
    }
    expect(evalArgsOf(['eval', QRELS, RUN])).toEqual([QRELS, RUN]);
    expect(evalArgsOf(['--threads', '1', 'eval', '-q'])).toEqual(['-q', '--threads', '1']);
    // Anything else before the command, or no command, is yargs' to read.
    for (const line of [['--help', 'eval'], ['ablate', '--config', 'eval'], ['--threads', 'eval', QRELS], ['--jobs', '2', 'eval'], []]) {
      expect(evalArgsOf(line), line.join(' ')).toBeUndefined();
    }
  });
});
