/**
 * `npm run build-glove`: builds the offline GloVe model folder the `onnx-embed` arm runs as a substitute
 * (arms/dense/glove-model.ts says what it holds and why).
 *
 * Run: `npx tsx scripts/build-glove-model.ts [--out <dir>] [--words <n>] [--weighting sif|none]`
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildGloveModel, defaultGloveDir, GLOVE_DEFAULT_WORDS, type GloveWeighting } from '../arms/dense/glove-model.js';
import { HarnessError, UsageError } from '../harness/errors.js';

async function main(argv: readonly string[]): Promise<void> {
  let out = defaultGloveDir();
  let words = GLOVE_DEFAULT_WORDS;
  let weighting: GloveWeighting = 'sif';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[i + 1];
    if (a === '--out' && v !== undefined) out = resolve(v);
    else if (a === '--words' && v !== undefined && /^[1-9]\d*$/.test(v)) words = Number(v);
    else if (a === '--weighting' && (v === 'sif' || v === 'none')) weighting = v;
    else
      throw new UsageError(`unknown or incomplete argument ${JSON.stringify(a)}`, {
        hint: 'usage: build-glove-model.ts [--out <dir>] [--words <n>] [--weighting sif|none]',
      });
    i++;
  }
  await buildGloveModel(out, { words, weighting, log: (m) => process.stderr.write(`${m}\n`) });
  process.stdout.write(`${out}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    const e = err as HarnessError;
    process.stderr.write(`${e.message}${e.hint ? `\n${e.hint}` : ''}\n`);
    process.exitCode = e instanceof HarnessError ? e.exitCode : 1;
  });
}
