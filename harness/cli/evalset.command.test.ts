import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../log.js';
import { runCaptured } from '../testing/cli.js';
import { describeShared, sharedPath } from '../testing/shared.js';
import type { CliIo } from './io.js';
import { runCli } from './main.js';
import { tempDir } from '../testing/temp.js';

function io(): CliIo & { text: () => string } {
  let text = '';
  return { out: (t) => void (text += t), log: memoryLogger(), env: {}, cwd: process.cwd(), text: () => text };
}

async function memorySet(queries: string): Promise<string> {
  const dir = tempDir('inspect');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'corpus.jsonl'), '{"id": "m1", "text": "one two three"}\n{"id": "m2", "text": "four five", "sensitive": true}\n');
  await writeFile(join(dir, 'queries.jsonl'), queries);
  return dir;
}

describe('harness evalset inspect', () => {
  it('prints counts per stratum, distributions and notes; exit 0 when valid', async () => {
    const dir = await memorySet(
      '{"id": "q1", "text": "one", "stratum": "exact", "qrels": {"m1": 2, "m2": 1}}\n{"id": "q2", "text": "five six", "stratum": "paraphrase", "qrels": {"m2": 0}}\n',
    );
    const cli = io();
    expect(await runCli(['evalset', 'inspect', '--format', 'memory', '--path', dir], cli)).toBe(0);
    const out = cli.text();
    expect(out).toMatch(/^documents\s+2 \(1 sensitive\)$/m);
    expect(out).toMatch(/^judgments\s+3 \(by grade: 0: 1, 1: 1, 2: 1\)$/m);
    // exact: q1 has 2 relevant; paraphrase: q2 has 0 relevant (grade 0 only).
    expect(out).toMatch(/^exact\s+1\s+min 2\s+median 2\s+p95 2\s+max 2$/m);
    expect(out).toMatch(/^paraphrase\s+1\s+min 0\s+median 0\s+p95 0\s+max 0$/m);
    // document words 3 and 2: median (2 + 3) / 2 = 2.5; p95 = rank ceil(1.9) = 2 -> 3.
    expect(out).toMatch(/^\s+documents\s+min 2\s+median 2\.5\s+p95 3\s+max 3$/m);
    expect(out).toContain('1 query has no relevant document (no grade >= 1)');
    expect(out).toContain('validation: no problems');
    // Qrels completeness (issue 41): the memory format's default is complete; --qrels declares otherwise.
    expect(out).toMatch(/^qrels\s+complete \(an unlisted document is known non-relevant: no judgment holes\); the memory format's default/m);
    const pooled = io();
    expect(await runCli(['evalset', 'inspect', '--format', 'memory', '--path', dir, '--qrels', 'pooled'], pooled)).toBe(0);
    expect(pooled.text()).toMatch(/^qrels\s+pooled \(an unlisted document is unjudged: reports check judgment holes\); as --qrels declares$/m);
  });

  it('exits 2 and lists the problems of an inconsistent set', async () => {
    const dir = await memorySet('{"id": "q1", "text": "  ", "stratum": "exact", "qrels": {"m1": 1}}\n');
    const r = await runCaptured(['evalset', 'inspect', '--format', 'memory', '--path', dir], process.cwd());
    expect(r.code).toBe(2);
    expect(r.out).toContain('validation: 1 problems\n  - 1 queries with empty text: q1');
    expect(r.stderr).toBe(`harness: ${dir}: 1 validation problems (listed above)\n`);
  });

  it('rejects bad --options JSON and unknown option keys with exit 2', async () => {
    const inspect = ['evalset', 'inspect', '--format', 'locomo', '--path', 'x.json', '--options'];
    const json = await runCaptured([...inspect, '{unit'], process.cwd());
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('harness: --options is not valid JSON: {unit');
    const key = await runCaptured([...inspect, '{"untis":"turn"}'], process.cwd());
    expect(key.code).toBe(2);
    expect(key.stderr).toContain('harness: --options: 1 problem\n  options: Unrecognized key: "untis"');
  });
});

describeShared('harness evalset inspect on LoCoMo', ['data/locomo/locomo10.json'], () => {
  it('shows the five strata with their query counts', async () => {
    const cli = io();
    expect(await runCli(['evalset', 'inspect', '--format', 'locomo', '--path', sharedPath('data', 'locomo', 'locomo10.json')], cli)).toBe(0);
    const out = cli.text();
    for (const [s, n] of [
      ['exact', 496],
      ['multi-hop', 282],
      ['open-domain', 92],
      ['paraphrase', 345],
      ['temporal', 321],
    ] as const) {
      expect(out).toMatch(new RegExp(`^${s}\\s+${n}\\s`, 'm'));
    }
    expect(out).toMatch(/^scopes\s+10 /m);
  });
});
