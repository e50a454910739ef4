import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { didYouMean } from '../util/suggest.js';
import type { GridAxis } from '../config/schema.js';
import { type Deviation, type DeviationEntry, deviationsOf } from '../recipes/fidelity.js';
import { isNodeKindName, nodeKinds, type NodeKindName } from './registry.js';
import { type SensitivePolicy, sensitivePolicyProblems, withSensitivePolicy } from './sensitive.js';
import type { BoundNode, InputFacts, NodeKind } from './types.js';

/** One system of the plan: a node bound to its params, with the identity that keys its runs in the cache. */
export interface PlannedSystem {
  readonly id: string;
  readonly node: NodeKindName;
  /** Arm kind of a retrieve node, fusion method of a fuse node: what reports call the system's kind. */
  readonly kind: string;
  readonly inputs: readonly string[];
  readonly params: JsonValue;
  /**
   * The params as its entry and grid point gave them, before its node resolved them: what a worker thread binds
   * again. `params` is what reports show, which need not bind again (a cc fusion shows both its alpha and the
   * weights alpha resolves to; its schema takes one or the other).
   */
  readonly given?: JsonValue;
  /** The node's own fingerprint with its inputs' fingerprints: everything that makes its Run what it is. */
  readonly fingerprint: JsonValue;
  readonly fingerprintHash: string;
  /** The config entry this system was expanded from, when the entry expanded into several systems. */
  readonly group?: string;
  /** The grid point (and input subset) that distinguishes it within its group. */
  readonly point?: Readonly<Record<string, JsonValue>>;
  readonly label?: string;
  readonly substitute?: string;
  /** Its Recipe deviations from the source document: its entry's own that hold at its point, then its inputs'. */
  readonly deviations?: readonly Deviation[];
  /** Where its entry sits in the config (`arms[2]`), for problems found once the eval set is loaded. */
  readonly at: string;
  /** How Sensitive Documents are kept from it when it sends text off this machine (set on its arm entry). */
  readonly sensitive?: SensitivePolicy;
  /** The config file's folder (params naming files resolve against it), for rebinding in a worker thread. */
  readonly dir?: string;
  readonly bound: BoundNode;
}

/** A config entry of the plan, as written: an arm (node `retrieve`) or a derived system. */
export interface PlanEntry {
  /** Where the entry sits in the config, e.g. `arms[2]` or `systems[0]`, for problem messages. */
  readonly at: string;
  readonly id: string;
  readonly node: string;
  /** Arm kind for retrieve entries; for derived entries the node kind again. */
  readonly kind: string;
  readonly inputs: readonly string[] | { readonly 'subsets-of': readonly string[]; readonly min: number };
  readonly params: Readonly<Record<string, unknown>>;
  readonly grid?: Readonly<Record<string, GridAxis>>;
  readonly label?: string;
  readonly substitute?: string;
  /** The config file's folder, against which params that name files resolve. */
  readonly dir?: string;
  readonly sensitive?: SensitivePolicy;
  readonly deviations?: readonly DeviationEntry[];
}

export interface SystemsPlan {
  /** In execution order: every system after its inputs. */
  readonly systems: readonly PlannedSystem[];
  /** Entries that expanded into two or more systems: entry id -> member ids, in expansion order. */
  readonly groups: ReadonlyMap<string, readonly string[]>;
}

/** Values of one grid axis; a range includes both ends, with values rounded off binary noise (0.1 * 3 = 0.3). */
export function axisValues(axis: GridAxis): (string | number | boolean)[] {
  if (Array.isArray(axis)) return [...axis];
  const { from, to, step } = axis as { from: number; to: number; step: number };
  const out: number[] = [];
  for (let i = 0; ; i++) {
    const v = Number((from + i * step).toPrecision(12));
    if (v > to + step * 1e-9) break;
    out.push(v);
    if (out.length > 100_000) break;
  }
  return out;
}

/** Every subset of `ids` with at least `min` members, in a stable order (by size, then by position). */
export function subsets(ids: readonly string[], min: number): string[][] {
  const out: string[][] = [];
  const n = ids.length;
  for (let size = Math.max(1, min); size <= n; size++) {
    const pick = (start: number, acc: string[]) => {
      if (acc.length === size) {
        out.push([...acc]);
        return;
      }
      for (let i = start; i < n; i++) pick(i + 1, [...acc, ids[i] as string]);
    };
    pick(0, []);
  }
  return out;
}

function isList(x: PlanEntry['inputs']): x is readonly string[] {
  return Array.isArray(x);
}

function cartesian(axes: readonly (readonly [string, readonly (string | number | boolean)[]])[]): Record<string, string | number | boolean>[] {
  let points: Record<string, string | number | boolean>[] = [{}];
  for (const [key, values] of axes) points = points.flatMap((p) => values.map((v) => ({ ...p, [key]: v })));
  return points;
}

