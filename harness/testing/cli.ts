import { vi } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';

/** What a CLI run said: its exit code, stdout, stderr written directly, and the logger's lines. */
export interface Captured {
  readonly code: number;
  readonly out: string;
  readonly stderr: string;
  readonly log: readonly string[];
}

/** Runs the CLI in `cwd` as a test sees it, capturing stdout, stderr and the logger. */
export async function runCaptured(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Captured> {
  let out = '';
  let stderr = '';
  const log = memoryLogger();
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    stderr += String(s);
    return true;
  });
  try {
    const code = await runCli(args, { out: (t) => void (out += t), log, env, cwd });
    return { code, out, stderr, log: log.lines };
  } finally {
    spy.mockRestore();
  }
}
