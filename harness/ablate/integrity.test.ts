import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withoutTimings } from '../testing/timings.js';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

// Fault tests that drive the built CLI (`npm test` builds first), so they hold whatever shape the runner takes.
const BIN = join(PROJECT_ROOT, 'dist', 'harness', 'cli', 'bin.js');
const built = existsSync(BIN);
if (!built) process.stderr.write('[skip] integrity fault tests: dist/ is not built (run `npm run build`; `npm test` builds it first)\n');
const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');

function harness(cwd: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, maxBuffer: 64 << 20 }, (error, out, err) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, out, err });
    });
  });
}

/** A work folder holding a copy of the bundled example and the example config pointed at it. */
function workspace(): string {
  const w = tempDir('harness-integrity');
  cpSync(EXAMPLE, join(w, 'es'), { recursive: true });
  const config = readFileSync(join(PROJECT_ROOT, 'configs', 'example.yaml'), 'utf8')
    .replace('path: ../evalset/examples/alex-memory', 'path: es')
    .replace('output: ../reports', 'output: out')
    .replace('cache: ../.cache', 'cache: cache');
  writeFileSync(join(w, 'c.yaml'), config);
  return w;
}

function walk(d: string): string[] {
  return readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)).map((g) => `${f}/${g}`) : [f]));
}

/**
 * Every file of a report folder, byte for byte, except what legitimately differs between two runs of the same
 * inputs: timings and cache counts (a served run and a computed one differ only there).
 */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of walk(dir).sort()) files.set(f, withoutTimings(f, readFileSync(join(dir, f), 'utf8')));
  return files;
}

const reportOf = (w: string) => {
  const dirs = readdirSync(join(w, 'out')).filter((d) => !d.startsWith('.'));
  expect(dirs).toHaveLength(1);
  return join(w, 'out', dirs[0]!);
};

