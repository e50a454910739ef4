import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../harness/log.js';
import { BoundedStderr } from './stderr.js';

describe('BoundedStderr', () => {
  it('logs whole lines up to its budget, counts the rest, and keeps the last KiB for a failure message', async () => {
    const stream = new PassThrough();
    const log = memoryLogger();
    const stderr = new BoundedStderr(stream, 'arm (stderr)', log, 4096);
    stream.write('starting\nhalf a ');
    stream.write('line\n');
    for (let i = 0; i < 1000; i++) stream.write(`${'z'.repeat(999)}\n`);
    stream.end('fatal: out of memory\n');
    await stderr.settled();
    expect(log.lines.slice(0, 2)).toEqual(['arm (stderr): starting', 'arm (stderr): half a line']);
    const logged = log.lines.join('\n').length;
    expect(logged).toBeLessThan(4096 + 1200);
    expect(log.lines).toContain('warning: arm (stderr): more than 4 KiB of stderr; the rest is counted, not logged');
    expect(stderr.dropped).toBeGreaterThan(990_000);
    expect(log.lines.at(-1)).toBe(`warning: arm (stderr): ${stderr.dropped} characters of stderr were not logged`);
    expect(stderr.describe()).toMatch(/^; \d+ characters of its stderr were not logged; the end of its stderr: ".*fatal: out of memory"$/s);
    expect(stderr.describe().length).toBeLessThan(1200);
  });

  it('cuts a line that never ends, so a partial line cannot grow without bound', async () => {
    const stream = new PassThrough();
    const log = memoryLogger();
    const stderr = new BoundedStderr(stream, 's', log);
    for (let i = 0; i < 100; i++) stream.write('y'.repeat(1000));
    stream.end();
    await stderr.settled();
    expect(log.lines[0]).toMatch(/^s: y{4096} \.\.\. \(\d+ more characters\)$/);
    expect(log.lines.join('').length).toBeLessThan(70 * 1024);
  });
});
