import { describe, expect, it } from 'vitest';
import { memoryLogger, progressLine, withDetail } from '../log.js';

/** The progress line the LLM stages show on stderr: done of total, pending, failed and an ETA from the rate so far. */

describe('progressLine', () => {
  const at = (done: number, failed: number, elapsedMs: number, final = false) =>
    progressLine({ label: 'judge', total: 5000, done, failed, elapsedMs, final }, 8);

  it('shows done of total, pending, failed and the ETA at the rate so far', () => {
    // 1200 in 12.3 s: 3800 more at that rate take 39 s.
    expect(at(1200, 3, 12_300)).toBe('judge [##......] 1200/5000 24% pending 3800 failed 3 12.3s ETA 39s');
  });

  it('leaves out failed while none failed, and the ETA before anything is done', () => {
    expect(at(0, 0, 500)).toBe('judge [........] 0/5000 0% pending 5000 0.5s');
    expect(at(2500, 0, 60_000)).toBe('judge [####....] 2500/5000 50% pending 2500 60.0s ETA 1m00s');
    expect(at(50, 0, 60_000)).toBe('judge [........] 50/5000 1% pending 4950 60.0s ETA 1h39m');
  });

  it('the final line is the old one, plus how many failed', () => {
    expect(at(5000, 0, 90_000, true)).toBe('judge [########] 5000/5000 100% 90.0s');
    expect(at(5000, 7, 90_000, true)).toBe('judge [########] 5000/5000 100% failed 7 90.0s');
    expect(progressLine({ label: 'x', total: 0, done: 0, failed: 0, elapsedMs: 0, final: true }, 4)).toBe('x [####] 0/0 100% 0.0s');
  });
});

describe('Progress.fail', () => {
  it('the test loggers accept it and still write the same done line', () => {
    const log = memoryLogger();
    const p = withDetail(log).progress('reader', 3);
    p.tick();
    p.fail?.(2);
    p.done();
    expect(log.lines).toEqual(['reader 3/3']);
  });
});
