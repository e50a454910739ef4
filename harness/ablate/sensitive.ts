import { armFactories, isArmKind } from '../../arms/registry.js';
import type { EvalSet } from '../../evalset/types.js';
import { keysOf } from '../config/problems.js';
import type { SystemsPlan } from '../systems/plan.js';
import type { SensitivePolicy } from '../systems/sensitive.js';

/**
 * The runner's half of the sensitive-document policy (ADR 0018): before any system runs, a system that sends
 * text off this machine is refused while the eval set holds Sensitive Documents and its config entry does not
 * say how to keep them from it. The arms themselves never see the flag; `withSensitivePolicy` (harness/systems)
 * filters and routes.
 */

/** How many documents of the eval sets (test and, when tuning on one, dev) are flagged sensitive. */
export function countSensitive(sets: readonly (EvalSet | undefined)[]): number {
  const ids = new Set<string>();
  for (const es of sets) for (const d of es?.documents ?? []) if (d.sensitive === true) ids.add(d.id);
  return ids.size;
}

/**
 * `path: message` problems, one per config entry whose systems send text off this machine without a policy,
 * naming the arm(s), the number of Sensitive Documents and the key to set. Empty when there is nothing to refuse.
 */
export function sensitiveProblems(plan: SystemsPlan, sensitiveDocuments: number): string[] {
  if (sensitiveDocuments === 0) return [];
  const byEntry = new Map<string, { ids: string[]; kind: string; derived: boolean; declarable: boolean }>();
  for (const s of plan.systems) {
    if (!s.bound.sendsTextOffMachine || s.sensitive !== undefined) continue;
    // Remote arms (http, mcp over a URL) may be services on this machine: say how to declare one.
    const declarable = isArmKind(s.kind) && keysOf(armFactories[s.kind].params, []).includes('local');
    const entry = byEntry.get(s.at) ?? { ids: [], kind: s.kind, derived: s.inputs.length > 0, declarable };
    entry.ids.push(s.id);
    byEntry.set(s.at, entry);
  }
  const docs = `${sensitiveDocuments} sensitive document${sensitiveDocuments === 1 ? '' : 's'}`;
  return [...byEntry].map(([at, { ids, kind, derived, declarable }]) => {
    const who = `${ids.length === 1 ? 'system' : 'systems'} ${ids.map((id) => `"${id}"`).join(', ')} (${kind})`;
    return derived
      ? `${at}: ${who} would send text off this machine and the eval set has ${docs}; no policy exists for derived systems yet, so remove it or unflag the documents`
      : `${at}.sensitive: ${who} would send text off this machine and the eval set has ${docs}, which must never leave it; ` +
          `set ${at}.sensitive to skip (leave them out of this arm; the report counts them) or to { route: <id of a local arm listed earlier> } (a local arm retrieves them)` +
          (declarable ? `, or set ${at}.params.local: true if the service runs on this machine` : '');
  });
}

/** What a report and manifest say about a guarded system: its policy and how many Sensitive Documents it concerned. */
export interface SensitiveSummary {
  readonly policy: 'skip' | 'route';
  readonly route?: string;
  readonly documents: number;
}

export function sensitiveSummary(policy: SensitivePolicy | undefined, sendsTextOffMachine: boolean, sensitiveDocuments: number): SensitiveSummary | undefined {
  if (policy === undefined || !sendsTextOffMachine || sensitiveDocuments === 0) return undefined;
  return policy === 'skip' ? { policy: 'skip', documents: sensitiveDocuments } : { policy: 'route', route: policy.route, documents: sensitiveDocuments };
}
