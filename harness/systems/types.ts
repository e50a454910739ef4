import type { z } from 'zod';
import type { Corpus, JsonValue, Query } from '../../evalset/types.js';
import type { ContentStore } from '../cache/index.js';
import type { Logger } from '../log.js';

/**
 * The systems plan (docs/adr/0015-systems-plan.md): every Run of an ablation comes from a System, a node
 * `{ id, node, inputs, params }` whose node kind is one entry of the registry in `registry.ts`. A `retrieve`
 * node wraps an Arm; a `fuse` node consumes the Runs of its inputs. A node's fingerprint hashes its own params
 * with its inputs' fingerprints, so it is the run-cache key of the node on each scope.
 */

/** The queries of one retrieval scope and the documents they search. Unscoped eval sets have one. */
export interface ScopeData {
  readonly scope: string | undefined;
  readonly documents: Corpus;
  readonly queries: readonly Query[];
  /** sha256 of the scope's documents and of its queries: with a node fingerprint, the run-cache key. */
  readonly corpusFingerprint: string;
  readonly queriesFingerprint: string;
}

/** queryId -> [[docId, score], ...], best first; what the run cache stores per node and scope. */
export type ScopeResults = Record<string, [string, number][]>;

/** One system's output over one scope, as the run cache stores it. */
export interface ScopeRun {
  /** Index statistics of a retrieve node (documents, terms, ...); empty for derived nodes. */
  readonly indexStats: Readonly<Record<string, number>>;
  readonly indexMs: number;
  /** Time to produce the results once the index existed: searching, or fusing. */
  readonly searchMs: number;
  /** Milliseconds per query (a batched search shares its time equally among the batch). */
  readonly queryMs: Readonly<Record<string, number>>;
  readonly results: ScopeResults;
  /**
   * The Returned items among `results` (text the system returned that no Document holds), by id: what the
   * judge reads. Absent when there are none, so a run of Documents is stored as before.
   */
  readonly returned?: Readonly<Record<string, ReturnedText>>;
}

/**
 * The text of one Returned item, Sensitive when its Scope held a Sensitive Document: a server may restate
 * a private memory, so its text is kept from a judge that is not local, as the Document would be.
 */
export interface ReturnedText {
  readonly text: string;
  readonly sensitive?: true;
}

/** What a node instance is handed: the shared cache, a logger, scratch space and the environment. */
export interface NodeContext {
  readonly cache: ContentStore;
  readonly log: Logger;
  /** A folder for on-disk indexes; persists across runs (under the cache root). */
  readonly workDir: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A system made executable for one ablation: created once, then asked for one scope at a time. */
export interface SystemInstance {
  /** The system's results on `scope`, given its inputs' results on the same scope (in `inputs` order). */
  runScope(scope: ScopeData, inputs: readonly ScopeRun[], topK: number): Promise<ScopeRun>;
  close?(): Promise<void>;
}

/** What a derived node reports about how its inputs reached its output (fusion: contributions, reach). */
export interface SystemDiagnostics {
  readonly inputs: readonly InputDiagnostics[];
  /** Plain sentences, each one a problem the user must see (printed on stderr and as report warnings). */
  readonly problems: readonly string[];
}

/** A Result check's fault: `empty` (no results for most queries) or `unknown` (mostly ids the eval set lacks). */
export type ResultFault = 'empty' | 'unknown';

/**
 * What the Result check found wrong with one System's results over every Scope (absent when nothing is): the
 * counts, the faults, the inputs that are empty too, and one id the eval set does know, for comparison.
 */
export interface ResultCheck {
  readonly queries: number;
  /** Queries without a single result. */
  readonly empty: number;
  /** Result entries over every query, and those naming no Document of their Scope's Corpus. */
  readonly returned: number;
  readonly unknown: number;
  readonly faults: readonly ResultFault[];
  /** A derived System's inputs that are `empty` too: the likely cause of its own. */
  readonly emptyInputs?: readonly string[];
  /** The first Document id of the Corpus, set beside an `unknown` fault to show what ids should look like. */
  readonly knownId?: string;
  /**
   * Beside an `empty` fault of a remote arm that ran its store check: memories sampled and found by their own
   * text, over every Scope. Found memories mean the store is not empty, so the hint looks elsewhere.
   */
  readonly storeCheck?: { readonly sampled: number; readonly found: number };
}

export interface InputDiagnostics {
  readonly input: string;
  /** Share of the fused top-`cutoff` entries (over all queries) that this input also ranked in its top-depth. */
  readonly share: number;
  /** Share that only this input ranked. */
  readonly soloShare: number;
  /** Structural check: can a document only this input ranked first ever enter the fused top-`cutoff`? */
  readonly reachable: boolean;
  readonly reason: string;
  /** Share of queries where this input's top document, had it been this input's alone, would enter the top-`cutoff`. */
  readonly empiricalReach: number;
  /**
   * Queries in which the input returned a document, and those of them in which the structural bound, held
   * against what every input returned there, bars it (harness/fusion/reach.ts `reachOnRuns`).
   */
  readonly queries?: number;
  readonly barredQueries?: number;
  readonly cutoff: number;
}

/**
 * A node kind bound to one config entry: params validated and resolved, identity and static facts known.
 * `kind` is what reports show (the arm kind of a retrieve node, the method of a fuse node).
 */
export interface BoundNode {
  readonly kind: string;
  /** Params with defaults filled, as reports print them. */
  readonly params: JsonValue;
  /** The node's own identity (its inputs' fingerprints are added by the plan). Never contains a secret. */
  readonly fingerprint: JsonValue;
  /** The lowest score the node can return (BM25 0, cosine -1), for TM2C2 fusions over it; undefined if unbounded. */
  readonly theoreticalMinScore: number | undefined;
  /** True when running the node sends query or document text to a service off this machine. */
  readonly sendsTextOffMachine: boolean;
  create(ctx: NodeContext): SystemInstance;
  /**
   * The live identity of the system behind a node (an MCP server's name and version), asked once per ablation
   * before any run-cache lookup; the plan adds it to the fingerprints of the node and of everything downstream.
   */
  probe?(ctx: NodeContext): Promise<JsonValue>;
  /** Derived nodes: how the inputs reached the output, over every query. */
  diagnose?(output: ScopeResults, inputs: readonly ScopeResults[]): SystemDiagnostics;
}

/** The facts about one input a node kind may use when binding (e.g. TM2C2 needs its theoretical minimum). */
export interface InputFacts {
  readonly id: string;
  readonly theoreticalMinScore: number | undefined;
  readonly sendsTextOffMachine: boolean;
}

/**
 * One node kind of the registry. `bind` validates a config entry's params against the kind's schema and its
 * inputs, returning `path: message` problems rather than throwing, so the config loader reports all at once.
 */
export interface NodeKind {
  readonly summary: string;
  /** How many inputs a node of this kind takes. */
  readonly arity: { readonly min: number; readonly max: number };
  /**
   * The strict schema of a config entry's `params`, as `bind` checks it, for the config's JSON Schema
   * (scripts/config-schema.ts). Absent for `retrieve`, whose params are its arm kind's.
   */
  readonly params?: z.ZodType;
  bind(entry: {
    readonly kind: string;
    readonly params: unknown;
    readonly inputs: readonly InputFacts[];
    readonly topK: number;
    /** The config file's folder, against which params that name files resolve. */
    readonly dir?: string;
    /** The system's id, for the messages of what the node creates. */
    readonly id?: string;
  }): { readonly node: BoundNode } | { readonly problems: readonly string[] };
}
