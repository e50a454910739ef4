import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnswerLevel } from '../decision/answer-level.js';
import type { ReportData } from '../decision/types.js';
import { ANSWER_MEMORIES, BAD_GOOD_ARMS, writeAnswerStudy } from '../testing/answers.js';
import { type BatchLoopback, startBatchLoopback } from '../testing/batch-loopback.js';
import { runCaptured } from '../testing/cli.js';
import { writeMemoryEvalSet } from '../testing/study.js';
import { tempDir } from '../testing/temp.js';

// Issue 44 at the answer level: `harness ablate` with the reader and the answer judge on a provider's batch API
// answers and grades as it does one by one, in one batch per stage, and prices the batched tokens at half.

const MEMORIES = ANSWER_MEMORIES.slice(0, 5);
const WORDS: readonly string[] = MEMORIES.map((m) => m[2]);

/** The reader says the first answer word in its context; the judge says CORRECT when the answer's word appears twice (once as the gold). */
function answer(prompt: string, model: string): string {
  if (model === 'reader-m') {
    const word = WORDS.find((w) => prompt.includes(w));
    return word === undefined ? 'I do not know.' : `It is ${word}.`;
  }
  const said = /It is (\w+)\./.exec(prompt)?.[1];
  return said !== undefined && prompt.split(said).length - 1 >= 2 ? 'CORRECT' : 'WRONG';
}

let dir: string;
let server: BatchLoopback;

beforeEach(async () => {
  dir = tempDir('harness-answer-batch');
  const corpus = MEMORIES.map(([id, text]) => ({ id, text }));
  const queries = MEMORIES.map(([id, , gold, text], i) => ({ id: `q${i + 1}`, text, stratum: 'exact', answer: gold, qrels: { [id]: 1 } }));
  writeMemoryEvalSet(dir, corpus, queries);
  const run = (name: string, pick: (i: number) => number) =>
    writeFileSync(join(dir, `${name}.trec`), `${MEMORIES.map((_, i) => `q${i + 1} Q0 ${MEMORIES[pick(i)]?.[0]} 1 1 ${name}`).join('\n')}\n`);
  run('good', (i) => i);
  run('bad', (i) => (i + 1) % MEMORIES.length);
  server = await startBatchLoopback({ answer });
});
afterEach(async () => {
  await server.close();
});

function study(name: string, batch: boolean): string {
  const b = batch ? ', batch: { pollSeconds: 0.02, idleMs: 20 }' : '';
  return writeAnswerStudy(
    dir,
    `${name}.yaml`,
    { name, evalset: '{ format: memory, path: es }', measures: ['Acc', 'F1-LoCoMo'], topK: 10 },
    `${BAD_GOOD_ARMS}compare: { baseline: bad, permutations: 2000 }
answer:
  reader: { kind: chat, model: reader-m, baseURL: "${server.url}/v1", apiKeyEnv: TEST_KEY, local: true, topK: 1, maxRetries: 0${b} }
  judge: { profile: binary, model: judge-m, baseURL: "${server.url}/v1", apiKeyEnv: TEST_KEY, local: true, samples: 3, temperature: 0.5, parseRetries: 0, maxRetries: 0${b} }
  price: { reader-m: { input: 1, output: 2 }, judge-m: { input: 0.5, output: 1 } }
`,
  );
}

const report = (name: string) => {
  const out = join(dir, 'out');
  const folder = readdirSync(out).find((f) => f.startsWith(name)) as string;
  return JSON.parse(readFileSync(join(out, folder, 'report.json'), 'utf8')) as ReportData & { answerLevel: AnswerLevel };
};

describe('harness ablate with the answer stages on a batch API', () => {
  it('answers and grades as one by one, in one batch per stage, and prices the batched tokens at half', async () => {
    const env = { TEST_KEY: 'test-key-batch' };
    const sync = await runCaptured(['ablate', '--config', study('one-by-one', false), '--cache', 'cache-sync'], dir, env);
    expect(sync.code, sync.stderr + sync.log.join('\n')).toBe(0);
    expect(server.batchIds).toHaveLength(0);
    const batched = await runCaptured(['ablate', '--config', study('batched', true), '--cache', 'cache-batch'], dir, env);
    expect(batched.code, batched.stderr + batched.log.join('\n')).toBe(0);
    const [a, b] = [report('one-by-one'), report('batched')];
    expect(b.perQuery).toEqual(a.perQuery);
    expect(b.perQuery['good']?.['Acc']).toEqual([1, 1, 1, 1, 1]);
    // One batch of the ten answers, then one of the thirty grades (three samples each, kept apart by their tag).
    expect(server.batchIds).toHaveLength(2);
    expect(server.submitted.size).toBe(10 + 30);
    expect([...server.submitted.values()].every((n) => n === 1)).toBe(true);
    for (const id of ['good', 'bad']) {
      const one = a.answerLevel.systems.find((s) => s.id === id);
      const two = b.answerLevel.systems.find((s) => s.id === id);
      expect(two?.cost.reader.prompt).toBe(one?.cost.reader.prompt);
      expect(two?.cost.reader.batched).toEqual({ prompt: one?.cost.reader.prompt, completion: one?.cost.reader.completion });
      expect(two?.cost.totalUsd).toBeCloseTo((one?.cost.totalUsd as number) / 2, 12);
    }
  });
});
