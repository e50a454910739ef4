import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../harness/testing/temp.js';
import { runIsolated } from './isolate.js';

function script(dir: string, name: string, body: string): URL {
  const path = join(dir, name);
  writeFileSync(path, body);
  return pathToFileURL(path);
}

async function run(file: URL): Promise<{ code: number; out: string }> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const code = await runIsolated(file, out);
  return { code, out: Buffer.concat(chunks).toString('utf8') };
}

describe('runIsolated', () => {
  it('runs each benchmark in a process of its own and copies its stdout', async () => {
    const dir = tempDir('bench-isolate');
    // A benchmark that finds state left by an earlier one in its process would print "shared".
    const file = script(dir, 'b.mjs', "console.log(globalThis.seen ? 'shared' : 'fresh ' + process.pid); globalThis.seen = true;\n");
    const first = await run(file);
    const second = await run(file);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^fresh \d+\n$/);
    expect(second.out).toMatch(/^fresh \d+\n$/);
    expect(second.out).not.toBe(first.out);
    expect(first.out).not.toContain(String(process.pid));
  });

  it('passes a failing benchmark exit code on, with what it printed before failing', async () => {
    const dir = tempDir('bench-isolate');
    const file = script(dir, 'fail.mjs', "process.stdout.write('goal 30.4 (x): 1.000x against y; goal <= 3x: MET\\n'); process.exit(3);\n");
    const { code, out } = await run(file);
    expect(code).toBe(3);
    expect(out).toBe('goal 30.4 (x): 1.000x against y; goal <= 3x: MET\n');
  });
});
