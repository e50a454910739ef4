import type { ArmFactory } from '../../arms/types.js';
import { defineCommand } from './io.js';

/** One arm kind in full: what it is, its params, what it needs, and a config entry to start from. */
async function describeKind(kind: string): Promise<string> {
  const { armFactories, isArmKind } = await import('../../arms/registry.js');
  const { UsageError } = await import('../errors.js');
  const { didYouMean } = await import('../util/suggest.js');
  const { keysOf } = await import('../config/problems.js');
  const { armRequirements } = await import('../config/load.js');
  const { armExamples } = await import('./arm-examples.js');
  const kinds = Object.keys(armFactories);
  if (!isArmKind(kind)) throw new UsageError(`arms ${kind}: unknown arm kind "${kind}"${didYouMean(kind, kinds)} (known: ${kinds.join(', ')})`);
  const f = armFactories[kind] as ArmFactory;
  const req = armRequirements(f, {});
  return [
    `${kind}: ${f.summary}`,
    `  params: ${keysOf(f.params, []).join(', ') || '(none)'}`,
    ...(req.env?.length ? [`  needs env: ${req.env.join(', ')}`] : []),
    ...(req.packages?.length ? [`  needs packages: ${req.packages.join(', ')}`] : []),
    '',
    'example (under arms:; every kind: docs/arms/examples.md):',
    armExamples[kind].replace(/^/gm, '  '),
    '',
  ].join('\n');
}

export const armsCommand = defineCommand({
  command: 'arms [kind]',
  describe: 'List the arm kinds and system kinds this installation knows, with their params and requirements; with a kind, a config example',
  builder: (y) =>
    y
      .positional('kind', { type: 'string', describe: 'an arm kind (bm25, http, ...): its params, requirements and a config example' })
      .example('$0 arms http', 'how to write an http arm'),
  async run(args, io) {
    if (args.kind !== undefined) {
      io.out(await describeKind(args.kind));
      return;
    }
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
    lines.push('`harness arms <kind>` prints a config example of an arm kind.');
    io.out(`${lines.join('\n')}\n`);
  },
});
