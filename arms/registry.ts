import type { ArmFactory } from './types.js';
import { fakeArm } from './fake/index.js';
import { bm25Arm } from './bm25/index.js';
import { sqliteFts5Arm } from './sqlite-fts5/index.js';
import { runFileArm } from './run-file/index.js';
import { commandArm } from './remote/command/index.js';
import { httpArm } from './remote/http/index.js';
import { mcpArm } from './remote/mcp/index.js';
import { hashEmbedArm } from './hash-embed/index.js';
import { onnxEmbedArm } from './dense/onnx.js';
import { useLiteArm } from './dense/use-lite.js';
import { entityLaneArm, graphBfsArm } from './graph/entity-arms.js';
import { voyageEmbedArm } from './dense/hosted/voyage.js';
import { openaiEmbedArm } from './dense/hosted/openai.js';
import { postgresArm } from './postgres/index.js';

/**
 * Every arm kind, keyed by its config `kind`. One line per kind; error messages, `--help` and the config
 * schema all read this object, so the list of known kinds cannot drift.
 */
export const armFactories = {
  fake: fakeArm,
  bm25: bm25Arm,
  'sqlite-fts5': sqliteFts5Arm,
  'run-file': runFileArm,
  command: commandArm,
  http: httpArm,
  mcp: mcpArm,
  'hash-embed': hashEmbedArm,
  'onnx-embed': onnxEmbedArm,
  'use-lite': useLiteArm,
  'graph-bfs': graphBfsArm,
  'entity-lane': entityLaneArm,
  'voyage-embed': voyageEmbedArm,
  'openai-embed': openaiEmbedArm,
  postgres: postgresArm,
  // biome-ignore lint/suspicious/noExplicitAny: a registry holds factories of different param types; each entry is checked by `satisfies` against its own
} as const satisfies Record<string, ArmFactory<any>>;

export type ArmKind = keyof typeof armFactories;

export function isArmKind(kind: string): kind is ArmKind {
  return Object.hasOwn(armFactories, kind);
}
