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
  /** `n` steps finished with a failure (instead of `tick`): they count as done, and the line shows how many failed. */
  fail?(n?: number): void;
  done(): void;
}

/** Where a progress line stands: steps done (failed ones included), of them failed, and the time so far. */
export interface ProgressState {
  readonly label: string;
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  readonly elapsedMs: number;
  /** The last line, at `done()`: no ETA. */
  readonly final: boolean;
}

/** Whole seconds, or minutes and seconds past a minute, or hours and minutes past an hour, for an ETA. */
function shortDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * One progress line: `judge [####....] 1200/5000 24% pending 3800 failed 3 12.3s ETA 41s`. Pending and the ETA
 * (the rate so far, over what is left) show while steps remain; failed shows once one failed.
 */
export function progressLine(p: ProgressState, width = 24): string {
  const pct = p.total > 0 ? Math.floor((100 * p.done) / p.total) : 100;
  const filled = p.total > 0 ? Math.min(width, Math.round((width * p.done) / p.total)) : width;
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const pending = Math.max(0, p.total - p.done);
  const parts = [`${p.label} ${bar} ${p.done}/${p.total} ${pct}%`];
  if (pending > 0 && !p.final) parts.push(`pending ${pending}`);
  if (p.failed > 0) parts.push(`failed ${p.failed}`);
  parts.push(`${(p.elapsedMs / 1000).toFixed(1)}s`);
  if (pending > 0 && !p.final && p.done > 0) parts.push(`ETA ${shortDuration((p.elapsedMs / p.done) * pending)}`);
  return parts.join(' ');
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
      if (quiet) return { tick() {}, fail() {}, done() {} };
      return stderrProgress(err, label, total);
    },
  };
}

/** The progress reporter of the stderr logger: a redrawn line on a terminal, a line every few seconds in a log. */
function stderrProgress(err: NodeJS.WriteStream, label: string, total: number): Progress {
  let doneCount = 0;
  let failed = 0;
  const started = Date.now();
  let lastDraw = started;
  const tty = err.isTTY === true;
  const draw = (final: boolean) => {
    const now = Date.now();
    // A redraw per tick would dominate fast loops; a non-TTY (CI log) gets a line every few seconds only.
    if (!final && now - lastDraw < (tty ? 100 : 5000)) return;
    lastDraw = now;
    const line = progressLine({ label, total, done: doneCount, failed, elapsedMs: now - started, final });
    // On a terminal the line is redrawn in place; the trailing erase clears what a longer line left behind.
    err.write(tty ? `\r${line}\x1b[K${final ? '\n' : ''}` : `${line}\n`);
  };
  return {
    tick(n = 1) {
      doneCount += n;
      draw(false);
    },
    fail(n = 1) {
      doneCount += n;
      failed += n;
      draw(false);
    },
    done() {
      doneCount = Math.max(doneCount, total);
      draw(true);
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
      fail() {},
      done: () => void lines.push(`${label} ${total}/${total}`),
    }),
  };
}
