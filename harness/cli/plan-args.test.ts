import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { PROJECT_ROOT } from '../testing/shared.js';

const JUDGED = join(PROJECT_ROOT, 'configs', 'example-judged.yaml');

describe('--jobs and --refresh of the commands that run a plan', () => {
  for (const command of ['ablate', 'judge']) {
    it(`${command}: a bad --jobs or an unknown --refresh id is a usage error naming the option (exit 2)`, async () => {
      const jobs = await runCaptured([command, '--config', JUDGED, '--jobs', '0'], PROJECT_ROOT);
      expect([jobs.code, jobs.stderr]).toEqual([2, expect.stringContaining('--jobs: expected a whole number from 1 or "auto", got "0"')]);
      const refresh = await runCaptured([command, '--config', JUDGED, '--refresh', 'bm25,nope'], PROJECT_ROOT);
      expect([refresh.code, refresh.stderr]).toEqual([2, expect.stringContaining('--refresh: "nope" is not a system of configs/example-judged.yaml')]);
    });
  }
});
