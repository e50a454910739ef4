import { redactUrlsIn } from './util/redact.js';

/**
 * Diagnostics and progress go to stderr; results go to stdout. One small logger, passed in, so tests can
 * capture what a command said.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /** A progress reporter for `total` steps of `label`; call `tick(n)` as work finishes and `done()` at the end. */
  progress(label: string, total: number): Progress;
}

export interface Progress {
  tick(n?: number): void;
  done(): void;
}

/** Log lines may quote a URL; its credentials never reach the terminal or a CI log. */
export function stderrLogger(opts: { quiet?: boolean } = {}): Logger {
  const err = process.stderr;
  const quiet = opts.quiet ?? false;
  return {
    info(message) {
      if (!quiet) err.write(`${redactUrlsIn(message)}\n`);
    },
    warn(message) {
      err.write(`warning: ${redactUrlsIn(message)}\n`);
    },
    progress(label, total) {
      if (quiet) return { tick() {}, done() {} };
      let doneCount = 0;
      const started = Date.now();
      let lastDraw = started;
      const tty = err.isTTY === true;
      const draw = (final: boolean) => {
        const now = Date.now();
        // A redraw per tick would dominate fast loops; a non-TTY (CI log) gets a line every few seconds only.
        if (!final && now - lastDraw < (tty ? 100 : 5000)) return;
        lastDraw = now;
        const pct = total > 0 ? Math.floor((100 * doneCount) / total) : 100;
        const secs = ((now - started) / 1000).toFixed(1);
        const width = 24;
        const filled = total > 0 ? Math.round((width * doneCount) / total) : width;
        const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
        const line = `${label} ${bar} ${doneCount}/${total} ${pct}% ${secs}s`;
        err.write(tty ? `\r${line}${final ? '\n' : ''}` : `${line}\n`);
      };
      return {
        tick(n = 1) {
          doneCount += n;
          draw(false);
        },
        done() {
          doneCount = Math.max(doneCount, total);
          draw(true);
        },
      };
    },
  };
}

/** A logger that records everything, for tests. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => void lines.push(m),
    warn: (m) => void lines.push(`warning: ${m}`),
    progress: (label, total) => ({
      tick() {},
      done: () => void lines.push(`${label} ${total}/${total}`),
    }),
  };
}
