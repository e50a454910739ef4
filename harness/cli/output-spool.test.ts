import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { OutputSpool } from './output-spool.js';
import { tempDir } from '../testing/temp.js';

const dir = tempDir('spool');

function drained(spool: OutputSpool): string {
  let out = '';
  spool.drain((t) => {
    out += t;
  });
  return out;
}

describe('OutputSpool', () => {
  it('keeps text within its budget in memory and hands it on in order', () => {
    const spool = new OutputSpool({ budgetBytes: 100, dir });
    spool.write('a\t1\n');
    spool.write('b\t2\n');
    expect(spool.file).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
    expect(spool.bytes).toBe(8);
    expect(drained(spool)).toBe('a\t1\nb\t2\n');
  });

  it('moves everything to a 0600 file past the budget, hands it on whole, then removes the file', () => {
    const spool = new OutputSpool({ budgetBytes: 10, dir });
    spool.write('12345');
    spool.write('67890');
    expect(spool.file).toBeUndefined();
    // 11 bytes: over the budget of 10.
    spool.write('é');
    const file = spool.file!;
    expect(readdirSync(dir)).toEqual([file.slice(dir.length + 1)]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Past the file's first 1 MB read, with a two-byte character across the boundary.
    const long = `${'x'.repeat((1 << 20) - 12)}é${'y'.repeat(100)}ü\n`;
    spool.write(long);
    expect(spool.bytes).toBe(12 + Buffer.byteLength(long));
    const pieces: string[] = [];
    spool.drain((t) => pieces.push(t));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(`1234567890é${long}`);
    expect(existsSync(file)).toBe(false);
    expect(spool.file).toBeUndefined();
  });

  it('disposes of its text and file without printing anything (an evaluation that failed), twice if need be', () => {
    const spool = new OutputSpool({ budgetBytes: 4, dir });
    spool.write('query lines');
    const file = spool.file!;
    expect(existsSync(file)).toBe(true);
    spool.dispose();
    spool.dispose();
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('removes its file when drain fails half-way', () => {
    const spool = new OutputSpool({ budgetBytes: 0, dir });
    spool.write('x');
    const file = spool.file!;
    expect(() =>
      spool.drain(() => {
        throw new Error('stdout closed');
      }),
    ).toThrow('stdout closed');
    expect(existsSync(file)).toBe(false);
  });
});

const DIST_SPOOL = join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'output-spool.js');
const built = existsSync(DIST_SPOOL);
if (!built) process.stderr.write('[skip] OutputSpool at exit and signals: dist/ is not built (run `npm run build`)\n');

(built ? describe : describe.skip)('OutputSpool when the process ends first (dist/)', () => {
  // A child spills a spool, prints the file's path, then exits (code 3) or waits for a signal.
  const child = (end: string) =>
    spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { OutputSpool } from ${JSON.stringify(pathToFileURL(DIST_SPOOL).href)};
         const s = new OutputSpool({ budgetBytes: 0, dir: ${JSON.stringify(dir)} });
         s.write('-q lines');
         process.stdout.write(s.file + '\\n');
         ${end}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
  const run = (end: string, signal?: NodeJS.Signals) =>
    new Promise<{ file: string; code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const c = child(end);
      let out = '';
      c.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (signal && out.endsWith('\n')) {
          expect(existsSync(out.trim())).toBe(true);
          c.kill(signal);
        }
      });
      c.on('error', reject);
      c.on('exit', (code, sig) => resolve({ file: out.trim(), code, signal: sig }));
    });

  it('removes the file at process.exit()', async () => {
    const r = await run('process.exit(3);');
    expect(r.code).toBe(3);
    expect(r.file).not.toBe('');
    expect(existsSync(r.file)).toBe(false);
  });

  it('removes the file at SIGINT and SIGTERM, then dies of the signal', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const r = await run('setInterval(() => {}, 1000);', signal);
      expect(r.signal).toBe(signal);
      expect(existsSync(r.file)).toBe(false);
    }
  });
});
