import { redactUrlsIn } from './util/redact.js';

/**
 * Diagnostics and progress go to stderr; results go to stdout. One small logger, passed in, so tests can
 * capture what a command said.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  /**
   * How the work was done rather than what it found (a system that fell back to the main thread, plan
   * details): printed only when the user asked with `--verbose`. A logger without it drops such lines.
   */
  detail?(message: string): void;
  /** A progress reporter for `total` steps of `label`; call `tick(n)` as work finishes and `done()` at the end. */
  progress(label: string, total: number): Progress;
}

export interface Progress {
  tick(n?: number): void;
  done(): void;
}

/** Log lines may quote a URL; its credentials never reach the terminal or a CI log. */
export function stderrLogger(opts: { quiet?: boolean; verbose?: boolean } = {}): Logger {
  const err = process.stderr;
  const quiet = opts.quiet ?? false;
  return {
    info(message) {
      if (!quiet) err.write(`${redactUrlsIn(message)}\n`);
    },
    ...(opts.verbose === true && !quiet ? { detail: (message: string) => void err.write(`${redactUrlsIn(message)}\n`) } : {}),
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

/** `log` with its detail lines printed as info lines: what `--verbose` asks for. */
export function withDetail(log: Logger): Logger {
  return {
    info: (m) => log.info(m),
    warn: (m) => log.warn(m),
    detail: (m) => (log.detail ?? log.info).call(log, m),
    progress: (label, total) => log.progress(label, total),
  };
}

/** A logger that records everything, for tests; detail lines are prefixed `detail: `. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => void lines.push(m),
    warn: (m) => void lines.push(`warning: ${m}`),
    detail: (m) => void lines.push(`detail: ${m}`),
    progress: (label, total) => ({
      tick() {},
      done: () => void lines.push(`${label} ${total}/${total}`),
    }),
  };
}
