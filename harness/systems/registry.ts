import { chunkNode } from './chunk.js';
import { fuseNode } from './fuse.js';
import { llmRerankNode } from './llm-rerank.js';
import { recencyRerankNode } from './recency-rerank.js';
import { graphPprNode } from './graph.js';
import { retrieveNode } from './retrieve.js';
import { sessionNode } from './session.js';
import type { NodeKind } from './types.js';

/**
 * Every node kind of the systems plan, keyed by its config `kind`. A new kind (rerank, transform) is one line
 * here and one module; the runner never names a kind.
 */
export const nodeKinds = {
  retrieve: retrieveNode,
  fuse: fuseNode,
  chunk: chunkNode,
  session: sessionNode,
  'recency-rerank': recencyRerankNode,
  'llm-rerank': llmRerankNode,
  'graph-ppr': graphPprNode,
} as const satisfies Record<string, NodeKind>;

export type NodeKindName = keyof typeof nodeKinds;

export function isNodeKindName(kind: string): kind is NodeKindName {
  return Object.hasOwn(nodeKinds, kind);
}
