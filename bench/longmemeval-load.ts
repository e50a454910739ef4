/**
 * One load of a LongMemEval file, in its own process so that its peak RSS is its own: `node
 * dist/bench/longmemeval-load.js stream|whole FILE`. `stream` is the adapter as it is (a streamed read,
 * docs/adr/0042-streamed-json-datasets.md); `whole` is the way it read before, the file into one string and
 * `JSON.parse`, then the same builder. Prints one JSON line: the time, the peak RSS, and the counts the load saw
 * (or the error it met). Run by bench/longmemeval.ts.
 */
import { longMemEvalFromJson, longMemEvalOptions, readLongMemEval } from '../evalset/adapters/longmemeval.js';
import { readJsonFile } from '../evalset/lines.js';

export interface LoadOutcome {
  readonly ok: boolean;
  readonly ms: number;
  /** process.resourceUsage().maxRSS, in bytes. */
  readonly maxRss: number;
  readonly questions?: number;
  readonly sessions?: number;
  readonly turns?: number;
  readonly abstention?: number;
  readonly documents?: number;
  readonly error?: string;
}

async function loadOnce(mode: string, file: string): Promise<LoadOutcome> {
  const options = longMemEvalOptions.parse({});
  const t0 = performance.now();
  try {
    const { evalSet, stats } = mode === 'stream' ? await readLongMemEval(file, options) : longMemEvalFromJson(file, await readJsonFile(file), options);
    const ms = performance.now() - t0;
    return {
      ok: true,
      ms,
      maxRss: process.resourceUsage().maxRSS * 1024,
      questions: stats.questions,
      sessions: stats.sessions,
      turns: stats.turns,
      abstention: stats.abstention.length,
      documents: evalSet.documents.length,
    };
  } catch (e) {
    return { ok: false, ms: performance.now() - t0, maxRss: process.resourceUsage().maxRSS * 1024, error: e instanceof Error ? e.message : String(e) };
  }
}

const [mode, file] = process.argv.slice(2);
if ((mode === 'stream' || mode === 'whole') && file !== undefined) {
  process.stdout.write(`${JSON.stringify(await loadOnce(mode, file))}\n`);
} else {
  process.stderr.write('usage: node dist/bench/longmemeval-load.js stream|whole FILE\n');
  process.exitCode = 2;
}
