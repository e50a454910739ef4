import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatServer, startChatServer } from './openai-server.js';
import { type Installed, installPackage, step } from './package.js';

/**
 * Issue 43 with the INSTALLED package on the bundled example: a reader and an answer judge on 127.0.0.1 answer and
 * grade every question of two systems (`ablate`, gated on Acc); the answer judge is checked against hand labels
 * (`kappa --answers --labels`, and a blind session started at the terminal); then the same study with those labels
 * as `answer.humanLabels` and `gate.judged: ppi` decides on the PPI-corrected accuracy difference. Every step's exit
 * code is checked.
 */

const ENV = { TEST_KEY: 'e2e-answers-key' };
const PER_STRATUM = 12;

/** The bundled example's questions: id -> gold answer and stratum, in eval-set order. */
type Gold = Map<string, { answer: string; stratum: string }>;

let study: Installed;
let server: ChatServer;
const read = (...p: string[]) => readFileSync(join(study.dir, ...p), 'utf8');

/** The reader: the first three excerpts of its history on one line, so whether it holds the gold depends on the ranking. */
function readerReply(prompt: string): string {
  const history = /each with its date\.\n\n([\s\S]*?)\n\nToday's date/.exec(prompt)?.[1] ?? '';
  return history.replace(/\s+/g, ' ').slice(0, 600).trim() || 'I do not know.';
}

/** The judge: CORRECT when the answer holds the gold answer's text, case aside. */
function judgeReply(prompt: string): string {
  const gold = /\nGold answer: (.*)\n/.exec(prompt)?.[1] ?? '';
  const answer = /\nAnswer: (.*)\n/.exec(prompt)?.[1] ?? '';
  return gold !== '' && answer.toLowerCase().includes(gold.toLowerCase()) ? 'CORRECT' : 'WRONG';
}

beforeAll(async () => {
  study = await installPackage();
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  server = await startChatServer((prompt, model) => (model === 'reader-m' ? readerReply(prompt) : judgeReply(prompt)));
}, 600_000);

afterAll(async () => {
  await server?.close();
  study?.remove();
});

/** An answer study of bm25 against fts5 on the bundled example, gated on Acc; `gate` and `answer` add to those blocks. */
function config(name: string, extra: { gate?: string; answer?: string } = {}): string {
  const file = `configs/${name}.yaml`;
  writeFileSync(
    join(study.dir, file),
    `name: ${name}
evalset: { format: memory, path: ../evalset/examples/alex-memory }
measures: [Acc, EM]
topK: 10
arms:
  - { id: bm25, kind: bm25, params: { preset: lucene, k1: 0.9, b: 0.4 } }
  - { id: fts5, kind: sqlite-fts5, params: { tokenizer: porter } }
compare: { baseline: bm25, permutations: 2000 }
gate: { candidate: fts5, measure: Acc, rule: gain-overall${extra.gate ?? ''} }
answer:
  reader: { kind: chat, model: reader-m, baseURL: "${server.baseURL}", apiKeyEnv: TEST_KEY, local: true, topK: 3 }
  judge: { profile: binary, model: judge-m, baseURL: "${server.baseURL}", apiKeyEnv: TEST_KEY, local: true }
${extra.answer ?? ''}output: ../reports
cache: ../.cache
`,
  );
  return file;
}

function reportDir(name: string): string {
  return join('reports', readdirSync(join(study.dir, 'reports')).find((d) => d.startsWith(`${name}-`)) as string);
}

function goldAnswers(): Gold {
  const lines = read('evalset', 'examples', 'alex-memory', 'queries.jsonl').trim().split('\n');
  const out: Gold = new Map();
  for (const l of lines) {
    const q = JSON.parse(l) as { id: string; answer?: string; stratum: string };
    if (q.answer !== undefined) out.set(q.id, { answer: q.answer, stratum: q.stratum });
  }
  return out;
}

/** The human: the judge's rule, but a stricter reader of every 5th question (a right answer there is called wrong). */
const human = (i: number, answer: string, gold: string) => (answer.toLowerCase().includes(gold.toLowerCase()) && i % 5 !== 0 ? 1 : 0);

/** Labels of both systems' answers to the first PER_STRATUM questions of each stratum, as `system questionId 1|0` lines. */
function labels(dir: string, gold: Gold): string {
  const answers = (system: string) =>
    new Map(
      read(dir, 'answers', `${system}.jsonl`)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { question_id: string; answer: string | null })
        .map((a) => [a.question_id, a.answer] as const),
    );
  const by = { bm25: answers('bm25'), fts5: answers('fts5') };
  const taken = new Map<string, number>();
  const lines: string[] = [];
  [...gold].forEach(([id, g], i) => {
    // An answer from a sensitive memory is withheld from the report folder: nobody can label it there.
    if ((taken.get(g.stratum) ?? 0) >= PER_STRATUM || !by.bm25.get(id) || !by.fts5.get(id)) return;
    taken.set(g.stratum, (taken.get(g.stratum) ?? 0) + 1);
    for (const system of ['bm25', 'fts5'] as const) lines.push(`${system}\t${id}\t${human(i, by[system].get(id) as string, g.answer)}`);
  });
  return `${lines.join('\n')}\n`;
}

