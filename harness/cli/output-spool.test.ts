import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OutputSpool } from './output-spool.js';

const dir = mkdtempSync(join(tmpdir(), 'spool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
