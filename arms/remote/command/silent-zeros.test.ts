import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../../harness/testing/cli.js';
import { PROJECT_ROOT } from '../../../harness/testing/shared.js';
import { tempDir } from '../../../harness/testing/temp.js';

// No silent zeros (issue 26) for a command arm, and for the Fusions over one: the fault is warned where it
// starts, and a Fusion is warned only when it is itself empty.

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');

/**
 * A program speaking the command protocol that keeps every document but answers searches wrongly: `prefixed`
 * returns each document under an id of its own ("doc:<id>"), `nothing` returns no results at all.
 */
const PROGRAM = `import { createInterface } from 'node:readline';
const mode = process.argv[2];
const scopes = new Map();
const reply = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  if (req.op === 'index') {
    scopes.set(req.scope, req.documents.map((d) => d.id));
    return reply({ id: req.id, ok: true });
  }
  const ids = mode === 'nothing' ? [] : (scopes.get(req.scope) ?? []).slice(0, req.topK);
  reply({ id: req.id, results: ids.map((d, i) => ({ docId: 'doc:' + d, score: 1 / (i + 1) })) });
});
`;

let dir: string;
beforeEach(() => {
  dir = tempDir('harness-command-zeros');
  writeFileSync(join(dir, 'program.mjs'), PROGRAM);
});

const arm = (id: string, mode: string) =>
  `  - { id: ${id}, kind: command, params: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(join(dir, 'program.mjs'))}, ${mode}], storeCheck: { sample: 0 } } }`;

function config(arms: readonly string[], systems: readonly string[]): string {
  const file = join(dir, 'c.yaml');
  writeFileSync(
    file,
    `name: cmd-zeros
evalset: { format: memory, path: ${JSON.stringify(EXAMPLE)} }
measures: [nDCG@10]
topK: 20
output: out
cache: cache
arms:
  - { id: overlap, kind: fake, params: { signal: 1 } }
${arms.join('\n')}
systems:
${systems.map((s) => `  - ${s}`).join('\n')}
compare: { permutations: 1000, resamples: 100 }
`,
  );
  return file;
}

interface Warning {
  readonly code: string;
  readonly severity: string;
  readonly subject: string;
  readonly message: string;
}

async function ablate(file: string) {
  const r = await runCaptured(['ablate', '--config', file], dir);
  expect(r.code).toBe(0);
  const folder = join(dir, 'out', readdirSync(join(dir, 'out'))[0] as string);
  const report = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as { warnings: Warning[] };
  const serious = report.warnings.filter((w) => w.severity === 'serious');
  return { ...r, serious, warned: r.log.filter((l) => l.startsWith('warning:')) };
}

describe('command arm: no silent zeros', () => {
  it('only unknown ids: a serious warning on each arm, none on the Fusions over them, which inherit the ids', async () => {
    const r = await ablate(
      config(
        [arm('cmd', 'prefixed'), arm('cmd2', 'prefixed')],
        ['{ id: both, kind: fuse, inputs: [overlap, cmd], params: { method: rrf } }', '{ id: pair, kind: fuse, inputs: [cmd, cmd2], params: { method: rrf } }'],
      ),
    );
    expect(r.serious.map((w) => [w.code, w.subject])).toEqual([
      ['unknown-ids', 'cmd'],
      ['unknown-ids', 'cmd2'],
    ]);
    expect(r.serious[0]?.message).toMatch(
      /^run cmd: (\d+) of \1 returned ids are not in the eval set's corpus \(its ids look like "[^"]+"\), so they score as not relevant: ids the eval set does not know; check the docId mapping \/ id template$/,
    );
    expect(r.warned).toHaveLength(2);
    expect(r.warned[0]).toMatch(/^warning: cmd: \d+ of \d+ returned ids are not in the eval set's corpus .*check the docId mapping \/ id template$/);
    expect(r.warned.join('\n')).not.toContain('doc:');
  });

  it('no results for any query: serious on the arm, and on a Fusion of two such arms, which names them as the cause', async () => {
    const r = await ablate(
      config(
        [arm('empty1', 'nothing'), arm('empty2', 'nothing')],
        [
          '{ id: empties, kind: fuse, inputs: [empty1, empty2], params: { method: rrf } }',
          '{ id: half, kind: fuse, inputs: [overlap, empty1], params: { method: rrf } }',
        ],
      ),
    );
    expect(r.serious.map((w) => [w.code, w.subject])).toEqual([
      ['empty-results', 'empty1'],
      ['empty-results', 'empty2'],
      ['empty-results', 'empties'],
    ]);
    expect(r.serious[0]?.message).toMatch(/^run empty1: its search returns nothing for most queries: no results for (\d+) of \1 queries/);
    expect(r.serious[0]?.message).toContain('check the response mapping, whether the store step stored anything, or the server search');
    expect(r.serious[2]?.message).toMatch(/; its inputs empty1, empty2 return nothing for most queries too \(see there\)$/);
    expect(r.warned.map((l) => l.split(':')[1])).toEqual([' empty1', ' empty2', ' empties']);
  });

  it('a healthy command arm gets no such warning', async () => {
    const file = config([arm('cmd', 'prefixed')], ['{ id: both, kind: fuse, inputs: [overlap, cmd], params: { method: rrf } }']);
    // The same program answering with the eval set's own ids.
    writeFileSync(join(dir, 'program.mjs'), PROGRAM.replace("'doc:' + d", 'd'));
    const r = await ablate(file);
    expect(r.serious).toEqual([]);
    expect(r.warned).toEqual([]);
  });
});
