import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../errors.js';
import { readHumanLabels } from '../evidence/labels.js';
import type { JudgmentRecord } from '../judge/store.js';
import { runCaptured } from '../testing/cli.js';
import { tempJudgments } from '../testing/judgments.js';
import { newSession, saveSession } from './session.js';

/**
 * Issue 42: a pair listed twice in a kappa session counted its label twice (in kappa, and in the PPI gate's
 * delta through `humanLabels:`), where the same pair twice in a labels file is refused. Both are refused now,
 * at the line of the repeat, by both readers (`harness kappa` and the ablation's human labels).
 */

const records: JudgmentRecord[] = ['q1', 'q2'].flatMap((q) =>
  ['d1', 'd2'].map((d, k) => ({ queryId: q, docId: d, stratum: 'exact', status: 'judged' as const, grade: k + 1, samples: [k + 1], parseFailures: 0 })),
);

const judgments = () => tempJudgments('kappa-duplicates', records, 'bbbbbbbbbbbbbbbb');

/** A finished session of every judged pair, with q1/d1 appended a second time (a hand edit or a merge). */
async function duplicatedSession(dir: string): Promise<string> {
  const file = join(dir, 'session.json');
  const items = [...records, records[0] as JudgmentRecord].map((r) => ({ queryId: r.queryId, docId: r.docId, stratum: r.stratum }));
  const s = newSession('bbbbbbbbbbbbbbbb', 42, items, 'query');
  s.labels.splice(0, 5, 0, 2, 1, 2, 3);
  s.position = 5;
  await saveSession(file, s);
  return file;
}

describe('a pair listed twice in a kappa session', () => {
  it('harness kappa refuses it: exit 2, the session file at the repeated line, the pair, and where it came first', async () => {
    const dir = await judgments();
    const file = await duplicatedSession(dir);
    const line = readFileSync(file, 'utf8').split('\n').lastIndexOf('{"queryId":"q1","docId":"d1","stratum":"exact"}') + 1;
    const r = await runCaptured(['kappa', '--judgments', 'judgments', '--session', 'session.json', '--report', '--resamples', '20'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:${line}: items[4]: query q1, document d1 is listed twice (first as items[0], line 3): remove one, with its label`);
    expect(r.out).toBe('');
  });

  it('the ablation human labels refuse it too (PPI and the validation read them), as they refuse a labels file twice', async () => {
    const dir = await judgments();
    const file = await duplicatedSession(dir);
    const err = await readHumanLabels(file, join(dir, 'judgments')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain('items[4]: query q1, document d1 is listed twice');
    writeFileSync(join(dir, 'h.qrels'), 'q1 0 d1 0\nq1 0 d2 2\nq1 0 d1 3\n');
    await expect(readHumanLabels(join(dir, 'h.qrels'), join(dir, 'judgments'))).rejects.toThrow('query q1, document d1: labelled twice (first at line 1)');
  });
});
