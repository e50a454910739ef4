import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../../harness/testing/cli.js';
import { PROJECT_ROOT } from '../../../harness/testing/shared.js';
import { writeMemoryEvalSet, writeStudy } from '../../../harness/testing/study.js';
import { tempDir } from '../../../harness/testing/temp.js';

const corpus = [
  { id: 'm1', text: 'Alex adopted a beagle named Biscuit in March' },
  { id: 'm2', text: 'Alex is allergic to peanuts and carries an epipen' },
  { id: 'm3', text: 'Sam moved to Lisbon for a job at a design studio' },
];
// Its search is a substring match: q1 and q2 are words of a memory (hits, in JSON), q3 a question (no hits, in words).
const queries = [
  { id: 'q1', text: 'a beagle named Biscuit', stratum: 'exact', qrels: { m1: 2 } },
  { id: 'q2', text: 'allergic to peanuts', stratum: 'exact', qrels: { m2: 2 } },
  { id: 'q3', text: 'where does Sam work?', stratum: 'paraphrase', qrels: { m3: 2 } },
];
// mcp-memory-keeper from npm (a devDependency, exact version): a SQLite context store whose context_search
// answers hits in JSON (with includeMetadata) but an empty search in plain text, "No results found for: ...".
const KEEPER = join(PROJECT_ROOT, 'node_modules', 'mcp-memory-keeper', 'dist', 'index.js');

let dir: string;
beforeEach(() => {
  dir = tempDir('harness-memory-keeper');
  writeMemoryEvalSet(dir, corpus, queries);
});

function config(response: string): string {
  return writeStudy(
    dir,
    'k.yaml',
    'keeper',
    `arms:
  - id: keeper
    kind: mcp
    params:
      server: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(KEEPER)}], env: { DATA_DIR: ${JSON.stringify(join(dir, 'data'))} }, cwd: ${JSON.stringify(dir)} }
      store: { tool: context_save, arguments: { key: "{{document.id}}", value: "{{document.text}}" } }
      search: { tool: context_search, arguments: { query: "{{query.text}}", limit: "{{topK}}", searchIn: [value], includeMetadata: true } }
      response: { results: "$.items[*]", docId: "$.key"${response} }
compare: { permutations: 100, resamples: 100 }
`,
  );
}

const reportDir = () => join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);

describe('mcp-memory-keeper (JSON hits, plain-text "No results found")', () => {
  it('maps its plain-text empty replies to no hits and its JSON replies to hits: the run completes and is scored', async () => {
    const r = await runCaptured(['ablate', '--config', config('')], dir, { PATH: process.env['PATH'] ?? '' });
    expect(r.stderr).not.toMatch(/plain text, not JSON/);
    expect(r.code).toBe(0);
    const manifest = JSON.parse(readFileSync(join(reportDir(), 'manifest.json'), 'utf8')) as { systems: { indexStats: Record<string, number> }[] };
    // Each memory found by its own text (JSON replies): the store check passed.
    expect(manifest.systems[0]!.indexStats).toMatchObject({ documents: 3, storeCheckSampled: 3, storeCheckTop10: 3, storeCheckMissing: 0 });
    // The JSON replies became hits, the "No results found" reply an empty ranking.
    expect(readFileSync(join(reportDir(), 'runs', 'keeper.trec'), 'utf8')).toBe('q1 Q0 m1 1 1 keeper\nq2 Q0 m2 1 1 keeper\n');
    expect(r.out).toMatch(/^ {2}keeper\s+0\.6667/m);
  });
});
