/**
 * Prints LongMemEval's accuracy figures for a hypothesis file with recorded labels, as the official
 * src/evaluation/print_qa_metrics.py computes them (per question type, task-averaged, overall, abstention, each
 * rounded to 4 decimals), read through the workbench's reader (harness/answer/longmemeval-hypotheses.ts) and
 * LongMemEval's accuracy arithmetic (harness/metrics/answer-accuracy.ts). The question types come from the
 * dataset file (`--reference`); without it only the overall and abstention figures are printed.
 *
 *   npx tsx scripts/reference/longmemeval_published.ts <hypotheses.jsonl> [--labels <hyp>.eval-results-<model>] [--reference <longmemeval_*.json>]
 *
 * The judged log alone (it holds the hypotheses too) may stand in for both files.
 */
import { readFileSync } from 'node:fs';
import { readAnswersFile } from '../../harness/answer/files.js';
import { UsageError } from '../../harness/errors.js';
import { longMemEvalAccuracy } from '../../harness/metrics/answer-accuracy.js';

interface Args {
  readonly file: string;
  readonly labels: string | undefined;
  readonly reference: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  let file: string | undefined;
  let labels: string | undefined;
  let reference: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--labels') labels = argv[++i];
    else if (argv[i] === '--reference') reference = argv[++i];
    else file = argv[i];
  }
  if (file === undefined) throw new UsageError('usage: longmemeval_published.ts <hypotheses.jsonl> [--labels <log>] [--reference <dataset.json>]');
  return { file, labels, reference };
}

const fixed = (x: number) => x.toFixed(4);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const rows = await readAnswersFile(args.file, 'longmemeval', args.labels === undefined ? {} : { labels: args.labels });
  const graded = rows.filter((r) => r.recorded?.correct !== undefined);
  const judges = [...new Set(graded.map((r) => r.recorded?.judge ?? '(unnamed)'))];
  console.log(`${args.file}: ${rows.length} hypotheses, ${graded.length} labelled (judge ${judges.join(', ')})`);
  const types = new Map<string, string>();
  if (args.reference !== undefined) {
    for (const q of JSON.parse(readFileSync(args.reference, 'utf8')) as { question_id: string; question_type: string }[])
      types.set(q.question_id, q.question_type);
  }
  const unknown = graded.filter((r) => args.reference !== undefined && !types.has(r.questionId as string)).length;
  if (unknown > 0) throw new UsageError(`${unknown} labelled questions are not in ${args.reference}`, { hint: 'give the dataset file the hypotheses answer' });
  const acc = longMemEvalAccuracy(
    graded.map((r) => ({
      questionId: r.questionId as string,
      questionType: types.get(r.questionId as string) ?? 'unknown',
      correct: r.recorded?.correct === true,
    })),
  );
  if (args.reference !== undefined) {
    for (const [type, cell] of Object.entries(acc.perType)) console.log(`  ${type}: ${fixed(cell.accuracy)} (${cell.n})`);
    console.log(`  task-averaged: ${fixed(acc.taskAveraged)}`);
  }
  console.log(`  overall: ${fixed(acc.overall.accuracy)} (${acc.overall.correct}/${acc.overall.n})`);
  console.log(`  abstention: ${fixed(acc.abstention.accuracy)} (${acc.abstention.n})`);
}

await main();