describe('answers from the installed package: answer, grade, kappa on answers, a gate on Acc with PPI', { shuffle: false }, () => {
  it('ablates with a reader and judge, checks the judge against hand labels, and gates on the PPI-corrected accuracy', async () => {
    const plain = await step(study, 'ablate with answers', ['ablate', '--config', config('answers')], { env: ENV });
    // Acc is the answer judge's verdicts, and nobody has checked them yet: the verdict says so.
    expect(plain.stdout).toMatch(/^gate: (ADOPT|REJECT|INCONCLUSIVE) on judge labels; answer judge not validated \(no human labels\)/m);
    const dir = reportDir('answers');
    const report = JSON.parse(read(dir, 'report.json')) as {
      answerLevel: { systems: { id: string; graded: number }[] };
      gateResult: { config: { measure: string } };
    };
    expect(report.gateResult.config.measure).toBe('Acc');
    expect(report.answerLevel.systems.map((s) => s.id)).toEqual(['bm25', 'fts5']);
    expect(read(dir, 'report.md')).toContain('Answer accuracy');
    // Both systems answered every question (two systems with the same context share one cached answer).
    const asked = server.calls.filter((c) => c.model === 'reader-m').length;
    expect(asked).toBeGreaterThan(106);
    expect(report.answerLevel.systems.map((s) => s.graded)).toEqual([106, 106]);

    writeFileSync(join(study.dir, 'labels.tsv'), labels(dir, goldAnswers()));
    const kappa = await step(study, 'kappa --answers --labels', ['kappa', '--answers', dir, '--labels', 'labels.tsv', '--disagreements', 'dis.csv']);
    expect(kappa.stdout).toContain(`n = ${2 * 3 * PER_STRATUM} labelled answers`);
    expect(kappa.stdout).toContain(
      `questions labelled for every system: ${3 * PER_STRATUM} (exact ${PER_STRATUM}, multi-hop ${PER_STRATUM}, paraphrase ${PER_STRATUM})`,
    );
    expect(kappa.stdout).toMatch(/kappa check: PASS: kappa \d\.\d{3} >= threshold 0\.6/);
    expect(read('dis.csv').split('\n')[0]).toBe('system,questionId,stratum,human,judge,judgeName');
    // A stricter threshold fails the check: exit 1, after the numbers.
    const strict = await step(study, 'kappa --answers, strict', ['kappa', '--answers', dir, '--labels', 'labels.tsv', '--threshold', '0.99'], { code: 1 });
    expect(strict.stdout).toContain('kappa check: FAIL');
    expect(strict.stderr).toContain('the answer judge does not agree with the hand labels');

    // A blind session at the terminal: drawn, one answer labelled, left; it shows question, gold and answer only.
    const session = await step(study, 'kappa --answers --session', ['kappa', '--answers', dir, '--session', 'answers-session.json'], { input: '1q' });
    expect(session.stderr).toMatch(/\ngold answer: .+\nanswer: .+/);
    expect(session.stderr).not.toMatch(/\b(bm25|fts5|CORRECT|WRONG)\b/);
    expect((JSON.parse(read('answers-session.json')) as { kind: string; labels: unknown[] }).labels[0]).toBe(1);

    const ppi = config('answers-ppi', { gate: ', judged: ppi', answer: '  humanLabels: ../labels.tsv\n' });
    const gated = await step(study, 'ablate with answer.humanLabels and gate.judged: ppi', ['ablate', '--config', ppi], { env: ENV });
    expect(gated.stdout).toMatch(/^gate: (ADOPT|REJECT|INCONCLUSIVE) on PPI-corrected judge labels/m);
    expect(gated.stdout).not.toContain('answer judge not validated');
    const data = JSON.parse(read(reportDir('answers-ppi'), 'report.json')) as {
      decision: { basis: string; judge: { qrels: string; validation: string } };
      ppi: { stratum: string; measure: string; ppi?: { n: number; estimate: number } }[];
      gateResult: { reason: string };
      validation: { labelledQueries: number; measure: string };
    };
    const row = data.ppi.find((r) => r.stratum === 'all' && r.measure === 'Acc');
    expect(row?.ppi?.n).toBe(3 * PER_STRATUM);
    expect(data.gateResult.reason).toContain('PPI-corrected delta');
    expect(data.validation).toMatchObject({ labelledQueries: 3 * PER_STRATUM, measure: 'Acc' });
    // The verdict carries the validation's own result (here the human labels tie the two systems: the judge's
    // small confirmatory delta "flips" to 0 and the validation fails), never a green headline beside a FAILED.
    const validated = (data as unknown as { validation: { pass: boolean } }).validation.pass;
    expect(data.decision).toMatchObject({ basis: 'ppi', judge: { qrels: 'answers', validation: validated ? 'passed' : 'failed' } });
    if (!validated) expect(gated.stdout).toMatch(/^gate: .*; answer judge validation FAILED/m);
    // Served from the cache: the second study asked the reader again only what it never caches, the answers from a
    // sensitive memory (withheld from the report folder too).
    const withheld = ['bm25', 'fts5'].flatMap((s) => read(dir, 'answers', `${s}.jsonl`).trim().split('\n')).filter((l) => l.includes('"withheld":"sensitive"'));
    expect(withheld.length).toBeGreaterThan(0);
    expect(server.calls.filter((c) => c.model === 'reader-m')).toHaveLength(asked + withheld.length);

    // A bad labels file stops the study before any system runs: exit 2 naming the file and line.
    writeFileSync(join(study.dir, 'labels.tsv'), 'fts5 qe01 maybe\n');
    const bad = await step(study, 'ablate, bad labels', ['ablate', '--config', ppi], { env: ENV, code: 2 });
    expect(bad.stderr).toContain('labels.tsv:1: system fts5, question qe01: label "maybe" is not 1 (correct) or 0 (wrong)');
  });
});
