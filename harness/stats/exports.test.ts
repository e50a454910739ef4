import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';

// The package's public subpaths resolve through package.json "exports" to the built files (`npm test` builds
// first), the way a user's `import { pairedTTest } from 'harness/stats'` does.
describe('package subpath exports', () => {
  const built = existsSync(join(PROJECT_ROOT, 'dist', 'harness', 'stats', 'index.js'));
  if (!built) process.stderr.write('[skip] package subpath exports: dist/ is not built (npm test builds it first)\n');
  it.skipIf(!built)('harness/stats, harness/metrics and harness/evalset import by name', () => {
    const script = `
      const s = await import('harness/stats');
      const m = await import('harness/metrics');
      const e = await import('harness/evalset');
      const t = s.pairedTTest([0.1, 0.2, 0.3], [0.2, 0.4, 0.5]);
      console.log(JSON.stringify({ stats: typeof s.randomizationTest, adjust: typeof s.adjustPValues, md: t.meanDiff,
        measure: m.formatMeasure(m.parseMeasure('nDCG@10')), load: typeof e.loadEvalSet }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: PROJECT_ROOT }).toString();
    const got = JSON.parse(out);
    expect(got).toEqual({ stats: 'function', adjust: 'function', md: expect.closeTo((0.1 + 0.2 + 0.2) / 3, 12), measure: 'nDCG@10', load: 'function' });
  });
});
