import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../errors.js';
import { fixtureInput } from './testdata/fixture.js';
import { readReport, rerenderReport, writeReport } from './write.js';
import { tempDir } from '../testing/temp.js';

const tmp = () => tempDir('harness-write');

describe('report folders are written whole', () => {
  it('replaces every file of an earlier report, extra files included, leaving no temp sibling', async () => {
    const root = tmp();
    const dir = join(root, 'r');
    await writeReport(
      dir,
      fixtureInput(),
      new Map([
        ['runs/a.trec', 'old run\n'],
        ['manifest.json', '{}\n'],
      ]),
    );
    await writeReport(dir, fixtureInput(), new Map([['runs/b.trec', 'new run\n']]));
    expect(readdirSync(dir).sort()).toEqual([
      'comparisons.csv',
      'per-query.csv',
      'report.html',
      'report.json',
      'report.md',
      'report.tex',
      'runs',
      'summary.csv',
    ]);
    expect(readdirSync(join(dir, 'runs'))).toEqual(['b.trec']);
    expect(readdirSync(root)).toEqual(['r']);
  });

  it('refuses to replace a folder holding files a report never has', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    await expect(writeReport(dir, fixtureInput())).rejects.toThrow(UsageError);
    await expect(writeReport(dir, fixtureInput())).rejects.toThrow(/holds files that are not part of a report \(notes\.txt\)/);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('harness report keeps the runs and manifest it did not render', async () => {
    const dir = join(tmp(), 'r');
    await writeReport(
      dir,
      fixtureInput(),
      new Map([
        ['runs/a.trec', 'run\n'],
        ['manifest.json', '{}\n'],
      ]),
    );
    await rerenderReport(dir);
    expect(readFileSync(join(dir, 'runs', 'a.trec'), 'utf8')).toBe('run\n');
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toBe('{}\n');
  });

  it('readReport renames back the folder a writer killed between its two renames left aside', async () => {
    const root = tmp();
    const dir = join(root, 'r');
    await writeReport(dir, fixtureInput());
    const pid = spawnSync(process.execPath, ['-e', '']).pid!;
    renameSync(dir, join(root, `.r.${pid}.0123abcd.old`));
    mkdirSync(join(root, `.r.${pid}.4567abcd.tmp`));
    expect((await readReport(dir)).name).toBe(fixtureInput().name);
    expect(readdirSync(root)).toEqual(['r']);
  });

  it('readReport refuses a folder whose report.json and manifest.json come from different runs', async () => {
    const dir = join(tmp(), 'r');
    const { data } = await writeReport(dir, fixtureInput());
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ evalset: { fingerprint: 'f'.repeat(64) } }));
    await expect(readReport(dir)).rejects.toThrow(InputError);
    await expect(readReport(dir)).rejects.toThrow(
      `report.json and manifest.json come from different runs (eval-set fingerprint ffffffffffff in the manifest, ${data.evalset.fingerprint.slice(0, 12)} in report.json): the folder is incomplete`,
    );
    writeFileSync(join(dir, 'manifest.json'), '{"evalset": ');
    await expect(readReport(dir)).rejects.toThrow('manifest.json: not valid JSON: the report folder is incomplete');
  });
});
