import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { readJudgments } from './store.js';

/** Issue 42: a judge run killed with SIGKILL leaves no temp file behind once it is run again, and loses no judgment. */

let server: Loopback | undefined;
const held: (() => void)[] = [];
afterEach(async () => {
  for (const release of held.splice(0)) release();
  await server?.close();
  server = undefined;
});

function completion(req: LoopbackRequest) {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  const grade = /Passage: [^\n]*g(\d)/.exec(prompt)?.[1] ?? '0';
  return chatCompletion(`##final score: ${grade}`, { prompt: 10, completion: 2 });
}

const files = {
  'es/corpus.jsonl': ['d1 Alex runs g3', 'd2 Alex bought milk g2', 'd3 Rent is due g1', 'd4 Dog g0']
    .map((t) => JSON.stringify({ id: t.split(' ')[0], text: t }))
    .join('\n'),
  'es/queries.jsonl': [
    { id: 'q1', text: 'Where does Alex run?', stratum: 'exact', qrels: { d4: 1 } },
    { id: 'q2', text: 'What did Alex buy?', stratum: 'exact', qrels: { d4: 1 } },
  ]
    .map((q) => JSON.stringify(q))
    .join('\n'),
  'a.trec': 'q1 Q0 d1 1 3 A\nq1 Q0 d2 2 2 A\nq2 Q0 d2 1 3 A\nq2 Q0 d3 2 2 A\n',
};

const judgeArgs = (dir: string, url: string, depth: number) =>
  ['judge', '--runs', join(dir, 'a.trec'), '--evalset', join(dir, 'es'), '--out', join(dir, 'judgments'), '--cache', join(dir, 'cache')].concat([
    '--depth',
    String(depth),
    '--model',
    'judge-m',
    '--base-url',
    `${url}/v1`,
    '--concurrency',
    '1',
    '--local',
  ]);

/** Every path under `dir`, recursively, relative to it. */
function tree(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel)).flatMap((n) => {
    const r = join(rel, n);
    return statSync(join(dir, r)).isDirectory() ? [r, ...tree(dir, r)] : [r];
  });
}

describe('a judge run killed with SIGKILL', () => {
  it('leaves nothing of its own naming once the judge runs again, and the judgments it replaced come back', async () => {
    let hold = false;
    server = await startLoopback((req) => (hold ? new Promise((resolve) => held.push(() => resolve({ status: 503 }))) : completion(req)));
    const dir = await tempFolder('judge-killed', files);
    // Depth 1 first: two pairs judged into the folder.
    expect((await runCaptured(judgeArgs(dir, server.url, 1), dir, {})).code).toBe(0);
    hold = true;
    const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'harness', 'cli', 'bin.ts'), ...judgeArgs(dir, server.url, 2)], {
      // tsx resolves from the working folder, so the child starts in the project; every path it gets is absolute.
      cwd: PROJECT_ROOT,
      stdio: 'ignore',
    });
    const exited = new Promise((res) => child.on('exit', res));
    const deadline = Date.now() + 40_000;
    while (server.requests.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(server.requests.length, 'the child never asked the judge').toBe(3);
    child.kill('SIGKILL');
    await exited;
    const pid = child.pid as number;
    // A kill lands between two statements: a cache entry half written, the new folder half filled, the old folder
    // moved aside before the new one took its place. Those are the names the killed writer uses, under its pid.
    const shard = readdirSync(join(dir, 'cache', 'judge'))[0] as string;
    const entry = readdirSync(join(dir, 'cache', 'judge', shard))[0] as string;
    writeFileSync(join(dir, 'cache', 'judge', shard, `${entry}.${pid}.0badc0de.tmp`), '{"half');
    mkdirSync(join(dir, `.judgments.${pid}.0123abcd.tmp`));
    writeFileSync(join(dir, `.judgments.${pid}.0123abcd.tmp`, 'manifest.json'), '{"half');
    renameSync(join(dir, 'judgments'), join(dir, `.judgments.${pid}.89abcdef.old`));
    hold = false;
    for (const release of held.splice(0)) release();

    const again = await runCaptured(judgeArgs(dir, server.url, 2), dir, {});
    expect(again.code, again.log.join('\n')).toBe(0);
    expect(tree(dir).filter((p) => /\.(tmp|old)$/.test(p))).toEqual([]);
    const j = await readJudgments(join(dir, 'judgments'));
    expect(j.records.map((r) => `${r.queryId} ${r.docId} ${r.grade}`).sort()).toEqual(['q1 d1 3', 'q1 d2 2', 'q2 d2 2', 'q2 d3 1']);
    // The two pairs judged before the kill were kept from the folder put back, not asked again.
    expect(j.manifest.counts.requests).toBe(2);
  }, 60_000);
});
