import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest globalSetup (vitest.config.ts): the whole run gets a private temp folder, and fails if a test leaves
 * anything in it.
 *
 * Setup runs in the main vitest process before any test worker starts, and sets TMPDIR (with TMP and TEMP) to a
 * fresh `harness-vitest-XXXXXX` folder. The forks pool builds each worker's environment from process.env when it
 * starts the worker, so os.tmpdir() in every test, in the code under test, in native modules (LanceDB, ONNX
 * Runtime) and in the processes tests spawn names that folder, whatever folder the test file is in.
 *
 * Teardown runs after every test file has finished. Whatever is left in the folder was created by a test, or by
 * the code it tested, and not removed: teardown names each leftover, removes the folder so nothing leaks into the
 * real temp dir, and fails the run. Vitest only logs an error thrown by a global teardown ("error during close")
 * and keeps exit code 0, so teardown also sets process.exitCode = 1, which `vitest run` exits with.
 *
 * Tests get temp folders from harness/testing/temp.ts (tempDir, tempFolder, isolateTmpdir), which remove them.
 */

const TEMP_VARS = ['TMPDIR', 'TMP', 'TEMP'] as const;
/** At most this many leftovers are named, each with at most this many of the paths inside it. */
const MAX_NAMED = 40;
const MAX_INSIDE = 3;

export default function setup(): () => void {
  const saved = TEMP_VARS.map((name) => [name, process.env[name]] as const);
  const root = mkdtempSync(join(tmpdir(), 'harness-vitest-'));
  for (const name of TEMP_VARS) process.env[name] = root;
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    let left: { count: number; lines: string[] };
    try {
      left = describeLeftovers(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    if (left.count === 0) return;
    process.exitCode = 1;
    const error = new Error(
      `tests left ${left.count} path(s) in the run's temp folder ${root} (now removed); ` +
        `give each test a folder from harness/testing/temp.ts (tempDir, tempFolder, isolateTmpdir) so it is removed:\n  ${left.lines.join('\n  ')}`,
    );
    error.stack = error.message; // vitest prints the stack: vitest's own frames say nothing here
    throw error;
  };
}

/** Each entry left in `root`, as its path; for a folder, with the number of paths inside and the first few. */
function describeLeftovers(root: string): { count: number; lines: string[] } {
  const entries = readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  const lines = entries.slice(0, MAX_NAMED).map((e) => {
    const path = join(root, e.name);
    if (!e.isDirectory()) return path;
    const inside = readdirSync(path, { recursive: true, encoding: 'utf8' }).sort();
    if (inside.length === 0) return `${path}/ (empty)`;
    const shown = inside.slice(0, MAX_INSIDE).join(', ');
    return `${path}/ (${inside.length} inside: ${shown}${inside.length > MAX_INSIDE ? ', ...' : ''})`;
  });
  if (entries.length > MAX_NAMED) lines.push(`... and ${entries.length - MAX_NAMED} more`);
  return { count: entries.length, lines };
}
