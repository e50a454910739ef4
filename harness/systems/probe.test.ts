import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import { memoryLogger } from '../log.js';
import { buildPlan, type PlanEntry, type SystemsPlan } from './plan.js';
import { probePlan } from './probe.js';

const entries: PlanEntry[] = [
  { at: 'arms[0]', id: 'remote', node: 'retrieve', kind: 'fake', inputs: [], params: {} },
  { at: 'arms[1]', id: 'local', node: 'retrieve', kind: 'fake', inputs: [], params: { seed: 1 } },
  { at: 'systems[0]', id: 'fused', node: 'fuse', kind: 'fuse', inputs: ['remote', 'local'], params: { method: 'rrf' } },
  { at: 'systems[1]', id: 'other', node: 'fuse', kind: 'fuse', inputs: ['local'], params: { method: 'rrf' } },
];
const { plan } = buildPlan(entries, 10);
const ctx = { cache: new ContentStore('/nonexistent'), log: memoryLogger(), workDir: '/nonexistent', env: {} };

/** The plan with `remote` answering its probe with `live`. */
function withProbe(live: JsonValue): { plan: SystemsPlan; calls: () => number } {
  let calls = 0;
  const systems = plan.systems.map((s) =>
    s.id === 'remote'
      ? {
          ...s,
          bound: {
            ...s.bound,
            probe: async () => {
              calls++;
              return live;
            },
          },
        }
      : s,
  );
  return { plan: { systems, groups: plan.groups }, calls: () => calls };
}
const hashes = (p: SystemsPlan) => Object.fromEntries(p.systems.map((s) => [s.id, s.fingerprintHash]));

describe('probePlan', () => {
  it('adds a live identity to the probed system and to everything downstream of it, and nothing else', async () => {
    const before = hashes(plan);
    const v1 = withProbe({ name: 'memory-server', version: '1.0.0' });
    const after = await probePlan(v1.plan, ctx);
    expect(v1.calls()).toBe(1);
    const h = hashes(after);
    expect(h['remote']).not.toBe(before['remote']);
    expect(h['fused']).not.toBe(before['fused']);
    expect(h['local']).toBe(before['local']);
    expect(h['other']).toBe(before['other']);
    const remote = after.systems.find((s) => s.id === 'remote')!;
    expect(remote.fingerprint).toEqual({ own: plan.systems[0]!.fingerprint, live: { name: 'memory-server', version: '1.0.0' } });
    const fused = after.systems.find((s) => s.id === 'fused')!;
    expect((fused.fingerprint as { inputs: JsonValue[] }).inputs[0]).toEqual(remote.fingerprint);
  });

  it('an upgraded server gets new keys; the same server the same keys; a plan without probes is returned as is', async () => {
    const a = hashes(await probePlan(withProbe({ name: 'memory-server', version: '1.0.0' }).plan, ctx));
    const b = hashes(await probePlan(withProbe({ name: 'memory-server', version: '1.0.1' }).plan, ctx));
    const c = hashes(await probePlan(withProbe({ name: 'memory-server', version: '1.0.0' }).plan, ctx));
    expect(b['remote']).not.toBe(a['remote']);
    expect(b['fused']).not.toBe(a['fused']);
    expect(c).toEqual(a);
    expect(await probePlan(plan, ctx)).toBe(plan);
  });
});
