import type { Logger } from '../../harness/log.js';

/** Characters of a program's stderr passed to the log; past them the rest is only counted. */
export const STDERR_LOG_BUDGET = 64 * 1024;
/** The longest line logged: a line with no end in sight is logged cut, so a partial line never grows. */
const MAX_LINE = 4 * 1024;
/** Characters of the end of stderr kept for a failure's message. */
const TAIL = 1024;

/**
 * The stderr of a program the harness started (an MCP server, a `command` arm), passed to the log a line at a
 * time up to a budget. A program that floods stderr (a crash loop, a hostile server: gigabytes in a minute)
 * must neither fill the log nor the harness's memory, so past the budget its output is read and counted but
 * not kept, except the last KiB, which a failure's message quotes because that is where a crash says why.
 */
export class BoundedStderr {
  #logged = 0;
  #dropped = 0;
  #partial = '';
  #tail = '';
  readonly #ended: Promise<void>;

  constructor(
    stream: NodeJS.ReadableStream,
    private readonly label: string,
    private readonly log: Logger,
    private readonly budget = STDERR_LOG_BUDGET,
  ) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.#write(chunk));
    this.#ended = new Promise((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', resolve);
    }).then(() => this.#finish());
  }

  /** Characters read but not logged. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Resolves once the stream has ended, or after `ms` if it has not (a process that lingers is not waited on). */
  async settled(ms = 1000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#ended, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** The end of stderr for a failure's message (its last lines, at most 1 KiB and what was dropped), or ''. */
  describe(): string {
    const tail = this.#tail.trim();
    const dropped = this.#dropped > 0 ? `; ${this.#dropped} characters of its stderr were not logged` : '';
    return `${dropped}${tail === '' ? '' : `; the end of its stderr: ${JSON.stringify(tail)}`}`;
  }

  #write(chunk: string): void {
    this.#tail = (this.#tail + chunk).slice(-TAIL);
    if (this.#logged >= this.budget) {
      this.#dropped += chunk.length;
      return;
    }
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() as string;
    for (const line of lines) this.#line(line);
    if (this.#partial.length > MAX_LINE) {
      this.#line(this.#partial);
      this.#partial = '';
    }
  }

  #line(line: string): void {
    if (this.#logged >= this.budget) {
      this.#dropped += line.length + 1;
      return;
    }
    const shown = line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} ... (${line.length - MAX_LINE} more characters)` : line;
    this.#logged += shown.length + 1;
    this.log.info(`${this.label}: ${shown}`);
    if (this.#logged >= this.budget) this.log.warn(`${this.label}: more than ${this.budget / 1024} KiB of stderr; the rest is counted, not logged`);
  }

  #finish(): void {
    if (this.#partial !== '') this.#line(this.#partial);
    this.#partial = '';
    if (this.#dropped > 0) this.log.warn(`${this.label}: ${this.#dropped} characters of stderr were not logged`);
  }
}