/** Largest plan we expand; a typo such as `step: 0.0001` should fail loudly, not run for a day. */
const MAX_SYSTEMS = 5_000;

/** The plan while `buildPlan` walks the config's entries in order, with the problems found so far. */
interface PlanDraft {
  readonly problems: string[];
  readonly systems: PlannedSystem[];
  readonly byId: Map<string, PlannedSystem>;
  readonly groups: Map<string, string[]>;
  /** Entry id -> where that entry sits, for duplicate ids. */
  readonly entryIds: Map<string, string>;
  /** Ids of entries that failed to bind: naming them as an input is not a new problem. */
  readonly failed: Set<string>;
}

/**
 * Expands the config's arms and systems into the plan: grids and input subsets become one system each, with
 * stable readable ids (`cc.bm25+fts5.alpha=0.3`); every node is bound by its kind; inputs must name systems
 * listed earlier, which makes the order an execution order and rules out cycles. Returns every problem at
 * once as `path: message` lines.
 */
export function buildPlan(entries: readonly PlanEntry[], topK: number): { plan: SystemsPlan; problems: string[] } {
  const draft: PlanDraft = { problems: [], systems: [], byId: new Map(), groups: new Map(), entryIds: new Map(), failed: new Set() };
  const cycles = inputCycles(entries);
  draft.problems.push(...cycles.problems);
  for (const e of entries) {
    if (cycles.cyclic.has(e.id) && !draft.entryIds.has(e.id)) {
      // Reported once as its cycle; systems downstream of it name a failed entry and stay quiet.
      draft.entryIds.set(e.id, e.at);
      draft.failed.add(e.id);
      continue;
    }
    planEntry(draft, e, entries, topK);
  }
  return { plan: { systems: draft.systems, groups: draft.groups }, problems: draft.problems };
}

/** The ids an entry reads, whether listed or as the pool of its input subsets. */
function listedInputs(e: PlanEntry): readonly string[] {
  return isList(e.inputs) ? e.inputs : e.inputs['subsets-of'];
}

/**
 * Every cycle among the entries' inputs (a system listing itself, or `a -> b -> a`), each named once at the
 * entry of the cycle listed first, with the ids on a cycle. Without this check a system that reads itself
 * would only look like an input listed after its system, or (being its own failed entry) vanish silently.
 */
export function inputCycles(entries: readonly PlanEntry[]): { problems: string[]; cyclic: Set<string> } {
  const byId = new Map<string, PlanEntry>();
  for (const e of entries) if (!byId.has(e.id)) byId.set(e.id, e);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (id: string): void => {
    state.set(id, 'open');
    stack.push(id);
    for (const ref of listedInputs(byId.get(id) as PlanEntry)) {
      if (!byId.has(ref)) continue;
      if (state.get(ref) === 'open') found.push([...stack.slice(stack.indexOf(ref)), ref]);
      else if (state.get(ref) === undefined) visit(ref);
    }
    stack.pop();
    state.set(id, 'done');
  };
  for (const id of byId.keys()) if (state.get(id) === undefined) visit(id);
  const order = new Map(entries.map((e, i) => [e.id, i] as const));
  const problems = found.map((cycle) => {
    const first = cycle.slice(0, -1).reduce((a, b) => ((order.get(a) as number) <= (order.get(b) as number) ? a : b));
    const e = byId.get(first) as PlanEntry;
    const start = cycle.indexOf(first);
    const named = [...cycle.slice(start, -1), ...cycle.slice(0, start), first].map((id) => `"${id}"`).join(' -> ');
    const why = cycle.length === 2 ? `"${first}" lists itself as an input` : `the inputs form a cycle, ${named} (each reads the next)`;
    return `${e.at}.inputs: ${why}; a system cannot read its own run, directly or through others; remove one of these inputs`;
  });
  return { problems, cyclic: new Set(found.flat()) };
}

/** Adds the systems of one entry to the draft, or its problems; stops at the first check that fails. */
function planEntry(draft: PlanDraft, e: PlanEntry, entries: readonly PlanEntry[], topK: number): void {
  const { problems } = draft;
  const first = draft.entryIds.get(e.id);
  if (first !== undefined) {
    problems.push(`${e.at}.id: duplicate id "${e.id}" (also ${first})`);
    return;
  }
  draft.entryIds.set(e.id, e.at);
  draft.failed.add(e.id);
  if (!isNodeKindName(e.node)) {
    problems.push(unknownKindProblem(e));
    return;
  }
  const kind = nodeKinds[e.node];
  const inputSets = isList(e.inputs) ? [e.inputs as readonly string[]] : subsets(e.inputs['subsets-of'], e.inputs.min);
  const inputPath = isList(e.inputs) ? `${e.at}.inputs` : `${e.at}.inputs.subsets-of`;
  if (!inputsKnown(draft, e, entries, inputPath)) return;
  const arity = arityProblem(e.node, kind.arity, inputSets, inputPath);
  if (arity !== undefined) {
    problems.push(arity);
    return;
  }
  const points = cartesian(gridAxes(e, problems));
  const expanded = inputSets.length * points.length;
  if (draft.systems.length + expanded > MAX_SYSTEMS) {
    problems.push(`${e.at}: expands into ${expanded} systems, past the limit of ${MAX_SYSTEMS} for one plan; narrow the grid or the subsets`);
    return;
  }
  const members = expandEntry(draft, { entry: e, kind: e.node, inputSets, points }, topK);
  if (expanded > 1 && members.length > 0) draft.groups.set(e.id, members);
  if (members.length > 0) draft.failed.delete(e.id);
}