describe.skipIf(!built)('integrity under faults (built CLI)', () => {
  it('a cached run edited by hand (valid JSON, ids swapped) or replaced by {} is detected, evicted and recomputed; the report equals a clean run', async () => {
    const w = workspace();
    const clean = await harness(w, ['ablate', '--config', 'c.yaml']);
    expect(clean.code, clean.err).toBe(0);
    const cleanFiles = snapshot(reportOf(w));

    const entries = walk(join(w, 'cache', 'run'))
      .filter((f) => !f.endsWith('.tmp'))
      .sort();
    expect(entries).toHaveLength(4);
    // Entry 1: swap the first two documents of the first query (corpus positions in the entry's typed `docs`);
    // the JSON stays valid and the length unchanged.
    const swappedPath = join(w, 'cache', 'run', entries[0]!);
    const raw = readFileSync(swappedPath, 'utf8');
    const nl = raw.indexOf('\n');
    const payload = JSON.parse(raw.slice(nl + 1)) as { docs: string };
    const docs = new Uint32Array(new Uint8Array(Buffer.from(payload.docs, 'base64')).buffer);
    expect(docs[0]).not.toBe(docs[1]);
    [docs[0], docs[1]] = [docs[1]!, docs[0]!];
    payload.docs = Buffer.from(docs.buffer).toString('base64');
    writeFileSync(swappedPath, raw.slice(0, nl + 1) + JSON.stringify(payload));
    // Entry 2: replaced by `{}`.
    writeFileSync(join(w, 'cache', 'run', entries[1]!), '{}');

    const rerun = await harness(w, ['ablate', '--config', 'c.yaml']);
    expect(rerun.code, rerun.err).toBe(0);
    const key = (e: string) => e.split('/').pop();
    expect(rerun.err).toContain(`warning: cache run/${key(entries[0]!)}: payload checksum mismatch (edited or corrupted); evicted, recomputing`);
    expect(rerun.err).toContain(`warning: cache run/${key(entries[1]!)}: no entry header`);
    expect(rerun.out).toContain('system runs from cache: 2 hit(s), 2 computed');
    expect(snapshot(reportOf(w))).toEqual(cleanFiles);
    const manifest = JSON.parse(readFileSync(join(reportOf(w), 'manifest.json'), 'utf8'));
    expect(manifest.cache.run).toEqual({ hits: 2, misses: 2, evicted: 2 });
  }, 120_000);

  it('kill -9 during the report writes of a rerun leaves the old folder or the new one, complete', async () => {
    const w = workspace();
    const queries = readFileSync(join(w, 'es', 'queries.jsonl'), 'utf8');
    // The "new" eval set: the same store with the last 30 queries removed, so every report file differs.
    const lines = queries.trimEnd().split('\n');
    const variants = [queries, `${lines.slice(0, lines.length - 30).join('\n')}\n`];
    const states: Map<string, string>[] = [];
    for (const v of variants) {
      writeFileSync(join(w, 'es', 'queries.jsonl'), v);
      const r = await harness(w, ['ablate', '--config', 'c.yaml']);
      expect(r.code, r.err).toBe(0);
      states.push(snapshot(reportOf(w)));
    }
    expect(states[0]!.get('report.json')).not.toBe(states[1]!.get('report.json'));
    const dir = reportOf(w);
    const out = join(w, 'out');
    const tempsOf = () => readdirSync(out).filter((d) => d.startsWith('.'));

    let current = 1;
    let interrupted = 0;
    for (const delayMs of [0, 0, 2, 5, 10, 30]) {
      const next = 1 - current;
      writeFileSync(join(w, 'es', 'queries.jsonl'), variants[next]!);
      const before = statSync(dir).ino;
      const child = spawn(process.execPath, [BIN, 'ablate', '--config', 'c.yaml'], { cwd: w, stdio: 'ignore' });
      const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
      // Wait (synchronously, to react within microseconds) for the writer's temp folder, then kill it. The spin
      // also ends if the swap already happened (a new folder inode): the event loop, and so child.exitCode, is
      // frozen meanwhile.
      const swapped = () => statSync(dir, { throwIfNoEntry: false })?.ino !== before;
      const deadline = Date.now() + 30_000;
      while (tempsOf().length === 0 && !swapped() && Date.now() < deadline) {
        /* spin */
      }
      const until = performance.now() + delayMs;
      while (performance.now() < until) {
        /* spin */
      }
      child.kill('SIGKILL');
      await exited;
      if (tempsOf().length > 0) interrupted++;
      // `harness report` is a reader: it recovers an interrupted swap, then must find a whole folder.
      const r = await harness(w, ['report', dir]);
      expect(r.code, r.err).toBe(0);
      expect(tempsOf()).toEqual([]);
      const got = snapshot(dir);
      const which = states.findIndex((s) => JSON.stringify([...s]) === JSON.stringify([...got]));
      expect(which, `after a kill ${delayMs} ms into the write the folder is neither the old nor the new one`).toBeGreaterThanOrEqual(0);
      current = which;
    }
    // The kills did land inside the writes (a temp or old sibling was left behind at least once).
    expect(interrupted).toBeGreaterThan(0);
  }, 300_000);

  it('no text of a sensitive memory appears in any output of a failing run, nor in the files of a good one', async () => {
    const w = workspace();
    const corpusFile = join(w, 'es', 'corpus.jsonl');
    const original = readFileSync(corpusFile, 'utf8');
    const memories = original
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; text: string; sensitive: boolean });
    const secrets = memories.filter((m) => m.sensitive).map((m) => m.text);
    expect(secrets).toHaveLength(10);
    // Every 16-character window of every sensitive text, so a quoted snippet is caught, not just the whole text;
    // except windows that public text also holds (" is allergic to " is in a non-sensitive memory too), since
    // finding those proves nothing.
    const queries = readFileSync(join(w, 'es', 'queries.jsonl'), 'utf8');
    const publicText = [...memories.filter((m) => !m.sensitive).map((m) => m.text), queries].join('\n');
    const windows = secrets
      .flatMap((t) => Array.from({ length: Math.max(1, t.length - 15) }, (_, i) => t.slice(i, i + 16)))
      .filter((win) => !publicText.includes(win));
    expect(windows.length).toBeGreaterThan(300);
    const leaks = (text: string) => windows.filter((win) => text.includes(win));

    // Three sensitive memories broken three ways: text not a string, a JSON syntax error, a bad date.
    const sensitiveLines = original.split('\n').flatMap((l, i) => (l.includes('"sensitive":true') ? [i] : []));
    const lines = original.split('\n');
    const [a, b, c] = sensitiveLines as [number, number, number];
    const ma = JSON.parse(lines[a]!);
    lines[a] = JSON.stringify({ ...ma, text: { note: ma.text } });
    lines[b] = lines[b]!.replace('","date"', '" "date"');
    const mc = JSON.parse(lines[c]!);
    lines[c] = JSON.stringify({ ...mc, date: mc.text, importance: mc.text });
    writeFileSync(corpusFile, lines.join('\n'));
    const outputs: string[] = [];
    for (const args of [
      ['ablate', '--config', 'c.yaml'],
      ['ablate', '--config', 'c.yaml', '--verify'],
      ['ablate', '--config', 'c.yaml', '--dry-run'],
      ['evalset', 'inspect', '--format', 'memory', '--path', 'es'],
    ]) {
      const r = await harness(w, args);
      expect(r.code, args.join(' ')).toBe(2);
      // Four problems on three lines; the queries judging the memory whose line is not JSON are not blamed.
      expect(r.err).toContain('4 problems in the input');
      outputs.push(r.out, r.err);
    }
    expect(outputs.join('\n')).toContain(
      `corpus.jsonl:${a + 1}: memory "${ma.id}": field "text" must be a string, got an object (value not shown: sensitive memory)`,
    );
    expect(leaks(outputs.join('\n'))).toEqual([]);
    expect(existsSync(join(w, 'out'))).toBe(false);

    // A good run: stdout, stderr, the report folder and the cache hold none of the texts either.
    writeFileSync(corpusFile, original);
    const good = await harness(w, ['ablate', '--config', 'c.yaml']);
    expect(good.code, good.err).toBe(0);
    const written = [join(w, 'out'), join(w, 'cache')].flatMap((d) => walk(d).map((f) => readFileSync(join(d, f), 'latin1')));
    expect(leaks([good.out, good.err, ...written].join('\n'))).toEqual([]);
  }, 120_000);
});
