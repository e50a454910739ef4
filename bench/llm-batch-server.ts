/**
 * The batch server of the `llm` benchmark (bench/llm-batch.ts), run as a child process so that what it holds
 * (every uploaded batch file, every request) is not counted in the bench's peak RSS. It serves OpenAI's and
 * Anthropic's batch APIs through `startBatchLoopback` and answers each UMBRELA prompt `##final score: N`, N
 * given by {@link benchGrade} over the prompt's query and passage, so the bench can check every grade it gets.
 *
 * Protocol: run as `node --import tsx bench/llm-batch-server.ts` (the loopback is test code, left out of dist/);
 * it prints `url <server root>` on stdout, serves until its stdin closes, then prints one JSON line
 * ({@link ServerReport}) and exits.
 */
import { fileURLToPath } from 'node:url';

/** What the server saw, printed as its last stdout line when its stdin closes. */
export interface ServerReport {
  /** Batches created. */
  readonly batches: number;
  /** Distinct custom ids submitted, and how many of them were submitted more than once. */
  readonly distinctRequests: number;
  readonly submittedAgain: number;
  /** Prompts whose query and passage the server could not find (each answered with no grade). */
  readonly unreadPrompts: number;
}

/** The words of a text, lower-cased, letters only. */
function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[a-z]+/g) ?? [];
}

/**
 * The server's grading rule: how many distinct words of the query occur in the passage, at most 3. The bench's
 * generator plants 0-4 of a query's topic words in each of its pooled passages (and no passage holds a query's
 * other words), so the grades spread over 0-3 and a prompt sent with another pair's passage gets another grade.
 */
export function benchGrade(query: string, passage: string): number {
  const inPassage = new Set(wordsOf(passage));
  let found = 0;
  for (const w of new Set(wordsOf(query))) if (inPassage.has(w)) found++;
  return Math.min(3, found);
}

/**
 * The query and passage of a rendered umbrela-v1 prompt: the text after `Query: ` up to the line
 * `Passage: `, and from there to the first blank line (the generator's passages hold none).
 */
export function promptPair(prompt: string): { readonly query: string; readonly passage: string } | undefined {
  const m = /\nQuery: ([^\n]*)\nPassage: ([\s\S]*?)\n\n/.exec(prompt);
  return m === null ? undefined : { query: m[1] as string, passage: m[2] as string };
}

async function main(): Promise<void> {
  // Loaded here, not at the top: the bench imports this file for `benchGrade`, and the loopback is not in dist/.
  const { startBatchLoopback } = await import('../harness/testing/batch-loopback.js');
  let unread = 0;
  const server = await startBatchLoopback({
    answer(prompt) {
      const pair = promptPair(prompt);
      if (pair === undefined) {
        unread++;
        return 'no query and passage found in the prompt';
      }
      return `##final score: ${benchGrade(pair.query, pair.passage)}`;
    },
  });
  // Requests the loopback records (every upload among them) would only grow this process: drop them as they come.
  const recorded = server.loopback.requests;
  const forget = setInterval(() => recorded.splice(0, recorded.length), 1000);
  // The bench gone (killed, or failed before it stopped us): nothing reads the report, so leave quietly.
  process.stdout.on('error', () => process.exit(0));
  process.stdout.write(`url ${server.url}\n`);
  process.stdin.resume();
  await new Promise<void>((resolve) => process.stdin.on('end', resolve));
  clearInterval(forget);
  const counts = [...server.submitted.values()];
  const report: ServerReport = {
    batches: server.batchIds.length,
    distinctRequests: counts.length,
    submittedAgain: counts.filter((n) => n > 1).length,
    unreadPrompts: unread,
  };
  await server.close();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
