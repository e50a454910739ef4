import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { didYouMean } from '../util/suggest.js';
import type { GridAxis } from '../config/schema.js';
import { isNodeKindName, nodeKinds, type NodeKindName } from './registry.js';
import { type SensitivePolicy, sensitivePolicyProblems, withSensitivePolicy } from './sensitive.js';
import type { BoundNode, InputFacts } from './types.js';

/** One system of the plan: a node bound to its params, with the identity that keys its runs in the cache. */
export interface PlannedSystem {
  readonly id: string;
  readonly node: NodeKindName;
  /** Arm kind of a retrieve node, fusion method of a fuse node: what reports call the system's kind. */
  readonly kind: string;
  readonly inputs: readonly string[];
  readonly params: JsonValue;
  /** The node's own fingerprint with its inputs' fingerprints: everything that makes its Run what it is. */
  readonly fingerprint: JsonValue;
  readonly fingerprintHash: string;
  /** The config entry this system was expanded from, when the entry expanded into several systems. */
  readonly group?: string;
  /** The grid point (and input subset) that distinguishes it within its group. */
  readonly point?: Readonly<Record<string, JsonValue>>;
  readonly label?: string;
  readonly substitute?: string;
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

/**
 * Expands the config's arms and systems into the plan: grids and input subsets become one system each, with
 * stable readable ids (`cc.bm25+fts5.alpha=0.3`); every node is bound by its kind; inputs must name systems
 * listed earlier, which makes the order an execution order and rules out cycles. Returns every problem at
 * once as `path: message` lines.
 */
export function buildPlan(entries: readonly PlanEntry[], topK: number): { plan: SystemsPlan; problems: string[] } {
  const problems: string[] = [];
  const systems: PlannedSystem[] = [];
  const byId = new Map<string, PlannedSystem>();
  const groups = new Map<string, string[]>();
  const entryIds = new Map<string, string>();
  /** Ids of entries that failed to bind: naming them as an input is not a new problem. */
  const failed = new Set<string>();
  for (const e of entries) {
    const first = entryIds.get(e.id);
    if (first !== undefined) {
      problems.push(`${e.at}.id: duplicate id "${e.id}" (also ${first})`);
      continue;
    }
    entryIds.set(e.id, e.at);
    failed.add(e.id);
    if (!isNodeKindName(e.node)) {
      const known = Object.keys(nodeKinds).filter((k) => k !== 'retrieve');
      problems.push(`${e.at}.kind: unknown system kind "${e.node}"${didYouMean(e.node, known)} (known: ${known.join(', ')}; arms go under arms:)`);
      continue;
    }
    const kind = nodeKinds[e.node];
    const inputSets = isList(e.inputs) ? [e.inputs as readonly string[]] : subsets(e.inputs['subsets-of'], e.inputs.min);
    const inputPath = isList(e.inputs) ? `${e.at}.inputs` : `${e.at}.inputs.subsets-of`;
    let inputsOk = true;
    const listed = isList(e.inputs) ? e.inputs : e.inputs['subsets-of'];
    listed.forEach((ref, i) => {
      if (byId.has(ref)) return;
      inputsOk = false;
      const group = groups.get(ref);
      if (group)
        problems.push(
          `${inputPath}[${i}]: "${ref}" is a grid of ${group.length} systems; name one of them (${group.slice(0, 3).join(', ')}${group.length > 3 ? ', ...' : ''})`,
        );
      else if (failed.has(ref))
        return; // its own problems are reported where it is defined
      else if (entries.some((x) => x.id === ref)) problems.push(`${inputPath}[${i}]: "${ref}" is listed after this system; list systems after their inputs`);
      else problems.push(`${inputPath}[${i}]: "${ref}" is not a system id${didYouMean(ref, [...byId.keys()])}`);
    });
    if (new Set(listed).size !== listed.length) {
      problems.push(`${inputPath}: an input is listed twice`);
      inputsOk = false;
    }
    if (!inputsOk) continue;
    for (const set of inputSets) {
      if (set.length < kind.arity.min || set.length > kind.arity.max) {
        problems.push(
          `${inputPath}: ${e.node} takes ${kind.arity.min === kind.arity.max ? kind.arity.min : `${kind.arity.min} to ${kind.arity.max}`} input(s), got ${set.length}`,
        );
        inputsOk = false;
        break;
      }
    }
    if (!inputsOk) continue;
    const axes: [string, (string | number | boolean)[]][] = [];
    for (const [key, axis] of Object.entries(e.grid ?? {})) {
      if (Object.hasOwn(e.params, key)) problems.push(`${e.at}.grid.${key}: also set in params; set it in one place`);
      const values = axisValues(axis);
      if (values.length === 0) problems.push(`${e.at}.grid.${key}: the range is empty (from > to)`);
      axes.push([key, values]);
    }
    const points = cartesian(axes);
    const expanded = inputSets.length * points.length;
    if (systems.length + expanded > MAX_SYSTEMS) {
      problems.push(`${e.at}: expands into ${expanded} systems, past the limit of ${MAX_SYSTEMS} for one plan; narrow the grid or the subsets`);
      continue;
    }
    const members: string[] = [];
    let reported = false;
    for (const set of inputSets) {
      for (const point of points) {
        const suffix = [...(inputSets.length > 1 ? [set.join('+')] : []), ...Object.entries(point).map(([k, v]) => `${k}=${v}`)];
        const id = suffix.length === 0 ? e.id : `${e.id}.${suffix.join('.')}`;
        const inputs = set.map((ref) => byId.get(ref) as PlannedSystem);
        const facts: InputFacts[] = inputs.map((s) => ({
          id: s.id,
          theoreticalMinScore: s.bound.theoreticalMinScore,
          sendsTextOffMachine: s.bound.sendsTextOffMachine,
        }));
        let res = kind.bind({ kind: e.kind, params: { ...e.params, ...point }, inputs: facts, topK, id, ...(e.dir === undefined ? {} : { dir: e.dir }) });
        if (!('problems' in res) && e.sensitive !== undefined) {
          const target = e.sensitive === 'skip' ? undefined : byId.get(e.sensitive.route);
          const bad = sensitivePolicyProblems(
            e.sensitive,
            target,
            res.node,
            [...byId.values()].filter((s) => s.inputs.length === 0).map((s) => s.id),
          );
          res = bad.length > 0 ? { problems: bad } : { node: withSensitivePolicy(res.node, e.sensitive, target) };
        }
        if ('problems' in res) {
          // A grid point fails for the same reason as its siblings: report the entry once.
          if (!reported) problems.push(...res.problems.map((m) => `${e.at}.${m}${suffix.length > 0 ? ` (at ${suffix.join(', ')})` : ''}`));
          reported = true;
          continue;
        }
        const fingerprint: JsonValue = set.length === 0 ? res.node.fingerprint : { own: res.node.fingerprint, inputs: inputs.map((s) => s.fingerprint) };
        const planned: PlannedSystem = {
          id,
          node: e.node,
          kind: res.node.kind,
          inputs: set,
          params: res.node.params,
          fingerprint,
          fingerprintHash: sha256Hex(canonicalJson(fingerprint)),
          ...(expanded > 1 ? { group: e.id, point: { ...(inputSets.length > 1 ? { inputs: set.join('+') } : {}), ...point } } : {}),
          ...(e.label === undefined ? {} : { label: expanded > 1 ? `${e.label} (${suffix.join(', ')})` : e.label }),
          ...substituteOf(e.substitute, inputs),
          at: e.at,
          ...(e.sensitive === undefined ? {} : { sensitive: e.sensitive }),
          ...(e.dir === undefined ? {} : { dir: e.dir }),
          bound: res.node,
        };
        if (byId.has(id)) {
          problems.push(`${e.at}: expands to id "${id}", which another system already has; rename one`);
          continue;
        }
        systems.push(planned);
        byId.set(id, planned);
        members.push(id);
      }
    }
    if (expanded > 1 && members.length > 0) groups.set(e.id, members);
    if (members.length > 0) failed.delete(e.id);
  }
  return { plan: { systems, groups }, problems };
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
