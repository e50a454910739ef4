import { join } from 'node:path';
import { type JudgmentRecord, type JudgmentsManifest, writeJudgments } from '../judge/store.js';
import { tempFolder } from './files.js';

/**
 * A temp folder holding `judgments/` as `harness judge` writes it (and `files`, e.g. the eval set), for the tests of
 * its readers (`harness kappa`, the human labels of an ablation). Those tests care about the records and the qrels
 * version (a kappa session must name it); the rest of the manifest only has to be valid, so it is written here
 * once: a local judge, counts derived from the records. `manifest` replaces top-level fields a test does care about.
 */
export async function tempJudgments(
  prefix: string,
  records: readonly JudgmentRecord[],
  qrelsVersion: string,
  opts: { readonly files?: Readonly<Record<string, string>>; readonly manifest?: Partial<JudgmentsManifest> } = {},
): Promise<string> {
  const dir = await tempFolder(prefix, opts.files ?? {});
  const n = records.length;
  const judged = records.filter((r) => r.status === 'judged').length;
  const parseFailures = records.filter((r) => r.status === 'parse-failure').length;
  const manifest: JudgmentsManifest = {
    judgmentsVersion: 1,
    qrelsVersion,
    judge: {
      model: 'judge-m',
      prompt: { name: 'umbrela-v1', sha256: '0'.repeat(64) },
      decoding: { temperature: 0, maxTokens: 64 },
      samples: 1,
      parseRetries: 2,
      baseURL: 'http://127.0.0.1/v1',
      local: true,
    },
    pool: { depth: 10, systems: ['a'], pairs: n, queries: new Set(records.map((r) => r.queryId)).size },
    evalset: { name: 'es', format: 'memory', path: '../es', fingerprint: 'x' },
    counts: { pooled: n, gold: 0, judged, parseFailures, skippedSensitive: 0, requests: n, cachedReplies: 0 },
    tokens: { prompt: 0, completion: 0 },
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:00.000Z',
    ...opts.manifest,
  };
  await writeJudgments(join(dir, 'judgments'), manifest, records);
  return dir;
}