function unknownKindProblem(e: PlanEntry): string {
  const known = Object.keys(nodeKinds).filter((k) => k !== 'retrieve');
  return `${e.at}.kind: unknown system kind "${e.node}"${didYouMean(e.node, known)} (known: ${known.join(', ')}; arms go under arms:)`;
}

/**
 * Whether every input the entry lists names a system planned already, once each; pushes a problem for each
 * that does not, except an entry that failed to bind (its own problems are reported where it is defined).
 */
function inputsKnown(draft: PlanDraft, e: PlanEntry, entries: readonly PlanEntry[], inputPath: string): boolean {
  const listed = isList(e.inputs) ? e.inputs : e.inputs['subsets-of'];
  let ok = true;
  listed.forEach((ref, i) => {
    if (draft.byId.has(ref)) return;
    ok = false;
    const problem = unknownInputProblem(draft, ref, entries);
    if (problem !== undefined) draft.problems.push(`${inputPath}[${i}]: ${problem}`);
  });
  if (new Set(listed).size !== listed.length) {
    draft.problems.push(`${inputPath}: an input is listed twice`);
    ok = false;
  }
  return ok;
}

/** Why `ref` names no planned system; undefined when it names an entry that failed to bind. */
function unknownInputProblem(draft: PlanDraft, ref: string, entries: readonly PlanEntry[]): string | undefined {
  const group = draft.groups.get(ref);
  if (group) return `"${ref}" is a grid of ${group.length} systems; name one of them (${group.slice(0, 3).join(', ')}${group.length > 3 ? ', ...' : ''})`;
  if (draft.failed.has(ref)) return undefined;
  if (entries.some((x) => x.id === ref)) return `"${ref}" is listed after this system; list systems after their inputs`;
  return `"${ref}" is not a system id${didYouMean(ref, [...draft.byId.keys()])}`;
}

/** The problem with the first input set whose size the node kind does not take, if any. */
function arityProblem(node: string, arity: NodeKind['arity'], inputSets: readonly (readonly string[])[], inputPath: string): string | undefined {
  const bad = inputSets.find((set) => set.length < arity.min || set.length > arity.max);
  if (bad === undefined) return undefined;
  return `${inputPath}: ${node} takes ${arity.min === arity.max ? arity.min : `${arity.min} to ${arity.max}`} input(s), got ${bad.length}`;
}

/** The entry's grid as (key, values) axes; a key also set in params, or an empty range, is a problem. */
function gridAxes(e: PlanEntry, problems: string[]): [string, (string | number | boolean)[]][] {
  const axes: [string, (string | number | boolean)[]][] = [];
  for (const [key, axis] of Object.entries(e.grid ?? {})) {
    if (Object.hasOwn(e.params, key)) problems.push(`${e.at}.grid.${key}: also set in params; set it in one place`);
    const values = axisValues(axis);
    if (values.length === 0) problems.push(`${e.at}.grid.${key}: the range is empty (from > to)`);
    axes.push([key, values]);
  }
  return axes;
}

/** One entry's expansion: a system per input set and grid point. */
interface Expansion {
  readonly entry: PlanEntry;
  readonly kind: NodeKindName;
  readonly inputSets: readonly (readonly string[])[];
  readonly points: readonly Record<string, string | number | boolean>[];
}

/**
 * Binds and plans one system per input set and grid point, returning the ids planned. A grid point fails for
 * the same reason as its siblings, so an entry's bind problems are reported once.
 */
