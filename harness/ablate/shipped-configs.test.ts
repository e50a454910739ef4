import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { renderAdr } from '../report/adr.js';
import type { ReportData } from '../decision/types.js';
import { PROJECT_ROOT, sharedMissing, sharedPath } from '../testing/shared.js';
import { compileReportTex, PDFLATEX, PDFLATEX_MISSING } from '../testing/pdflatex.js';
import { tempDir } from '../testing/temp.js';

/**
 * How each shipped config is checked. `run`: offline over the bundled example, every time. `shared`: offline
 * over ../shared data; the quick ones every time it is here, the slow ones (a minute or more each on two cores)
 * only with HARNESS_SHIPPED_ALL=1. `skip`: needs what a test may not use (a key, a model download, an LLM).
 */
type Check = { readonly run: true; readonly needs?: string } | { readonly shared: string; readonly slow?: true } | { readonly skip: string };

const CONFIGS: Readonly<Record<string, Check>> = {
  example: { run: true },
  'example-graph': { run: true },
  'rrf-vs-cc': { run: true },
  // Its MCP server is the example one, built into dist/ by `npm run build`.
  'own-system': { run: true, needs: 'dist/examples/mcp-memory-server.js' },
  'longmemeval-sample': { shared: 'data/longmemeval/longmemeval_sample.json' },
  locomo: { shared: 'data/locomo/locomo10.json', slow: true },
  'locomo-graph': { shared: 'data/locomo/locomo10.json', slow: true },
  'locomo-session': { shared: 'data/locomo/locomo10.json', slow: true },
  'recipes-locomo': { shared: 'data/locomo/locomo10.json', slow: true },
  'nfcorpus-bm25': { shared: 'data/nfcorpus/qrels/test.tsv', slow: true },
  'rrf-vs-cc-nfcorpus': { shared: 'data/nfcorpus/qrels/dev.tsv', slow: true },
  // Not "needs the GloVe folder": the dense tests link one into their temp cache and run these configs themselves.
  'example-dense': { skip: 'run with a GloVe model folder by arms/dense/example-dense.test.ts, which checks its numbers and report' },
  'nfcorpus-dense': { skip: 'run with a GloVe model folder by arms/dense/nfcorpus-dense.test.ts where ../shared has NFCorpus' },
  'example-hosted': { skip: 'needs VOYAGE_API_KEY and OPENAI_API_KEY (hosted embedding APIs)' },
  'example-judged': { skip: 'needs LLM judgments written by `harness judge` (an API key)' },
  'example-postgres': { skip: 'run with the GloVe model folder by arms/postgres/example-postgres.test.ts, which checks its warnings the same way' },
  'recipes-garbanzo-locomo': { shared: 'data/locomo/locomo10.json', slow: true },
  // Its systems are answers files a user downloads (published runs); harness/ablate/answer.test.ts runs the same shape on a fixture.
  'locomo-answers': { skip: 'needs two mem0-protocol evaluation files at answers/locomo/ (published runs the repository does not ship)' },
};

/** Warning codes whose cause is the config itself (its fusion weights, permutations, response mapping). */
const CONFIG_CAUSED = new Set(['input-unreachable', 'permutations-too-few', 'empty-results', 'unknown-ids']);

/** Why a config is not run here, or undefined when it is. */
function skipReason(check: Check): string | undefined {
  if ('skip' in check) return check.skip;
  if ('run' in check) return check.needs !== undefined && !existsSync(join(PROJECT_ROOT, check.needs)) ? `needs ${check.needs} (npm run build)` : undefined;
  if (!existsSync(sharedPath(check.shared))) return sharedMissing([check.shared]);
  if (check.slow === true && process.env['HARNESS_SHIPPED_ALL'] !== '1') return 'slow over ../shared data: set HARNESS_SHIPPED_ALL=1 to run it';
  return undefined;
}

