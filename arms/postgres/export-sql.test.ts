import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fuseParamsSchema } from '../../harness/fusion/index.js';
import { runCaptured } from '../../harness/testing/cli.js';
import { tempDir } from '../../harness/testing/temp.js';
import { postgresArm } from './index.js';

// `harness export-sql` on a report.json a user may have edited by hand: what it prints is run as SQL, so nothing
// from the report may leave the comment line it is printed in, and a broken file is named, never a crash.
const VECTOR = { embed: { kind: 'hash-embed', params: { dims: 64 } } };
const fts = { id: 'pg-fts', kind: 'postgres', node: 'retrieve', params: postgresArm.params.parse({ ranking: 'fts' }) };
const vec = { id: 'pg-exact', kind: 'postgres', node: 'retrieve', params: postgresArm.params.parse({ ranking: 'vector', vector: VECTOR }) };
const fusion = (id: string) => ({ id, kind: 'rrf', node: 'fuse', inputs: ['pg-fts', 'pg-exact'], params: fuseParamsSchema.parse({ method: 'rrf' }) });

function report(content: string): string {
  const dir = tempDir('harness-export-sql');
  mkdirSync(join(dir, 'r'));
  writeFileSync(join(dir, 'r', 'report.json'), content);
  return join(dir, 'r');
}

const exportSql = (dir: string, system: string) => runCaptured(['export-sql', '--report', dir, '--system', system], dir);

describe('harness export-sql on a hand-edited report', () => {
  it('prints a fusion whose id is one line as one comment line', async () => {
    const r = await exportSql(report(JSON.stringify({ runs: [fts, vec, fusion('rrf.a+b')] })), 'rrf.a+b');
    expect(r.code, r.stderr).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^-- rrf\.a\+b: \{"method":"rrf"/);
  });

  it('refuses a system id with a line break (it would end the comment and run), exit 2 naming the field, printing nothing', async () => {
    const evil = 'rrf\nDROP TABLE docs;';
    const tuned = { id: 'rrf.tuned', kind: 'tuned', node: 'tune', tuning: { choices: [{ member: evil }] } };
    const dir = report(JSON.stringify({ runs: [fts, vec, fusion(evil), tuned] }));
    for (const system of [evil, 'rrf.tuned']) {
      const r = await exportSql(dir, system);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.stderr).toContain('report.json runs[2].id: the system id "rrf\\nDROP TABLE docs;" holds a line break or another control character');
    }
  });

  it('a report.json that is not JSON, or has no runs, is named with exit 2, never an unexpected failure', async () => {
    for (const [content, says] of [
      ['{"runs": [', 'is not JSON'],
      ['{"systems": []}', 'no runs array'],
      ['null', 'no runs array'],
    ]) {
      const dir = report(content as string);
      const r = await exportSql(dir, 'x');
      expect(r.code, content).toBe(2);
      expect(r.stderr).toContain(`${join(dir, 'report.json')}${says === 'is not JSON' ? ' is not JSON' : ': no runs array'}`);
      expect(r.stderr).not.toContain('unexpected failure');
    }
  });
});
