import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import type { PlannedSystem, SystemsPlan } from './plan.js';
import type { NodeContext } from './types.js';

/**
 * The plan with each probed system's live identity (an MCP server's name and version from its handshake, see
 * docs/adr/0021-remote-arms.md) added to its fingerprint, and every fingerprint downstream of it recomputed,
 * so that the run-cache keys of the system and of every fusion over it change when the server does. Systems
 * without a probe, and not downstream of one, are returned unchanged. Probes run once each, in plan order.
 */
export async function probePlan(plan: SystemsPlan, ctx: NodeContext): Promise<SystemsPlan> {
  if (!plan.systems.some((s) => s.bound.probe)) return plan;
  const original = new Map(plan.systems.map((s) => [s.id, s] as const));
  const byId = new Map<string, PlannedSystem>();
  const systems: PlannedSystem[] = [];
  for (const s of plan.systems) {
    const live = s.bound.probe ? await s.bound.probe(ctx) : undefined;
    const inputs = s.inputs.map((id) => byId.get(id) as PlannedSystem);
    const changed = live !== undefined || inputs.some((x) => x !== original.get(x.id));
    let next = s;
    if (changed) {
      // The same shape as the plan's own (plan.ts), with `live` beside the node's own fingerprint.
      const own: JsonValue = live === undefined ? s.bound.fingerprint : { own: s.bound.fingerprint, live };
      const fingerprint: JsonValue = inputs.length === 0 ? own : { own, inputs: inputs.map((x) => x.fingerprint) };
      next = { ...s, fingerprint, fingerprintHash: sha256Hex(canonicalJson(fingerprint)) };
    }
    byId.set(s.id, next);
    systems.push(next);
  }
  return { systems, groups: plan.groups };
}
