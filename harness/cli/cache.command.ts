import { UsageError } from '../errors.js';
import { defineCommand } from './io.js';

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 };
const SIZE_UNITS: Readonly<Record<string, number>> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `30d`, `12h`, `90m`, `45s`, `2w` in milliseconds. */
export function parseDuration(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(text.trim());
  if (!m) throw new UsageError(`${flag} ${JSON.stringify(text)}: give a number and a unit, e.g. 30d, 12h, 90m (s, m, h, d, w)`);
  return Number(m[1]) * DURATION_UNITS[m[2]!]!;
}

/** `500M`, `2G`, `2GiB`, `1.5GB`, `4096` in bytes; K, M, G, T are powers of 1024. */
export function parseSize(flag: string, text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  if (!m) throw new UsageError(`${flag} ${JSON.stringify(text)}: give a size, e.g. 500M or 2G (K, M, G, T are powers of 1024)`);
  return Math.floor(Number(m[1]) * SIZE_UNITS[m[2]!.toLowerCase()]!);
}

function mb(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(2)} GiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

export const cacheCommand = defineCommand({
  command: 'cache <action>',
  describe: 'Prune the run cache by age and/or to a size budget (only whole entries; never one being written)',
  builder: (y) =>
    y
      // One value per --ns, so it cannot swallow the action written after it.
      .parserConfiguration({ 'greedy-arrays': false })
      .positional('action', { choices: ['prune'] as const, demandOption: true, describe: 'what to do' })
      .option('dir', { type: 'string', describe: 'cache folder (default .cache, as ablate uses without cache:)', conflicts: 'config' })
      .option('config', { type: 'string', describe: 'use the cache: folder of this ablation config' })
      .option('older-than', { type: 'string', describe: 'remove entries written longer ago than this: 30d, 12h, 90m' })
      .option('max-size', { type: 'string', describe: 'then remove the oldest entries until the cache fits: 500M, 2G (powers of 1024)' })
      .option('ns', { type: 'string', describe: 'only this namespace (index, embed, judge, run); repeatable', array: true })
      .option('dry-run', { type: 'boolean', default: false, describe: 'print what would be removed; remove nothing' })
      .example('$0 cache prune --older-than 30d', 'drop entries not rewritten for a month')
      .example('$0 cache prune --max-size 2G --dry-run', 'what would go to fit 2 GiB'),
  async run(args, io) {
    const { resolve, relative } = await import('node:path');
    const { pruneCache } = await import('../cache/prune.js');
    if (args.olderThan === undefined && args.maxSize === undefined) {
      throw new UsageError('cache prune: say what to remove with --older-than and/or --max-size', {
        hint: 'e.g. harness cache prune --older-than 30d --dry-run',
      });
    }
    const olderThanMs = args.olderThan === undefined ? undefined : parseDuration('--older-than', args.olderThan);
    const maxBytes = args.maxSize === undefined ? undefined : parseSize('--max-size', args.maxSize);
    let root: string;
    if (args.config !== undefined) {
      const { loadConfig } = await import('../config/load.js');
      root = loadConfig(args.config, { env: io.env, cwd: io.cwd }).cache;
    } else root = resolve(io.cwd, args.dir ?? '.cache');
    const r = await pruneCache(root, {
      ...(olderThanMs === undefined ? {} : { olderThanMs }),
      ...(maxBytes === undefined ? {} : { maxBytes }),
      ...(args.ns === undefined ? {} : { namespaces: args.ns }),
      dryRun: args.dryRun,
    });
    const where = relative(io.cwd, root) || '.';
    const byNs = new Map<string, number>();
    for (const e of r.removed) byNs.set(e.ns, (byNs.get(e.ns) ?? 0) + 1);
    const detail = [...byNs].map(([ns, n]) => `${ns} ${n}`).join(', ');
    const verb = args.dryRun ? 'would remove' : 'removed';
    io.out(
      [
        `${where}: ${r.entries} entries, ${mb(r.bytes)}`,
        `  ${verb} ${r.removed.length} entries, ${mb(r.removedBytes)}${detail ? ` (${detail})` : ''}; ${r.entries - r.removed.length} left, ${mb(r.bytes - r.removedBytes)}`,
        ...(r.skipped > 0 ? [`  left alone: ${r.skipped} file(s) that are not whole cache entries (writes in progress, other files)`] : []),
        '',
      ].join('\n'),
    );
  },
});
