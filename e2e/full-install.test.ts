import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/testing/shared.js';
import { type Installed, installPackage, step } from './package.js';

/**
 * The full install: the packed package plus its optional dense peers, as the README's table says, running
 * the dense configs from the installed binary (local ONNX through transformers.js, USE-lite, a LanceDB index).
 */

let study: Installed;

beforeAll(async () => {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> };
  study = await installPackage(Object.entries(pkg.peerDependencies).map(([name, range]) => `${name}@${range}`));
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  // The GloVe substitute model folder that `npm run build-glove` makes in a clone, here in the study's cache:
  // a user brings their model folder the same way.
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-glove-model.ts', '--out', join(study.dir, '.cache', 'models', 'wink-glove-100d')], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}, 600_000);

afterAll(() => study?.remove());

describe('the packed package with its dense peers installed', { shuffle: false }, () => {
  it('installs without a warning', () => {
    expect(study.install.stderr).not.toMatch(/npm warn/i);
  });

  it('example-dense.yaml: GloVe through onnx-embed, USE-lite and their fusions reproduce the config`s expected values', async () => {
    const ran = await step(study, 'ablate example-dense --verify', ['ablate', '--config', 'configs/example-dense.yaml', '--verify']);
    expect(ran.stdout).toMatch(/use-lite/);
    expect(ran.stdout).not.toMatch(/FAIL/);
  });

  it('a LanceDB index over USE-lite runs and reports its recall against exact search', async () => {
    const config = readFileSync(join(study.dir, 'configs', 'example-dense.yaml'), 'utf8')
      .replace(/^name: example-dense$/m, 'name: example-lancedb')
      .replace(
        /^ {2}- id: use-lite\n {4}kind: use-lite\n/m,
        '  - id: use-lite\n    kind: use-lite\n    params: { index: lancedb, lancedb: { indexType: ivf-flat } }\n',
      )
      .replace(/^expect:[\s\S]*?(?=^output:)/m, '');
    expect(config).toContain('index: lancedb');
    writeFileSync(join(study.dir, 'configs', 'example-lancedb.yaml'), config);
    const ran = await step(study, 'ablate example-lancedb', ['ablate', '--config', 'configs/example-lancedb.yaml']);
    expect(ran.stdout).toMatch(/^gate: |use-lite/m);
    expect(ran.stderr).not.toMatch(/deprecat/i);
  });
});