function expandEntry(draft: PlanDraft, x: Expansion, topK: number): string[] {
  const e = x.entry;
  const members: string[] = [];
  let reported = false;
  for (const set of x.inputSets) {
    for (const point of x.points) {
      const suffix = [...(x.inputSets.length > 1 ? [set.join('+')] : []), ...Object.entries(point).map(([k, v]) => `${k}=${v}`)];
      const id = suffix.length === 0 ? e.id : `${e.id}.${suffix.join('.')}`;
      const inputs = set.map((ref) => draft.byId.get(ref) as PlannedSystem);
      const res = bindSystem(draft, x, { id, point, inputs }, topK);
      if ('problems' in res) {
        if (!reported) draft.problems.push(...res.problems.map((m) => `${e.at}.${m}${suffix.length > 0 ? ` (at ${suffix.join(', ')})` : ''}`));
        reported = true;
        continue;
      }
      if (draft.byId.has(id)) {
        draft.problems.push(`${e.at}: expands to id "${id}", which another system already has; rename one`);
        continue;
      }
      const planned = plannedSystem(x, { id, set, point, suffix, inputs }, res.node);
      draft.systems.push(planned);
      draft.byId.set(id, planned);
      members.push(id);
    }
  }
  return members;
}

/** Binds one system's node by its kind, then guards it by the entry's sensitive policy when it sets one. */
function bindSystem(
  draft: PlanDraft,
  x: Expansion,
  s: { readonly id: string; readonly point: Record<string, JsonValue>; readonly inputs: readonly PlannedSystem[] },
  topK: number,
): { readonly node: BoundNode } | { readonly problems: readonly string[] } {
  const e = x.entry;
  const facts: InputFacts[] = s.inputs.map((i) => ({
    id: i.id,
    theoreticalMinScore: i.bound.theoreticalMinScore,
    sendsTextOffMachine: i.bound.sendsTextOffMachine,
  }));
  const res = nodeKinds[x.kind].bind({
    kind: e.kind,
    params: { ...e.params, ...s.point },
    inputs: facts,
    topK,
    id: s.id,
    ...(e.dir === undefined ? {} : { dir: e.dir }),
  });
  if ('problems' in res || e.sensitive === undefined) return res;
  const target = e.sensitive === 'skip' ? undefined : draft.byId.get(e.sensitive.route);
  const arms = [...draft.byId.values()].filter((p) => p.inputs.length === 0).map((p) => p.id);
  const bad = sensitivePolicyProblems(e.sensitive, target, res.node, arms);
  return bad.length > 0 ? { problems: bad } : { node: withSensitivePolicy(res.node, e.sensitive, target) };
}

/** A bound system with its identity: its node's fingerprint and its inputs', and where it sits in its group. */
function plannedSystem(
  x: Expansion,
  s: {
    readonly id: string;
    readonly set: readonly string[];
    readonly point: Record<string, JsonValue>;
    readonly suffix: readonly string[];
    readonly inputs: readonly PlannedSystem[];
  },
  node: BoundNode,
): PlannedSystem {
  const e = x.entry;
  const expanded = x.inputSets.length * x.points.length;
  const fingerprint: JsonValue = s.set.length === 0 ? node.fingerprint : { own: node.fingerprint, inputs: s.inputs.map((i) => i.fingerprint) };
  return {
    id: s.id,
    node: x.kind,
    kind: node.kind,
    inputs: s.set,
    params: node.params,
    given: { ...e.params, ...s.point } as JsonValue,
    fingerprint,
    fingerprintHash: sha256Hex(canonicalJson(fingerprint)),
    ...(expanded > 1 ? { group: e.id, point: { ...(x.inputSets.length > 1 ? { inputs: s.set.join('+') } : {}), ...s.point } } : {}),
    ...(e.label === undefined ? {} : { label: expanded > 1 ? `${e.label} (${s.suffix.join(', ')})` : e.label }),
    ...substituteOf(e.substitute, s.inputs),
    ...deviationsField(e.deviations, { id: s.id, params: { ...(node.params as object), ...e.params, ...s.point } as JsonValue }, s.inputs),
    at: e.at,
    ...(e.sensitive === undefined ? {} : { sensitive: e.sensitive }),
    ...(e.dir === undefined ? {} : { dir: e.dir }),
    bound: node,
  };
}

/**
 * A system is a substitute when its entry says so or when it consumes one: a fusion over GloVe is no more a
 * bge result than GloVe is, so reports flag it too, naming the inputs it inherits from.
 */
function substituteOf(own: string | undefined, inputs: readonly PlannedSystem[]): { substitute?: string } {
  if (own !== undefined) return { substitute: own };
  const from = inputs.filter((s) => s.substitute !== undefined);
  return from.length === 0 ? {} : { substitute: `built on ${from.map((s) => `${s.id} (${s.substitute})`).join(', ')}` };
}

/** `{ deviations }` when the system has any (its own or its inputs'), else `{}`, so plans without recipes keep their shape. */
function deviationsField(
  own: readonly DeviationEntry[] | undefined,
  system: { readonly id: string; readonly params: JsonValue },
  inputs: readonly PlannedSystem[],
): { deviations?: readonly Deviation[] } {
  const all = deviationsOf(own, system, inputs);
  return all.length === 0 ? {} : { deviations: all };
}
