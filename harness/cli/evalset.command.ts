import { InputError, UsageError } from '../errors.js';
import { defineCommand } from './io.js';

export const evalsetCommand = defineCommand({
  command: 'evalset <action>',
  describe: 'Inspect an eval set: counts per stratum, length distributions, loader notes and validation problems',
  builder: (y) =>
    y
      .positional('action', { choices: ['inspect'] as const, demandOption: true, describe: 'what to do' })
      .option('format', { type: 'string', demandOption: true, describe: 'eval-set format: beir, memory, locomo or longmemeval' })
      .option('path', { type: 'string', demandOption: true, describe: 'folder (beir, memory) or file (locomo, longmemeval)' })
      .option('split', { type: 'string', describe: 'qrels split (beir; default test)' })
      .option('strata', { type: 'string', describe: 'strata file: queryId<TAB>stratum per line' })
      .option('options', { type: 'string', describe: 'format options as JSON, e.g. \'{"unit":"session"}\'' })
      .example('$0 evalset inspect --format locomo --path data/datasets/locomo/locomo10.json', '')
      .example('$0 evalset inspect --format beir --path data/datasets/nfcorpus --split test', ''),
  async run(args, io) {
    const { resolve } = await import('node:path');
    const { loadEvalSetChecked } = await import('../../evalset/load.js');
    const { formatInspect } = await import('../../evalset/inspect.js');
    let options: unknown;
    if (args.options !== undefined) {
      try {
        options = JSON.parse(args.options) as unknown;
      } catch {
        throw new UsageError(`--options is not valid JSON: ${args.options}`, { hint: 'quote it for the shell: --options \'{"unit":"session"}\'' });
      }
    }
    const path = resolve(io.cwd, args.path);
    const { evalSet, validation } = await loadEvalSetChecked(
      {
        format: args.format,
        path,
        source: '--options',
        ...(args.split === undefined ? {} : { split: args.split }),
        ...(args.strata === undefined ? {} : { strata: resolve(io.cwd, args.strata) }),
        ...(options === undefined ? {} : { options }),
      },
      io.log,
    );
    io.out(formatInspect(evalSet, validation));
    if (validation.problems.length > 0) {
      throw new InputError(path, undefined, `${validation.problems.length} validation problems (listed above)`);
    }
  },
});
