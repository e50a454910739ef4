import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { describeShared, sharedPath } from '../testing/shared.js';

/**
 * trec_eval's own regression suite (usnistgov/trec_eval test/, the Makefile `quicktest` commands listed in
 * ../shared/data/trec_eval/SOURCE.md), run through `harness eval` in-process: every output line must equal
 * the expected file's line.
 */

const DIR = 'data/trec_eval';

async function harnessEval(args: readonly string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const io = { out: (t: string) => void (out += t), log: memoryLogger(), env: {}, cwd: process.cwd() };
  const code = await runCli(['eval', ...args.map((a) => (/^(qrels|results|prefs|zscores)/.test(a) ? sharedPath(DIR, a) : a))], io);
  return { code, out };
}

const CASES: readonly { expected: string; args: readonly string[] }[] = [
  { expected: 'out.test', args: ['qrels.test', 'results.test'] },
  { expected: 'out.test', args: ['qrels.test.with-comments', 'results.test'] },
  { expected: 'out.comment.test', args: ['qrels.comment.test', 'results.comment.test'] },
  { expected: 'out.test.a', args: ['-m', 'all_trec', 'qrels.test', 'results.test'] },
  { expected: 'out.test.aq', args: ['-m', 'all_trec', '-q', 'qrels.test', 'results.test'] },
  { expected: 'out.test.aqc', args: ['-m', 'all_trec', '-q', '-c', 'qrels.test', 'results.trunc'] },
  { expected: 'out.test.aqcM', args: ['-m', 'all_trec', '-q', '-c', '-M100', 'qrels.test', 'results.trunc'] },
  { expected: 'out.test.aql', args: ['-m', 'all_trec', '-mrelstring.20', '-q', '-l2', 'qrels.rel_level', 'results.test'] },
  {
    expected: 'out.test.meas_params',
    args: [
      '-q',
      '-miprec_at_recall..10,.20,.25,.75,.50',
      '-m',
      'P.5,7,3',
      '-m',
      'recall.20,2000',
      '-m',
      'Rprec_mult.5.0,0.2,0.35',
      '-mutility.2,-1,0,0',
      '-m',
      '11pt_avg..25,.5,.75',
      '-mndcg.1=3,2=9,4=4.5',
      '-mndcg_cut.10,20,23.4',
      '-msuccess.2,5,20',
      'qrels.test',
      'results.test',
    ],
  },
];

describeShared('trec_eval conformance (harness eval vs trec_eval 10.0 expected outputs)', [DIR], () => {
  for (const c of CASES) {
    it(`${c.expected} <- trec_eval ${c.args.join(' ')}`, async () => {
      const { code, out } = await harnessEval(c.args);
      expect(code).toBe(0);
      const expected = readFileSync(sharedPath(DIR, c.expected), 'utf8').split('\n');
      const got = out.split('\n');
      for (let i = 0; i < Math.max(expected.length, got.length); i++) expect(`${i + 1}: ${got[i]}`).toBe(`${i + 1}: ${expected[i]}`);
    });
  }
  it.skip('out.test.aqZ (-Z zscores_file): skipped, z-score output (-Z) is not implemented', () => {});
  it.skip('out.test.prefs (-R prefs, -m all_prefs): skipped, the preference qrels format is not implemented', () => {});
  it.skip('out.test.qrels_prefs (-R qrels_prefs): skipped, preference measures are not implemented', () => {});
  it.skip('out.test.qrels_jg (-R qrels_jg): skipped, the judgment-group qrels format is not implemented', () => {});
});
