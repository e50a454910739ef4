import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Study configs for the tests that run `harness ablate` with an answer level end to end. Each writes the same
 * config head (name, eval set, measures, output in `out/`, cache in `cache/`); the eval set, the measures and
 * what follows (systems, compare, gate, answer block) are what differ.
 */

/** The head of an answer study: its name, its `evalset:` as a YAML flow mapping, its measures and top k. */
export interface AnswerStudyHead {
  readonly name: string;
  /** A YAML flow mapping, e.g. `{ format: memory, path: es }`. */
  readonly evalset: string;
  readonly measures: readonly string[];
  /** Absent: the config sets none (a study of answers files retrieves nothing). */
  readonly topK?: number;
}

/** The two run-file arms of the memory-format answer tests: `bad` and `good`, ranked in `bad.trec` and `good.trec`. */
export const BAD_GOOD_ARMS = `arms:
  - { id: bad, kind: run-file, params: { path: bad.trec } }
  - { id: good, kind: run-file, params: { path: good.trec } }
`;

/** Writes `<dir>/<file>`: the config head of `head`, output in `out/` and cache in `cache/`, then `rest` (YAML lines). Returns its path. */
export function writeAnswerStudy(dir: string, file: string, head: AnswerStudyHead, rest: string): string {
  const path = join(dir, file);
  const topK = head.topK === undefined ? '' : `topK: ${head.topK}\n`;
  writeFileSync(path, `name: ${head.name}\nevalset: ${head.evalset}\nmeasures: [${head.measures.join(', ')}]\n${topK}output: out\ncache: cache\n${rest}`);
  return path;
}

/**
 * The memories of the memory-format answer tests: id, text, the answer word (no question uses it) and the
 * question. `s` memories are sensitive; `m8`'s question is the one a test's reader refuses.
 */
export const ANSWER_MEMORIES = [
  ['m1', "Alex's dog is named Biscuit.", 'Biscuit', "What is the name of Alex's dog?"],
  ['m2', "Alex's sister moved to Lisbon in March.", 'Lisbon', "Where did Alex's sister move?"],
  ['m3', 'Alex plays the cello every evening.', 'cello', 'Which instrument does Alex play?'],
  ['m4', 'Alex likes ramen more than anything.', 'ramen', "What is Alex's favourite food?"],
  ['m5', 'Alex drives a Volvo to work.', 'Volvo', 'What car does Alex drive?'],
  ['m6', 'Alex was born in Porto.', 'Porto', 'Where was Alex born?'],
  ['m7', 'Alex reads Borges before sleeping.', 'Borges', 'Which author does Alex read at night?'],
  ['m8', 'The bakery sells sourdough on Fridays.', 'sourdough', 'What does the bakery sell on Fridays?'],
  ['s1', 'Alex takes lisinopril every morning.', 'lisinopril', 'Which medicine does Alex take?'],
] as const;
