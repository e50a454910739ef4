/**
 * Prints the LLM-judge accuracy of mem0-protocol graded LoCoMo runs as mem0's generate_scores.py computes it
 * (the mean of `llm_score` over the file's rows, per category and overall, to 4 decimals), read through the
 * workbench's answers-file reader (harness/answer/mem0.ts) and LoCoMo's accuracy arithmetic
 * (harness/metrics/answer-accuracy.ts), so a published table can be checked against the files behind it.
 * With locomo10.json, it also maps every row onto the dataset's questions (harness/answer/map-rows.ts) and says
 * how many mapped; with two files, it compares them on the questions both answer (exact McNemar).
 *
 *   npx tsx scripts/reference/mem0_published.ts [--locomo <locomo10.json>] <run.json> [<other-run.json>]
 *
 * Where the published files come from and what they publish: docs/answers-files.md, "Reproducing published runs".
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type AnswerRow, readAnswersFile } from '../../harness/answer/files.js';
import { mapAnswerRows } from '../../harness/answer/map-rows.js';
import type { AnswerQuestion } from '../../harness/answer/types.js';
import { UsageError } from '../../harness/errors.js';
import { LOCOMO_CATEGORIES, locomoAccuracy } from '../../harness/metrics/answer-accuracy.js';
import { mcnemarExact } from '../../harness/stats/mcnemar.js';
import { projectRoot } from '../../harness/util/project.js';

interface Args {
  readonly files: readonly string[];
  readonly locomo: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const files: string[] = [];
  let locomo: string | undefined = resolve(projectRoot(), '..', 'shared', 'data', 'locomo', 'locomo10.json');
  if (!existsSync(locomo)) locomo = undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--locomo') locomo = argv[++i];
    else files.push(argv[i] as string);
  }
  if (files.length === 0 || files.length > 2) throw new UsageError('usage: mem0_published.ts [--locomo <locomo10.json>] <run.json> [<other-run.json>]');
  return { files, locomo };
}

/** LoCoMo's questions of categories 1-4 with their conversation index, ids `<sample_id>:q<i>` as the eval set makes them. */
function locomoQuestions(file: string): { questions: AnswerQuestion[]; conversation: Map<string, number> } {
  type Sample = { sample_id: string; qa: { question: string; answer?: unknown; category: number }[] };
  const questions: AnswerQuestion[] = [];
  const conversation = new Map<string, number>();
  (JSON.parse(readFileSync(file, 'utf8')) as Sample[]).forEach((s, si) => {
    s.qa.forEach((qa, qi) => {
      if (qa.category === 5) return;
      const id = `${s.sample_id}:q${qi}`;
      conversation.set(id, si);
      questions.push({ id, text: qa.question, gold: String(qa.answer), stratum: '', category: qa.category, abstention: false, evidence: [] });
    });
  });
  return { questions, conversation };
}

const pct = (correct: number, n: number) => `${(correct / n).toFixed(4)} (${correct}/${n})`;

function printAccuracy(file: string, rows: readonly AnswerRow[]): void {
  const graded = rows.filter((r) => r.recorded?.correct !== undefined);
  console.log(
    `${file}\n  rows ${rows.length}, graded ${graded.length}${graded.length < rows.length ? ` (${rows.length - graded.length} without llm_score, left out)` : ''}`,
  );
  const acc = locomoAccuracy(graded.map((r) => ({ category: r.category ?? 0, correct: r.recorded?.correct === true })));
  for (const [c, cell] of Object.entries(acc.perCategory)) {
    console.log(`  category ${c} (${LOCOMO_CATEGORIES[Number(c) as keyof typeof LOCOMO_CATEGORIES]}): ${pct(cell.correct, cell.n)}`);
  }
  console.log(`  overall, categories 1-4: ${pct(acc.overall.correct, acc.overall.n)}`);
  if (acc.withAdversarial.n !== acc.overall.n) console.log(`  with category 5: ${pct(acc.withAdversarial.correct, acc.withAdversarial.n)}`);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const locomo = args.locomo === undefined ? undefined : locomoQuestions(args.locomo);
  const mapped: Map<string, AnswerRow>[] = [];
  for (const file of args.files) {
    const rows = await readAnswersFile(file, 'mem0');
    printAccuracy(file, rows);
    if (locomo === undefined) continue;
    const m = mapAnswerRows(rows, locomo.questions, { conversationOf: (q) => locomo.conversation.get(q.id) });
    console.log(
      `  mapped onto ${args.locomo}: ${m.byQuestion.size} of ${locomo.questions.length} questions; ${m.unmapped.length} rows unmapped, ${m.missing.length} questions missing`,
    );
    mapped.push(new Map(m.byQuestion));
  }
  const [a, b] = mapped;
  if (a === undefined || b === undefined) return;
  const both = [...a.keys()].filter((id) => a.get(id)?.recorded?.correct !== undefined && b.get(id)?.recorded?.correct !== undefined);
  const onlyA = both.filter((id) => a.get(id)?.recorded?.correct === true && b.get(id)?.recorded?.correct === false).length;
  const onlyB = both.filter((id) => a.get(id)?.recorded?.correct === false && b.get(id)?.recorded?.correct === true).length;
  console.log(
    `paired on ${both.length} questions: only the first right ${onlyA}, only the second right ${onlyB}, exact McNemar p = ${mcnemarExact(onlyA, onlyB).toPrecision(3)}`,
  );
}

await main();
