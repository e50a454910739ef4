import { defineCommand } from './io.js';

export const armsCommand = defineCommand({
  command: 'arms',
  describe: 'List the arm kinds this installation knows, with their params and requirements',
  builder: (y) => y,
  async run(_args, io) {
    const { armFactories } = await import('../../arms/registry.js');
    const lines: string[] = [];
    for (const [kind, f] of Object.entries(armFactories)) {
      const shape = (f.params as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      lines.push(`${kind}: ${f.summary}`);
      lines.push(`  params: ${Object.keys(shape).join(', ') || '(none)'}`);
      const req = f.requires as { env?: readonly string[]; packages?: readonly string[] } | undefined;
      if (req?.env?.length) lines.push(`  needs env: ${req.env.join(', ')}`);
      if (req?.packages?.length) lines.push(`  needs packages: ${req.packages.join(', ')}`);
    }
    io.out(`${lines.join('\n')}\n`);
  },
});
