import type { ArmFactory } from '../../arms/types.js';
import { defineCommand } from './io.js';

export const armsCommand = defineCommand({
  command: 'arms',
  describe: 'List the arm kinds and system kinds this installation knows, with their params and requirements',
  builder: (y) => y,
  async run(_args, io) {
    const { armFactories } = await import('../../arms/registry.js');
    const { nodeKinds } = await import('../systems/registry.js');
    const { fuseParamsSchema } = await import('../fusion/index.js');
    const { pprParamsSchema } = await import('../../arms/graph/ppr-rank.js');
    const { keysOf } = await import('../config/problems.js');
    const { armRequirements } = await import('../config/load.js');
    const lines: string[] = ['arms (kind under arms:):'];
    for (const [kind, f] of Object.entries(armFactories)) {
      lines.push(`  ${kind}: ${f.summary}`);
      lines.push(`    params: ${keysOf(f.params, []).join(', ') || '(none)'}`);
      // Kinds with required params (a run file's path) have no default instance to ask.
      const defaults = f.params.safeParse({});
      const min = defaults.success ? f.theoreticalMinScore(defaults.data as never) : undefined;
      if (min !== undefined) lines.push(`    theoretical minimum score: ${min}`);
      const req = armRequirements(f as ArmFactory, {});
      if (req?.env?.length) lines.push(`    needs env: ${req.env.join(', ')}`);
      if (req?.packages?.length) lines.push(`    needs packages: ${req.packages.join(', ')}`);
    }
    // Systems computed from other systems' runs; one schema per kind, shown the same way.
    const params: Record<string, readonly string[]> = { fuse: keysOf(fuseParamsSchema, []), 'graph-ppr': keysOf(pprParamsSchema, []) };
    lines.push('systems (kind under systems:):');
    for (const [kind, k] of Object.entries(nodeKinds)) {
      if (kind === 'retrieve') continue;
      lines.push(`  ${kind}: ${k.summary}`, `    inputs: ${k.arity.min} to ${k.arity.max}`, `    params: ${(params[kind] ?? []).join(', ')}`);
    }
    io.out(`${lines.join('\n')}\n`);
  },
});
