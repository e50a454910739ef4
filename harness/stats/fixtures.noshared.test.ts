import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

// A fresh clone has no ../shared: the reference-data suite must then skip with its reason, not fail while
// vitest collects it (it used to read its fixture at collection time).
it('fixtures.test.ts skips with a printed reason when ../shared is absent', () => {
  // A folder that does not exist, as in a fresh clone (an empty one would be "../shared has no ...").
  const absent = join(tempDir('harness-noshared'), 'shared');
  const r = spawnSync(process.execPath, [join(PROJECT_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'harness/stats/fixtures.test.ts'], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, HARNESS_SHARED_DIR: absent, CI: '1' },
    encoding: 'utf8',
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  expect(r.stderr).toContain(
    `[skip] stats vs scipy: paired tests: ../shared is not here (${absent} does not exist; it would hold fixtures/stats/paired-tests.json)`,
  );
}, 60_000);
