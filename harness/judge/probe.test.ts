import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KeywordMemory } from '../../examples/keyword-memory.js';
import { loadConfiguredEvalSet } from '../ablate/scopes.js';
import { loadConfig } from '../config/load.js';
import { memoryLogger } from '../log.js';
import { type McpHttpServer, serveMemoryOverHttp } from '../testing/mcp-http.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';
import { ablationRuns } from './run.js';

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');

/** Files under `dir`, recursively: the run cache's entries. */
function entries(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? entries(p) : [p];
  });
}

describe("the judge's pool probes remote systems, as ablate does", () => {
  let server: McpHttpServer;
  let url = '';
  /** The version the MCP server announces in its handshake; the test upgrades it between two pools. */
  let version = '1.0.0';
  const memory = new KeywordMemory();
  beforeEach(async () => {
    server = await serveMemoryOverHttp(memory, { version: () => version });
    url = server.url;
  });
  afterEach(() => server.close());

  it('an upgraded server (a new handshake version) gets a new run-cache key, not the old run', async () => {
    const dir = tempDir('harness-judge-probe');
    const file = join(dir, 'j.yaml');
    writeFileSync(
      file,
      `name: probe
evalset: { format: memory, path: ${JSON.stringify(EXAMPLE)} }
measures: [nDCG@10]
topK: 10
output: out
cache: cache
arms:
  - { id: own, kind: mcp, params: { server: { url: ${JSON.stringify(url)} }, store: { tool: store }, local: true } }
  - { id: bm25, kind: bm25 }
`,
    );
    const cfg = loadConfig(file, { env: {}, cwd: dir });
    const log = memoryLogger();
    const es = await loadConfiguredEvalSet(cfg, log);
    const cacheDir = join(dir, 'cache', 'run');
    await ablationRuns(cfg, es, log, {});
    const first = entries(cacheDir).length;
    // The same server again: every run comes from the cache.
    await ablationRuns(cfg, es, log, {});
    expect(entries(cacheDir).length).toBe(first);
    version = '1.1.0';
    const { runs } = await ablationRuns(cfg, es, log, {});
    // One new entry: the MCP arm's run under its new identity; bm25's key does not change.
    expect(entries(cacheDir).length).toBe(first + 1);
    expect(runs.get('own')?.size).toBeGreaterThan(0);
  });
});
