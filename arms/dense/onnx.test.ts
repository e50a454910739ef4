import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFolderAtomic } from '../../harness/cache/index.js';
import { memoryLogger } from '../../harness/log.js';
import { type Loopback, startLoopback } from '../../harness/testing/loopback.js';
import { gloveFolder } from './glove-model.js';
import { folderRevision, loadOnnxEmbedder, onnxEmbedArm } from './onnx.js';
import { tempDir } from '../../harness/testing/temp.js';

// A four-word GloVe-style folder built by the real builder (hand-written ONNX Gather + WordPiece tokenizer),
// run through the real transformers.js + onnxruntime-node path: every expected vector is arithmetic on the
// table below. Words are listed by frequency, so `the` is rank 1.
const V = { the: [1, 0, 0, 0], cat: [0, 2, 0, 0], dog: [0, 0, 4, 0], sat: [0, 0, 0, 8] } as const;
const tiny = { dimensions: 4, words: Object.keys(V), vectors: V as Record<string, readonly number[]> };
const models = tempDir('harness-models');
const log = memoryLogger();
const load = (p: Record<string, unknown>, env: NodeJS.ProcessEnv = {}, modelDir = models) =>
  loadOnnxEmbedder(onnxEmbedArm.params.parse({ model: 'tiny', pooling: 'mean', normalize: false, queryPrefix: '', ...p }), { modelDir, env, log });
const rows = (v: Float32Array) => Array.from({ length: v.length / 4 }, (_, i) => Array.from(v.subarray(i * 4, i * 4 + 4)));

beforeAll(async () => {
  await writeFolderAtomic(join(models, 'tiny'), gloveFolder(tiny, 10, 'test', 'none'));
});

describe('onnx-embed on a built word-vector folder', () => {
  it('mean-pools word vectors over the attention mask; unknown words are [UNK] rows of zeros', async () => {
    const e = await load({});
    expect(e.dims).toBe(4);
    const v = await e.embed(['Cat, DOG!', 'the zebra', 'sat'], 'document');
    // "Cat, DOG!" -> cat , dog ! : punctuation is split off and unknown (zero), so 4 tokens share the mean.
    expect(rows(v)).toEqual([
      [0, 2 / 4, 4 / 4, 0],
      [1 / 2, 0, 0, 0],
      [0, 0, 0, 8],
    ]);
    await e.close?.();
  });

  it('applies the role prefix, CLS pooling, normalisation and max length as configured', async () => {
    const cls = await load({ pooling: 'cls', queryPrefix: 'sat ' });
    expect(rows(await cls.embed(['dog cat'], 'query'))).toEqual([[0, 0, 0, 8]]);
    expect(rows(await cls.embed(['dog cat'], 'document'))).toEqual([[0, 0, 4, 0]]);
    const norm = await load({ normalize: true, maxLength: 2 });
    // "cat dog sat" truncated to two tokens: (0, 2, 4, 0) / 2, then unit length: / sqrt(1 + 4).
    const [r] = rows(await norm.embed(['cat dog sat'], 'document'));
    expect(r![1]).toBeCloseTo(1 / Math.sqrt(5), 6);
    expect(r![2]).toBeCloseTo(2 / Math.sqrt(5), 6);
    expect(norm.identity).toMatchObject({ provider: 'onnx', model: 'tiny', pooling: 'mean', normalize: true, extra: { dtype: 'fp32', maxLength: 2 } });
    expect(norm.identity.revision).toBe(folderRevision(join(models, 'tiny'), 'fp32'));
  });

  it('refuses a local folder whose content differs from the pinned revision (exit 2)', async () => {
    const pinned = `sha256:${'0'.repeat(64)}`;
    await expect(load({ revision: pinned })).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining(`pins revision ${pinned}`) });
  });

  it('names the folder and the host when the model is neither local nor downloadable', async () => {
    await expect(load({ model: 'nobody/absent' }, { HF_HUB_OFFLINE: '1' })).rejects.toThrow(/cannot load model nobody\/absent/);
  });
});

describe('onnx-embed hub download (transformers.js against a loopback hub)', () => {
  let hub: Loopback;
  beforeAll(async () => {
    const files = gloveFolder(tiny, 10, 'test', 'none');
    hub = await startLoopback((req) => {
      const m = /^\/test-org\/tiny\/resolve\/main\/(.+)$/.exec(req.path);
      const body = m === null ? undefined : files.get(decodeURIComponent(m[1]!));
      if (body === undefined) return { status: 404, body: 'not found' };
      const buf = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
      return { headers: { 'content-type': 'application/octet-stream', 'content-length': String(buf.byteLength) }, body: buf };
    });
  });
  afterAll(async () => hub.close());

  it('downloads the files into <modelDir>/hub with progress on the logger, then embeds', async () => {
    const dir = tempDir('harness-hub');
    const e = await load({ model: 'test-org/tiny' }, { HF_ENDPOINT: hub.url }, dir);
    expect(rows(await e.embed(['cat'], 'document'))).toEqual([[0, 2, 0, 0]]);
    expect(e.identity.revision).toBe('main');
    const got = hub.requests.filter((r) => r.method === 'GET').map((r) => r.path);
    expect(got).toContain('/test-org/tiny/resolve/main/onnx/model.onnx');
    expect(got).toContain('/test-org/tiny/resolve/main/tokenizer.json');
    expect(log.lines.some((l) => l.startsWith('downloading test-org/tiny/onnx/model.onnx'))).toBe(true);
    // The library's file cache holds the download: the same bytes the hub served.
    const { readdirSync } = await import('node:fs');
    const cached = readdirSync(join(dir, 'hub'), { recursive: true }).map(String);
    const onnx = cached.find((f) => f.endsWith('model.onnx'));
    expect(onnx).toBeDefined();
    expect(readFileSync(join(dir, 'hub', onnx!)).equals(Buffer.from(gloveFolder(tiny, 10, 'test', 'none').get('onnx/model.onnx') as Uint8Array))).toBe(true);
  });
});
