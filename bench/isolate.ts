import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs one benchmark file as its own Node process (its entry point calls its `main`), copying its stdout to
 * `out` and leaving its stderr on the terminal; resolves to its exit code (1 when a signal ended it).
 *
 * A fresh process per benchmark because in one shared process a benchmark measured after others ran at
 * other speeds: after the statistics benchmark, fusion's floor (a plain read of the runs) took 51 ms a
 * grid point instead of 29, and its goal ratio fell from 3.00x to 1.90x (docs/perf/fusion.md). A ratio must
 * not depend on which benchmarks ran before it.
 */
export function runIsolated(file: URL, out: NodeJS.WritableStream): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(file)], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk: Buffer) => out.write(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}
