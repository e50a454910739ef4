import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCaptured } from '../../../harness/testing/cli.js';
import { PROJECT_ROOT } from '../../../harness/testing/shared.js';
import { tempDir } from '../../../harness/testing/temp.js';

const EXAMPLE = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
const FIXTURE = join(PROJECT_ROOT, 'arms', 'remote', 'command', 'fixtures', 'overlap-retriever.mjs');

let dir: string;
beforeEach(() => {
  dir = tempDir('harness-command');
});

function config(commandParams: string): string {
  const file = join(dir, 'c.yaml');
  writeFileSync(
    file,
    `name: cmd
evalset: { format: memory, path: ${EXAMPLE} }
measures: [nDCG@10]
topK: 20
output: out
cache: cache
arms:
  - { id: overlap, kind: fake, params: { signal: 1 } }
  - { id: cmd, kind: command, params: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(FIXTURE)}]${commandParams} } }
compare: { permutations: 200, resamples: 200 }
`,
  );
  return file;
}

const runFile = (id: string) => {
  const [sub] = readdirSync(join(dir, 'out'));
  return readFileSync(join(dir, 'out', sub as string, 'runs', `${id}.trec`), 'utf8');
};

describe('command arm', () => {
  it('indexes the example through the JSONL protocol and returns the run of the same scorer in-process', async () => {
    const r = await runCaptured(['ablate', '--config', config(', concurrency: 4')], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // The fixture is the fake arm's scorer at signal 1: same scores, same tie order, so the same run file
    // once the run tag is set aside.
    const strip = (t: string) => t.replace(/ \S+\n/g, '\n');
    expect(strip(runFile('cmd'))).toBe(strip(runFile('overlap')));
    expect(runFile('cmd').split('\n').length).toBeGreaterThan(1000);
    // The program's stderr reaches the log, prefixed by the arm.
    expect(r.log.some((l) => /^cmd \(stderr\): indexed 351 documents into harness-[0-9a-f]{16}$/.test(l))).toBe(true);
    // A second run asks the program nothing: the run cache serves it.
    const again = await runCaptured(['ablate', '--config', config(', concurrency: 4')], dir);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/system runs from cache: 2 hit\(s\), 0 computed/);
  });

  it('an error answer fails the run (exit 1) naming the request, and nothing is cached', async () => {
    const file = config('');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`${JSON.stringify(FIXTURE)}]`, `${JSON.stringify(FIXTURE)}, --fail-search]`));
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/arm cmd: the program answered request 2 with an error: index is corrupt/);
    const again = await runCaptured(['ablate', '--config', file, '--dry-run'], dir);
    expect(again.out).toMatch(/cmd \[retrieve command\] fingerprint \w+: 0\/1 scope run\(s\) cached/);
  });

  it('a program that cannot start is an error (exit 2) naming it', async () => {
    const file = config('');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`command: ${JSON.stringify(process.execPath)}`, 'command: /nonexistent/retriever'));
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/arm cmd: cannot start \/nonexistent\/retriever: spawn \/nonexistent\/retriever ENOENT/);
  });

  it('a line that is not JSON on stdout is a protocol error that quotes nothing', async () => {
    const file = config('');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`${JSON.stringify(FIXTURE)}]`, `${JSON.stringify(FIXTURE)}, --garbage]`));
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/stdout line 2 is not JSON; the program must write only JSONL answers on stdout/);
    expect(r.stderr).not.toMatch(/not json at all/);
  });

  it('on a scoped eval set each scope is indexed under its own name and searched there', async () => {
    mkdirSync(join(dir, 'es'));
    const memories = [
      { id: 'a1', text: 'dog named Biscuit', metadata: { scope: 'alex' } },
      { id: 'a2', text: 'cat food brand', metadata: { scope: 'alex' } },
      { id: 'b1', text: 'dog food for Rex', metadata: { scope: 'sam' } },
      { id: 'b2', text: 'Biscuit recipe', metadata: { scope: 'sam' } },
      { id: 'b3', text: 'the cat sleeps', metadata: { scope: 'sam' } },
    ];
    const qs = [
      { id: 'q1', text: 'dog Biscuit', stratum: 'exact', scope: 'alex', qrels: { a1: 1 } },
      { id: 'q2', text: 'dog Biscuit', stratum: 'exact', scope: 'sam', qrels: { b1: 1 } },
    ];
    writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${memories.map((m) => JSON.stringify(m)).join('\n')}\n`);
    writeFileSync(join(dir, 'es', 'queries.jsonl'), `${qs.map((q) => JSON.stringify(q)).join('\n')}\n`);
    const file = config('');
    writeFileSync(file, readFileSync(file, 'utf8').replace(`path: ${EXAMPLE}`, 'path: es'));
    const r = await runCaptured(['ablate', '--config', file], dir);
    expect(r.code).toBe(0);
    const indexed = r.log.filter((l) => l.startsWith('cmd (stderr): indexed'));
    // One line per scope; each scope's command writes its own stderr, so the lines may arrive in either order.
    expect(indexed.map((l) => l.replace(/harness-[0-9a-f]{16}/, 'S')).sort()).toEqual([
      'cmd (stderr): indexed 2 documents into S',
      'cmd (stderr): indexed 3 documents into S',
    ]);
    expect(new Set(indexed.map((l) => l.split(' ').pop())).size).toBe(2);
    // q2 has q1's text but searches the other scope: its hits are that scope's documents only.
    expect(
      runFile('cmd')
        .trim()
        .split('\n')
        .map((l) => l.split(' ').slice(0, 3).join(' ')),
    ).toEqual(['q1 Q0 a1', 'q1 Q0 a2', 'q2 Q0 b2', 'q2 Q0 b1', 'q2 Q0 b3']);
  });

  it('refuses (exit 2) to send sensitive documents to a program declared not local', async () => {
    const r = await runCaptured(['ablate', '--config', config(', local: false')], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /arms\[1\]\.sensitive: system "cmd" \(command\) would send text off this machine and the eval set has \d+ sensitive documents.*params\.local: true/,
    );
    // index: false sends no documents, so the same program may then run.
    const ok = await runCaptured(['ablate', '--config', config(', local: false, index: false')], dir);
    expect(ok.stderr).toBe('');
  });
});
