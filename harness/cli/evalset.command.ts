import { InputError, UsageError } from '../errors.js';
import { defineCommand } from './io.js';

export const evalsetCommand = defineCommand({
  command: 'evalset <action>',
  describe: 'Inspect an eval set (counts, distributions, notes, problems), or build one from a private memory store with an LLM',
  builder: (y) =>
    y
      .positional('action', { choices: ['inspect', 'build'] as const, demandOption: true, describe: 'what to do' })
      .option('format', { type: 'string', describe: 'inspect: eval-set format: beir, memory, locomo or longmemeval' })
      .option('path', { type: 'string', describe: 'inspect: folder (beir, memory) or file (locomo, longmemeval)' })
      .option('split', { type: 'string', describe: 'inspect: qrels split (beir; default test)' })
      .option('strata', { type: 'string', describe: 'inspect: strata file: queryId<TAB>stratum per line' })
      .option('qrels', {
        choices: ['complete', 'pooled'] as const,
        describe: "inspect: the qrels completeness a study would declare (evalset.qrels); default: the format's",
      })
      .option('options', { type: 'string', describe: 'inspect: format options as JSON, e.g. \'{"unit":"session"}\'' })
      .option('corpus', { type: 'string', describe: 'build: memory corpus (corpus.jsonl / corpus.csv or its folder)' })
      .option('out', { type: 'string', describe: 'build: the eval-set folder to write' })
      .option('model', { type: 'string', describe: 'build: the generator model' })
      .option('judge-model', { type: 'string', describe: 'build: the model that will judge (must differ from --model)' })
      .option('provider', { type: 'string', default: 'openai', choices: ['openai', 'anthropic'], describe: 'build: who serves the generator model' })
      .option('base-url', { type: 'string', describe: 'build: OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1; for anthropic the server root' })
      .option('api-key-env', { type: 'string', describe: "build: environment variable holding the API key (default the provider's)" })
      .option('batch', { type: 'boolean', default: false, describe: "build: send the generator's calls through the provider's batch API" })
      .option('local', { type: 'boolean', default: false, describe: 'build: the server is local: sensitive memories may be seeds' })
      .option('strata-by', {
        type: 'string',
        default: 'category',
        describe: 'build: comma-separated metadata fields to stratify seeds by (numbers in [0, 1] bucketed low/mid/high)',
      })
      .option('per-stratum', { type: 'number', default: 4, describe: 'build: seed memories per sampling stratum' })
      .option('kinds', { type: 'string', default: 'exact,paraphrase,multi-hop', describe: 'build: query kinds to generate' })
      .option('hops', { type: 'number', default: 2, describe: 'build: memories per multi-hop question' })
      .option('max-attempts', { type: 'number', default: 3, describe: 'build: generations per query before it is dropped' })
      .option('temperature', { type: 'number', default: 0.7, describe: 'build: generator temperature' })
      .option('seed', { type: 'number', default: 42, describe: 'build: seed of the sampling' })
      .option('concurrency', { type: 'number', default: 4, describe: 'build: requests in flight' })
      .option('hand', { type: 'string', describe: 'build: hand-authored queries (memory queries.jsonl lines) to add' })
      .option('cache', { type: 'string', default: '.cache', describe: 'build: cache folder for generator replies' })
      .example('$0 evalset inspect --format locomo --path data/datasets/locomo/locomo10.json', '')
      .example('$0 evalset inspect --format beir --path data/datasets/nfcorpus --split test', '')
      .example(
        '$0 evalset build --corpus data/store/corpus.jsonl --out data/store-eval --model gen-m --judge-model judge-m --base-url http://127.0.0.1:8080/v1 --local',
        '',
      ),
  async run(args, io) {
    const { resolve } = await import('node:path');
    if (args.action === 'build') {
      const { runBuild } = await import('../evalset-build/cli.js');
      io.out(await runBuild(args, io));
      return;
    }
    if (args.format === undefined || args.path === undefined) throw new UsageError('evalset inspect needs --format and --path');
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
    const { evalSetFormats } = await import('../../evalset/load.js');
    const byDefault = evalSetFormats[args.format as keyof typeof evalSetFormats].qrels;
    const qrels =
      args.qrels === undefined
        ? {
            value: byDefault,
            from: `the ${args.format} format's default (a config's evalset.qrels: ${byDefault === 'complete' ? 'pooled' : 'complete'} overrides it)`,
          }
        : { value: args.qrels, from: 'as --qrels declares' };
    io.out(formatInspect(evalSet, validation, qrels));
    if (validation.problems.length > 0) {
      throw new InputError(path, undefined, `${validation.problems.length} validation problems (listed above)`);
    }
  },
});