/** Runs a shipped config as a user does, on a cold cache; its log lines and report. */
async function ablate(name: string): Promise<{ code: number; log: readonly string[]; data: ReportData; dir: string }> {
  const work = tempDir(`harness-shipped-${name}`);
  const log = memoryLogger();
  const code = await runCli(['ablate', '--config', `configs/${name}.yaml`, '--output', join(work, 'reports'), '--cache', join(work, 'cache')], {
    out: () => {},
    log,
    env: {},
    cwd: PROJECT_ROOT,
  });
  const [folder] = existsSync(join(work, 'reports')) ? readdirSync(join(work, 'reports')) : [];
  const data = folder === undefined ? ({} as ReportData) : (JSON.parse(readFileSync(join(work, 'reports', folder, 'report.json'), 'utf8')) as ReportData);
  return { code, log: log.lines, data, dir: folder === undefined ? '' : join(work, 'reports', folder) };
}

if (PDFLATEX === undefined) process.stderr.write(`[skip] the shipped configs' report.tex through pdflatex: ${PDFLATEX_MISSING}\n`);

describe('every shipped config that runs offline', () => {
  it('is classified here, so a new config cannot skip the check unnoticed', () => {
    const shipped = readdirSync(join(PROJECT_ROOT, 'configs'))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.slice(0, -'.yaml'.length));
    expect(Object.keys(CONFIGS).sort()).toEqual(shipped.sort());
  });

  for (const [name, check] of Object.entries(CONFIGS)) {
    const reason = skipReason(check);
    if (reason !== undefined) {
      process.stderr.write(`[skip] configs/${name}.yaml: ${reason}\n`);
      it.skip(`configs/${name}.yaml (${reason})`, () => {});
      continue;
    }
    it(`configs/${name}.yaml: no serious warning the config causes, and a quiet stderr`, async () => {
      const r = await ablate(name);
      expect(r.code, r.log.join('\n')).toBe(0);
      // A p near alpha depends on the draws and the data, not the config; so does a decision that flips without the
      // eval set's judgment holes (ADR 0040); every other serious item is the config's.
      const DATA_CAUSED = new Set(['p-near-alpha', 'decision-depends-on-holes']);
      expect(r.data.warnings.filter((w) => w.severity === 'serious' && !DATA_CAUSED.has(w.code))).toEqual([]);
      // Nor any warning a config causes at whatever severity: its weights, its permutations, its result mapping.
      expect(r.data.warnings.filter((w) => CONFIG_CAUSED.has(w.code))).toEqual([]);
      // What a plain stderr shows: the eval set line, the progress display (`label N/N` here), warnings; details
      // only under --verbose.
      const shown = r.log.filter((l) => !l.startsWith('detail: '));
      expect(shown.filter((l) => l.startsWith('warning:'))).toEqual([]);
      expect(shown.filter((l) => !/^eval set /.test(l) && !/ (\d+)\/\1$/.test(l))).toEqual([]);
      // Its report.tex is a document pdflatex compiles (issue 41), where pdflatex is installed.
      if (PDFLATEX !== undefined) expect(compileReportTex(r.dir)).toBe(true);
      if (name === 'rrf-vs-cc') {
        // The ADR drafted from it offers its 3 arms and 3 grid groups, not its 44 runs.
        const adr = renderAdr(r.data, { number: 31, title: 'Fuse lexical arms', date: '2026-01-02', reportLink: '.' });
        const options =
          adr
            .split('\n## Considered Options\n')[1]
            ?.split('\n## ')[0]
            ?.split('\n')
            .filter((l) => l.startsWith('- ')) ?? [];
        expect(options.map((l) => /^- (?:Grid )?`([^`]+)`/.exec(l)?.[1])).toEqual(['bm25', 'bm25-nostem', 'fts5', 'rrf', 'cc-tm2c2', 'cc-minmax']);
        expect(r.data.warnings.filter((w) => w.code === 'degenerate-grid-endpoint').map((w) => [w.subject, w.severity])).toEqual([
          ['cc-tm2c2', 'info'],
          ['cc-minmax', 'info'],
        ]);
      }
    }, 300_000);
  }
});
