import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { fuse } from './fuse.js';
import type { FusionSpec } from './spec.js';
import { inputsOf, listOf, packAll, runOf } from './testing.js';

/**
 * DBSF against a reference outside this kernel: scripts/reference/dbsf_reference.py (plain Python floats in the
 * kernel's order of operations, its statistics checked against numpy), run when python3 with numpy is here, its
 * committed output (dbsf_reference.json) otherwise. Fused scores must be equal bit for bit.
 */
interface Reference {
  source: string;
  runs: Record<string, [string, number][]>[];
  queries: string[];
  cases: { method: 'cc' | 'combsum'; absent: 'zero' | 'min'; weights: number[]; fused: Record<string, [string, number][]> }[];
}

const script = join(PROJECT_ROOT, 'scripts', 'reference', 'dbsf_reference.py');
const committed = join(PROJECT_ROOT, 'scripts', 'reference', 'dbsf_reference.json');

function reference(): { ref: Reference; from: string } {
  const py = spawnSync('python3', [script], { encoding: 'utf8', timeout: 60_000 });
  if (py.status === 0) return { ref: JSON.parse(py.stdout) as Reference, from: 'python3' };
  process.stderr.write(`[dbsf reference] python3 with numpy not usable here (${py.error?.message ?? py.stderr.trim()}): reading ${committed}\n`);
  return { ref: JSON.parse(readFileSync(committed, 'utf8')) as Reference, from: 'committed JSON' };
}

describe('dbsf against the Python reference', () => {
  const { ref, from } = reference();
  const runs = ref.runs.map((r) => runOf(Object.fromEntries(Object.entries(r).map(([q, list]) => [q, Object.fromEntries(list)]))));
  const { table, packed } = packAll(ref.queries, ...runs);

  it.each(ref.cases.map((c) => ({ ...c, name: `${c.method}, absent ${c.absent}, weights ${c.weights.join('/')} (${from})` })))('$name', (c) => {
    const spec: FusionSpec = { method: c.method, rrfK: 60, normalization: 'dbsf', absent: c.absent, topK: 100 };
    const out = fuse(
      inputsOf(
        packed,
        c.weights.map((weight) => ({ weight })),
      ),
      spec,
    );
    for (const q of ref.queries) expect(listOf(out, table, q), q).toEqual(c.fused[q]);
  });

  it('the committed JSON is what the script prints (rerun it after changing the inputs)', () => {
    const saved = JSON.parse(readFileSync(committed, 'utf8')) as Reference;
    expect(saved.cases).toEqual(ref.cases);
    expect(saved.runs).toEqual(ref.runs);
  });
});
