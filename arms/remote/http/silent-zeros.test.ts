import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../../harness/testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../../../harness/testing/loopback.js';
import { writeMemoryEvalSet, writeStudy } from '../../../harness/testing/study.js';
import { tempDir } from '../../../harness/testing/temp.js';

// No silent zeros (issue 26): an http arm whose answers the eval set cannot score is a serious report
// warning and a stderr line naming the system and the likely cause, not a quiet 0.0000.

const corpus = [
  { id: 'm1', text: 'dog named Biscuit' },
  { id: 'm2', text: 'cat named Tom' },
  { id: 'm3', text: 'dog food brand' },
];
const queries = [
  { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 3 } },
  { id: 'q2', text: 'cat', stratum: 'exact', qrels: { m2: 2 } },
  { id: 'q3', text: 'food brand', stratum: 'exact', qrels: { m3: 2 } },
];

/** How the service answers a search: with the right ids, with ids under another template, or with nothing. */
type Mode = 'healthy' | 'prefixed' | 'nothing';

let dir: string;
let server: Loopback;
let mode: Mode;
beforeEach(async () => {
  dir = tempDir('harness-http-zeros');
  writeMemoryEvalSet(dir, corpus, queries);
  server = await startLoopback((req: LoopbackRequest) => {
    if (req.path === '/store') return { body: { ok: true } };
    const q = (req.json as { q: string }).q.toLowerCase().split(' ');
    const hit = corpus.filter((d) => q.some((w) => d.text.toLowerCase().includes(w)));
    if (mode === 'nothing') return { body: { hits: [] } };
    // A service that stores under its own ids ("mem_m1") and was never told the eval set's.
    return { body: { hits: hit.map((d, i) => ({ id: mode === 'prefixed' ? `mem_${d.id}` : d.id, score: 10 - i })) } };
  });
});
afterEach(async () => {
  await server.close();
});

function config(): string {
  return writeStudy(
    dir,
    'h.yaml',
    'http-zeros',
    `arms:
  - id: svc
    kind: http
    params:
      local: true
      timeoutMs: 2000
      search: { url: ${server.url}/search, body: { q: "{{query.text}}" } }
      response: { results: "$.hits[*]", docId: "$.id", score: "$.score" }
      index: { url: ${server.url}/store, body: { id: "{{document.id}}", text: "{{document.text}}" } }
      # The store check would stop this server before any score (its search never finds a stored memory);
      # here the report's own guard is under test.
      storeCheck: { sample: 0 }
compare: { permutations: 100, resamples: 100 }
`,
  );
}

interface Warning {
  readonly code: string;
  readonly severity: string;
  readonly subject: string;
  readonly message: string;
}

async function ablate(m: Mode) {
  mode = m;
  const r = await runCaptured(['ablate', '--config', config()], dir);
  expect(r.code).toBe(0);
  const folder = join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);
  const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as { warnings: Warning[] };
  return { ...r, warnings: report.warnings, md: readFileSync(join(folder, 'report.md'), 'utf8') };
}

describe('http arm: no silent zeros', () => {
  it('returning only ids the eval set does not know is a serious warning naming the system and the id mapping', async () => {
    const r = await ablate('prefixed');
    const serious = r.warnings.filter((w) => w.severity === 'serious');
    expect(serious.map((w) => [w.code, w.subject])).toEqual([['unknown-ids', 'svc']]);
    expect(serious[0]?.message).toBe(
      `run svc: 4 of 4 returned ids are not in the eval set's corpus (its ids look like "m1"), so they score as not relevant: ids the eval set does not know; check the docId mapping / id template`,
    );
    expect(r.log).toContain(
      `warning: svc: 4 of 4 returned ids are not in the eval set's corpus (its ids look like "m1"), so they score as not relevant: ids the eval set does not know; check the docId mapping / id template`,
    );
    // At the top of the rendered report, and the returned ids themselves are quoted nowhere.
    expect(r.md).toContain('check the docId mapping / id template');
    expect([r.md, ...r.log].join('\n')).not.toContain('mem_m');
    // A rerun served from the run cache is no quieter.
    const again = await ablate('prefixed');
    expect(again.out).toMatch(/system runs from cache: 1 hit\(s\), 0 computed/);
    expect(again.warnings.filter((w) => w.severity === 'serious').map((w) => w.code)).toEqual(['unknown-ids']);
    expect(again.log.some((l) => l.startsWith('warning: svc: 4 of 4 returned ids'))).toBe(true);
  });

  it('answering nothing for every query is a serious warning pointing at the mapping, the store step or the search', async () => {
    const r = await ablate('nothing');
    const serious = r.warnings.filter((w) => w.severity === 'serious');
    expect(serious.map((w) => [w.code, w.subject])).toEqual([['empty-results', 'svc']]);
    expect(serious[0]?.message).toMatch(/^run svc: its search returns nothing for most queries: no results for 3 of 3 queries/);
    expect(serious[0]?.message).toContain('check the response mapping, whether the store step stored anything, or the server search');
    expect(r.log.some((l) => l.startsWith('warning: svc: its search returns nothing for most queries'))).toBe(true);
  });

  it('a healthy service gets neither warning nor a stderr line', async () => {
    const healthy = await ablate('healthy');
    expect(healthy.warnings.filter((w) => w.severity === 'serious')).toEqual([]);
    expect(healthy.log.filter((l) => l.startsWith('warning:'))).toEqual([]);
  });
});
