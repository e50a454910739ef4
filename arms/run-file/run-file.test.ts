import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../harness/testing/cli.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';
import { tempDir } from '../../harness/testing/temp.js';

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');

let dir: string;
beforeEach(() => {
  dir = tempDir('harness-run-file');
});

function config(name: string, arm: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
evalset: { format: memory, path: ${EXAMPLE} }
measures: [nDCG@10]
topK: 10
output: out
cache: cache
arms:
  - ${arm}
compare: { permutations: 200, resamples: 200 }
`,
  );
  return file;
}

const reportFile = (name: string, file: string) => {
  const sub = readdirSync(join(dir, 'out')).find((d) => d.startsWith(`${name}-`)) as string;
  return readFileSync(join(dir, 'out', sub, file), 'utf8');
};
const systemOf = (name: string) =>
  (JSON.parse(reportFile(name, 'manifest.json')) as { systems: { fingerprintHash: string; indexStats: Record<string, number> }[] }).systems[0]!;

describe('run-file arm', () => {
  it('plays back a run from a file, counting unknown queries, unknown documents and missing queries', async () => {
    // A run made "elsewhere": the fake arm's run on the example, one query dropped, one unknown query and one
    // entry naming a document the corpus does not have added.
    expect((await runCaptured(['ablate', '--config', config('made', '{ id: made, kind: fake, params: { signal: 1 } }')], dir)).code).toBe(0);
    const made = reportFile('made', 'runs/made.trec').trim().split('\n');
    const kept = made.filter((l) => !l.startsWith('qe02 '));
    const extra = ['qzz-unknown Q0 m0001 1 3.5 elsewhere', 'qe01 Q0 no-such-memory 11 -1 elsewhere'];
    writeFileSync(join(dir, 'elsewhere.trec'), `${[...kept, ...extra].join('\n')}\n`);

    const r = await runCaptured(['ablate', '--config', config('played', '{ id: played, kind: run-file, params: { path: elsewhere.trec } }')], dir);
    expect(r.code).toBe(0);
    const stats = systemOf('played').indexStats;
    expect(stats).toEqual({ documents: 351, runQueries: 105, missingQueries: 1, unknownQueries: 1, unknownDocuments: 1 });
    expect(r.log.join('\n')).toMatch(/1 query id\(s\) of .*elsewhere\.trec are not in the eval set \(qzz-unknown\)/);
    expect(r.log.join('\n')).toMatch(/1 entry of .*elsewhere\.trec name a document outside the corpus \(no-such-memory\)/);
    expect(r.log.join('\n')).toMatch(/1 of 106 queries have no entry in .*elsewhere\.trec; they score 0/);
    // The played run is the file's run at topK 10: the kept lines (already the top 10 of each query) with the
    // unknown document ranked last for qe01, below every real score.
    const played = reportFile('played', 'runs/played.trec').trim().split('\n');
    const field = (l: string) => l.split(/\s+/).slice(0, 3).join(' ');
    expect(played.map(field)).toEqual(kept.map(field));

    // The same run gzipped is the same system: one fingerprint, served from the cache.
    writeFileSync(join(dir, 'elsewhere.trec.gz'), gzipSync(readFileSync(join(dir, 'elsewhere.trec'))));
    const gz = await runCaptured(['ablate', '--config', config('played2', '{ id: played, kind: run-file, params: { path: elsewhere.trec.gz } }')], dir);
    expect(gz.code).toBe(0);
    expect(gz.out).toMatch(/system runs from cache: 1 hit\(s\), 0 computed/);
    expect(systemOf('played2').fingerprintHash).toBe(systemOf('played').fingerprintHash);
  });

  it('a missing run file is a config problem (exit 2) naming the arm and the resolved path', async () => {
    const r = await runCaptured(['ablate', '--config', config('gone', '{ id: gone, kind: run-file, params: { path: nowhere.trec } }')], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`arms[0].params: run file ${join(dir, 'nowhere.trec')} cannot be read (ENOENT); point path at a TREC run file`);
  });

  it('a run file past its size limit is refused at load (exit 2) naming the arm, the file and the limit', async () => {
    // The limit is lowered to keep the file small; the default (LIMITS.runFileBytes, 512 MiB) works the same way.
    const lines = Array.from({ length: 20 }, (_, i) => `qe01 Q0 m${String(i).padStart(4, '0')} ${i + 1} ${20 - i} big`);
    writeFileSync(join(dir, 'big.trec'), `${lines.join('\n')}\n`);
    const bytes = readFileSync(join(dir, 'big.trec')).length;
    const r = await runCaptured(['ablate', '--config', config('big', '{ id: big, kind: run-file, params: { path: big.trec, maxBytes: 100 } }')], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `arms[0].params: run file ${join(dir, 'big.trec')} is ${bytes.toLocaleString('en-US')} bytes, past the limit of 100 bytes of run text (params.maxBytes)`,
    );
    expect(r.stderr).toContain('or raise maxBytes together with node --max-old-space-size (docs/limits.md)');
    // Compressed below the limit, decompressed above it: the text counts, so a .gz is no way around it.
    writeFileSync(join(dir, 'big.trec.gz'), gzipSync(readFileSync(join(dir, 'big.trec'))));
    expect(readFileSync(join(dir, 'big.trec.gz')).length).toBeLessThan(bytes);
    const max = readFileSync(join(dir, 'big.trec.gz')).length + 1;
    const gz = await runCaptured(['ablate', '--config', config('bigz', `{ id: big, kind: run-file, params: { path: big.trec.gz, maxBytes: ${max} } }`)], dir);
    expect(gz.code).toBe(2);
    expect(gz.stderr).toContain(`run file ${join(dir, 'big.trec.gz')} is more than the limit of ${max.toLocaleString('en-US')} bytes of run text`);
    // At the limit it runs.
    const at = await runCaptured(['ablate', '--config', config('at', `{ id: big, kind: run-file, params: { path: big.trec, maxBytes: ${bytes} } }`)], dir);
    expect(at.stderr).not.toContain('past the limit');
    expect(at.code).toBe(0);
  });
});
