import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { tempDir } from '../testing/temp.js';
import { answerGateProblems } from './answer-block.js';
import { loadConfig, type ResolvedConfig } from './load.js';

const dir = tempDir('harness-answer-block');

beforeAll(() => {
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), '{"id":"m1","text":"the dog is called Biscuit"}\n');
  writeFileSync(join(dir, 'es', 'queries.jsonl'), '{"id":"q1","text":"dog name","stratum":"exact","answer":"Biscuit","qrels":{"m1":3}}\n');
  writeFileSync(join(dir, 'answers.json'), '{}');
});

const head = (measures: string) => `name: t\nevalset: { format: memory, path: es }\nmeasures: [${measures}]\ntopK: 20\n`;
const arms = 'arms:\n  - { id: a, kind: fake }\n  - { id: b, kind: fake, params: { seed: 2 } }\n';
const extractive = 'answer:\n  reader: { kind: extractive }\n';

function load(text: string): ResolvedConfig {
  const file = join(dir, 'c.yaml');
  writeFileSync(file, text);
  return loadConfig(file, { env: {}, cwd: dir });
}

/** The problems of a config, without the head line. */
function problemsOf(text: string): readonly string[] {
  try {
    load(text);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('the answer: block', () => {
  it('resolves reader defaults, answers every system, and keeps the answer measures apart', () => {
    const cfg = load(`${head('nDCG@10, F1-LoCoMo, EM')}${arms}${extractive}`);
    expect(cfg.answer).toMatchObject({ measures: ['F1-LoCoMo', 'EM'], systems: ['a', 'b'], answerOnly: [], price: {} });
    expect(cfg.answer?.reader).toMatchObject({ kind: 'extractive', topK: 10, budgetTokens: 8000, temperature: 0, maxTokens: 500 });
    expect(cfg.runIds).toEqual(['a', 'b']);
  });

  it('narrows the report to answer.systems, and refuses a gate on a system it leaves out', () => {
    expect(load(`${head('F1-set')}${arms}${extractive}  systems: [b]\n`).runIds).toEqual(['b']);
    expect(problemsOf(`${head('F1-set')}${arms}${extractive}  systems: [b, nope]\ngate: { candidate: a, measure: F1-set }\n`)).toEqual([
      'answer.systems[1]: "nope" is not a system id (systems: a, b)',
      'gate.candidate: "a" is not answered (answer.systems: b), so it is not in the report; add it to answer.systems',
    ]);
  });

  it('refuses answer measures nobody can compute, and an answer block with none to compute', () => {
    expect(problemsOf(`${head('Acc')}${arms}`)).toEqual([
      'measures: Acc is an answer measure; add an answer: block (reader, judge), or systems of kind answers-file',
    ]);
    expect(problemsOf(`${head('Acc')}${arms}${extractive}`)).toEqual([
      "measures: Acc is the answer judge's accuracy and there is no answer.judge to grade the answers of a, b; add answer.judge (profile, model), or ask only lexical measures (F1-LoCoMo, F1-set, EM)",
    ]);
    expect(problemsOf(`${head('nDCG@10')}${arms}${extractive}`)).toEqual([
      'answer: no answer measure in measures; add Acc, F1-LoCoMo, F1-set or EM, or remove the answer block',
    ]);
    expect(problemsOf(`${head('EM')}${arms}answer:\n  judge: { profile: binary, model: m }\n`)).toEqual([
      'answer.reader: systems a, b are answered by a reader; add answer.reader (kind: extractive answers offline, kind: chat asks a model)',
    ]);
  });

  it('checks the reader: a chat reader names its model, the extractive one asks none, top-k within topK', () => {
    expect(problemsOf(`${head('EM')}${arms}answer:\n  reader: { kind: chat, baseURL: "https://u:p@h.example/v1" }\n`)).toEqual([
      'answer.reader.model: a chat reader needs model (as the server names it)',
      expect.stringMatching(/^answer\.reader\.baseURL: /),
    ]);
    expect(problemsOf(`${head('EM')}${arms}answer:\n  reader: { kind: extractive, model: m, topK: 50 }\n`)).toEqual([
      'answer.reader.model: the extractive reader asks no model; remove model or set kind: chat',
    ]);
    expect(problemsOf(`${head('EM')}${arms}answer:\n  reader: { kind: extractive, topK: 50 }\n`)).toEqual([
      'answer.reader.topK: 50 is deeper than topK: 20, the results each system returns; lower it or raise topK',
    ]);
  });

  it('takes answer-only systems without arms, only with answer measures, and no tuning with answer measures', () => {
    const only = 'systems:\n  - { id: f, kind: answers-file, params: { path: answers.json, format: mem0 } }\n';
    const cfg = load(`${head('Acc')}${only}`);
    expect(cfg.runIds).toEqual(['f']);
    expect(cfg.answer?.answerOnly).toEqual([
      { at: 'systems[0]', id: 'f', kind: 'answers-file', format: 'mem0', path: join(dir, 'answers.json'), pathAsWritten: 'answers.json' },
    ]);
    expect(problemsOf(`${head('Acc, nDCG@10')}${only}`)).toEqual([
      'measures: nDCG@10 are retrieval measures and systems[0] "f" (answers-file) has no run to score; a config with answer-only systems asks only answer measures (Acc, F1-LoCoMo, F1-set, EM): study retrieval in a config of its own',
    ]);
    expect(problemsOf(`${head('nDCG@10')}${arms}${only}`)).toEqual([
      'systems[0]: a answers-file system only answers; add an answer measure (Acc, F1-LoCoMo, F1-set, EM) to measures',
    ]);
    expect(problemsOf(`${head('nDCG@10')}`)).toEqual([
      'arms: list at least one arm (or, for a study of answers alone, systems of kind answers-file or full-context)',
    ]);
    expect(problemsOf(`${head('nDCG@10')}arms: []\n`)).toEqual([
      'arms: list at least one arm (or, for a study of answers alone, systems of kind answers-file or full-context)',
    ]);
    const grid = 'arms:\n  - { id: a, kind: fake, grid: { seed: [1, 2] } }\ntune: { measure: EM, folds: 2 }\n';
    expect(problemsOf(`${head('EM')}${grid}${extractive}`)).toEqual([expect.stringMatching(/^tune: answer measures \(EM\) and tuned grids are not combined/)]);
  });

  it('checks answers-file params: a file that exists, labels for LongMemEval only, no inputs', () => {
    const entry = (params: string, more = '') => `systems:\n  - { id: f, kind: answers-file, params: ${params}${more} }\n`;
    expect(problemsOf(`${head('Acc')}${entry('{ path: gone.json, format: mem0 }')}`)).toEqual([
      `systems[0].params.path: gone.json is not a file (resolved against the config's folder to ${join(dir, 'gone.json')})`,
    ]);
    expect(problemsOf(`${head('Acc')}${entry('{ path: answers.json, format: mem0, labels: answers.json }')}`)).toEqual([
      "systems[0].params.labels: a labels file is LongMemEval's judged log; a mem0 file records its grades in its own rows",
    ]);
    expect(problemsOf(`${head('Acc')}${entry('{ path: answers.json, format: csv }')}`)).toEqual([expect.stringMatching(/^systems\[0\]\.params\.format: /)]);
    expect(problemsOf(`${head('EM')}${arms}${extractive}${entry('{ path: answers.json, format: mem0 }', ', inputs: [a]')}`)).toEqual([
      'systems[0].inputs: a answers-file system answers without a run, so it takes no inputs; remove inputs',
    ]);
  });

  it('refuses a gate on an answer measure beside human labels of the judged pool (they label documents, not answers)', () => {
    const answer = load(`${head('nDCG@10, Acc')}${arms}${extractive}  judge: { profile: binary, model: m }\n`).answer;
    if (answer === undefined) throw new Error('no answer block');
    expect(answerGateProblems(answer, 'Acc', true)).toEqual([expect.stringMatching(/^gate\.measure: Acc is an answer measure, and humanLabels/)]);
    expect(answerGateProblems(answer, 'Acc', false)).toEqual([]);
    expect(answerGateProblems(answer, 'nDCG@10', true)).toEqual([]);
  });
});
