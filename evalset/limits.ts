import { InputError } from '../harness/errors.js';

/**
 * The input limits (docs/limits.md): sizes past which the harness refuses an input at load, naming the file,
 * the line and the limit, instead of running for hours or running out of memory. Each is far above any real
 * eval set we know of; one past it is almost always a wrong file or a generator gone wrong.
 */
export const LIMITS = {
  /**
   * Characters of one Query's text. The longest real queries (LongMemEval questions, BEIR arguana's argument
   * passages) are a few thousand; a lexical Arm's search cost grows with the query's distinct terms.
   */
  queryChars: 65_536,
  /**
   * Characters of one Document's text. A Wikipedia article is under a megabyte; every Arm holds its Corpus in
   * memory, and a line is read whole, so one Document must stay far below V8's largest string (512 MiB).
   */
  documentChars: 8 * 1024 * 1024,
  /**
   * Distinct Strata of one EvalSet or strata file. Every Stratum adds a Comparison per Measure and pair of Runs,
   * each with its own resampling: 1,000 strata compare in seconds, 5,000 took two minutes, 100,000 never finished.
   */
  strata: 1_000,
  /**
   * Bytes of text of a `run-file` Arm's run file (a gzip file's, decompressed). A run is held in memory whole, at about 4 bytes of heap per byte of file at its peak (an 84 MB run
   * took 154 MB of heap once read), so 512 MiB stays inside the default 4 GiB heap with room for the rest.
   */
  runFileBytes: 512 * 1024 * 1024,
} as const;

/** A Query text past {@link LIMITS.queryChars}, as an InputError naming where it is. */
export function checkQueryText(file: string, line: number | undefined, id: string, text: string, limit: number = LIMITS.queryChars): void {
  if (text.length <= limit) return;
  throw new InputError(
    file,
    line,
    `query "${id}": text is ${text.length.toLocaleString('en-US')} characters, past the limit of ${limit.toLocaleString('en-US')}`,
    {
      hint: 'a query is one information need; check that the text field holds the question, not a document (limits: docs/limits.md)',
    },
  );
}

/**
 * A Document text past {@link LIMITS.documentChars}, as an InputError naming where it is (by id and line only:
 * the Document may be Sensitive).
 */
export function checkDocumentText(file: string, line: number | undefined, id: string, text: string, limit: number = LIMITS.documentChars): void {
  if (text.length <= limit) return;
  throw new InputError(
    file,
    line,
    `document "${id}": text is ${text.length.toLocaleString('en-US')} characters, past the limit of ${limit.toLocaleString('en-US')}`,
    {
      hint: 'split it into smaller documents (a chunk transform does this for an Arm), or check the file is a corpus (limits: docs/limits.md)',
    },
  );
}

/**
 * Counts distinct strata as they are read and throws at the first one past {@link LIMITS.strata}, naming the
 * file and line that introduced it.
 */
export class StrataCounter {
  private readonly seen = new Set<string>();
  constructor(
    private readonly file: string,
    private readonly limit: number = LIMITS.strata,
  ) {}

  add(stratum: string, line: number | undefined): void {
    if (this.seen.has(stratum)) return;
    this.seen.add(stratum);
    if (this.seen.size <= this.limit) return;
    throw new InputError(
      this.file,
      line,
      `stratum "${stratum}" is distinct stratum number ${this.seen.size}, past the limit of ${this.limit.toLocaleString('en-US')} strata`,
      {
        hint: 'strata group queries for reporting; a stratum per query is usually an id written where the stratum goes (limits: docs/limits.md)',
      },
    );
  }
}
