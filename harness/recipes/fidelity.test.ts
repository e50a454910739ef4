import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPlan, type PlanEntry } from '../systems/plan.js';
import { runCaptured } from '../testing/cli.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';
import { type DeviationEntry, deviationsOf } from './fidelity.js';

const sub: DeviationEntry = { kind: 'substitute', stage: 'dense', text: 'hash-embed for bge' };
const rec: DeviationEntry = { kind: 'assumption', stage: 'blend.recency', text: 'recency weight 0.2 is ours', when: { recency: 0.2 } };

describe('deviationsOf', () => {
  it("keeps the entry's own deviations whose when holds, then each input's, each once", () => {
    const stage = deviationsOf([sub], { id: 'hash', params: {} }, []);
    expect(stage).toEqual([{ kind: 'substitute', stage: 'dense', text: 'hash-embed for bge', from: 'hash' }]);
    expect(deviationsOf([rec], { id: 'g', params: { recency: 0.2 } }, [{ deviations: stage }])).toEqual([
      { kind: 'assumption', stage: 'blend.recency', text: 'recency weight 0.2 is ours', from: 'g' },
      stage[0],
    ]);
    expect(deviationsOf([rec], { id: 'g', params: { recency: 0 } }, [{ deviations: stage }, { deviations: stage }])).toEqual(stage);
    expect(deviationsOf(undefined, { id: 'x', params: {} }, [{}])).toEqual([]);
  });
});

describe('deviations through the plan', () => {
  const entry = (e: Partial<PlanEntry> & Pick<PlanEntry, 'id' | 'node' | 'kind'>): PlanEntry => ({ at: `x`, inputs: [], params: {}, ...e });

  it('labels each grid point with the deviations its params make, and a consumer with its inputs', () => {
    const { plan, problems } = buildPlan(
      [
        entry({ id: 'a', node: 'retrieve', kind: 'fake', deviations: [sub] }),
        entry({ id: 'b', node: 'retrieve', kind: 'fake' }),
        entry({
          id: 'f',
          node: 'fuse',
          kind: 'fuse',
          inputs: ['a', 'b'],
          params: { method: 'rrf' },
          grid: { rrfK: [60, 20] },
          deviations: [{ kind: 'assumption', stage: 'rrf.k', text: 'k 60 assumed', when: { rrfK: 60 } }],
        }),
      ],
      10,
    );
    expect(problems).toEqual([]);
    const of = (id: string) => plan.systems.find((s) => s.id === id)?.deviations?.map((d) => `${d.from}:${d.stage}`);
    expect(of('f.rrfK=60')).toEqual(['f.rrfK=60:rrf.k', 'a:dense']);
    expect(of('f.rrfK=20')).toEqual(['a:dense']);
    expect(plan.systems.find((s) => s.id === 'b')).not.toHaveProperty('deviations');
  });

  it('refuses a deviation of an unknown kind in a config, naming where it is', async () => {
    const dir = tempDir('fidelity-config');
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      [
        'name: bad',
        'evalset: { format: memory, path: ' + join(PROJECT_ROOT, 'evalset/examples/alex-memory') + ' }',
        'measures: [nDCG@10]',
        'arms:',
        '  - { id: bm25, kind: bm25, deviations: [{ kind: guess, stage: dense, text: why }] }',
      ].join('\n'),
    );
    const r = await runCaptured(['ablate', '--config', file, '--dry-run'], dir);
    expect(r.code).toBe(2);
    expect([...r.log, r.stderr].join('\n')).toMatch(/bad\.yaml[\s\S]*arms\[0\]\.deviations\[0\]\.kind: .*"substitute"\|"assumption"/);
  });
});
