import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/**
 * What an OutputSpool holds in memory before it moves its text to a temporary file: 8 MB, about 2,000
 * queries of `-q -m all_trec`. Measured at 50k x 100 (ADR 0023): peak RSS 172 MB with 32 MB, 128 MB with 8,
 * 105-110 MB with 1, the same CPU time; the text held costs about twice its size until the GC catches up.
 */
export const SPOOL_BUDGET_BYTES = 8 * 2 ** 20;

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Where an OutputSpool spills, and beyond how many bytes. */
export interface SpoolOptions {
  /** Bytes of text kept in memory before everything goes to a file; default SPOOL_BUDGET_BYTES. */
  readonly budgetBytes?: number;
  /** Folder of the temporary file; default os.tmpdir(). */
  readonly dir?: string;
}

/**
 * Output held back until a command has succeeded (`harness eval -q`: a late input error must print nothing
 * partial), with bounded memory: text is kept in memory up to `budgetBytes`, then everything so far and after
 * goes to a temporary file in os.tmpdir() (mode 0600), which is removed by dispose(), by drain() and, should
 * the process end first, on exit or at SIGINT, SIGTERM or SIGHUP (then re-raised).
 */
export class OutputSpool {
  private readonly budget: number;
  private readonly dir: string;
  private pieces: string[] = [];
  private held = 0;
  private fd: number | undefined;
  private path: string | undefined;
  private readonly onExit = (): void => this.dispose();
  // Ctrl-C and kill end the process without 'exit': remove the file, then die of the signal as before.
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    this.dispose();
    process.kill(process.pid, signal);
  };
  /** Bytes written so far (UTF-8). */
  bytes = 0;

  constructor(opts: SpoolOptions = {}) {
    this.budget = opts.budgetBytes ?? SPOOL_BUDGET_BYTES;
    this.dir = opts.dir ?? tmpdir();
  }

  /** The temporary file's path once the text outgrew the budget (tests check that it is gone). */
  get file(): string | undefined {
    return this.path;
  }

  write(text: string): void {
    const n = Buffer.byteLength(text, 'utf8');
    this.bytes += n;
    if (this.fd !== undefined) {
      writeSync(this.fd, text, null, 'utf8');
      return;
    }
    this.pieces.push(text);
    this.held += n;
    if (this.held > this.budget) this.spill();
  }

  /** Hands the text, in order, to `out` (in pieces of about 1 MB once spilled), then disposes of the spool. */
  drain(out: (text: string) => void): void {
    try {
      if (this.fd === undefined) {
        // Each piece is let go once printed: the budget is not held twice over (text and its printed copy).
        const pieces = this.pieces;
        this.pieces = [];
        for (let i = 0; i < pieces.length; i++) {
          const p = pieces[i]!;
          pieces[i] = '';
          out(p);
        }
        return;
      }
      const buf = Buffer.allocUnsafe(1 << 20);
      // A piece may end inside a UTF-8 character (a query id's): the decoder carries it to the next.
      const decoder = new StringDecoder('utf8');
      for (let pos = 0; ; ) {
        const got = readSync(this.fd, buf, 0, buf.length, pos);
        if (got === 0) break;
        pos += got;
        const text = decoder.write(buf.subarray(0, got));
        if (text) out(text);
      }
      const rest = decoder.end();
      if (rest) out(rest);
    } finally {
      this.dispose();
    }
  }

  /** Drops the text and removes the temporary file, if any; safe to call twice. */
  dispose(): void {
    this.pieces = [];
    this.held = 0;
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
    if (this.path !== undefined) {
      rmSync(this.path, { force: true });
      this.path = undefined;
      process.removeListener('exit', this.onExit);
      for (const signal of SIGNALS) process.removeListener(signal, this.onSignal);
    }
  }

  private spill(): void {
    const path = join(this.dir, `harness-eval-${process.pid}-${randomBytes(6).toString('hex')}.spool`);
    // 'wx': never an existing file (another user's link in a shared /tmp); 0600: the output is the user's alone.
    this.fd = openSync(path, 'wx+', 0o600);
    this.path = path;
    process.once('exit', this.onExit);
    for (const signal of SIGNALS) process.once(signal, this.onSignal);
    for (const p of this.pieces) writeSync(this.fd, p, null, 'utf8');
    this.pieces = [];
    this.held = 0;
  }
}
