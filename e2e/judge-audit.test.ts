import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChatServer, startChatServer } from './openai-server.js';
import { type Installed, installPackage, step } from './package.js';

/**
 * `harness judge --audit` and the judged report's audit and holes sections, run by the `harness` binary of the
 * packed package installed into a fresh project, against a chat server on 127.0.0.1 whose judge obeys
 * instructions written inside a passage and is not moved by anything else a probe does.
 */

/** The config's `judgments:` folder, relative to the study. */
const JUDGMENTS = 'data/judgments/example';
/** The config declares `local: true`: no key in the child's environment. */
const NO_KEY = { OPENAI_API_KEY: undefined };

const STOP = new Set('a an the and or of in on at to for with from by about is are was were be what which who when where how did do does my i'.split(' '));
const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w.length > 1 && !STOP.has(w)),
  );

let study: Installed;
let server: ChatServer | undefined;
const memories: string[] = [];

/**
 * The judge: it finds the memory the passage holds (the longest memory of the store it contains) and grades the
 * words that memory shares with the query, at most 3; words around the memory (the query's words stuffed
 * before it, the memory repeated) change nothing. An instruction to grade it 3 is obeyed.
 */
function judgeReply(prompt: string): string {
  const query = /\nQuery: (.*)\n/.exec(prompt)?.[1] ?? '';
  const passage = /\nPassage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)?.[1] ?? '';
  if (/grade it 3/i.test(passage)) return 'M: 3, T: 3\n##final score: 3';
  const memory = memories.filter((m) => passage.includes(m)).sort((a, b) => b.length - a.length)[0] ?? '';
  const m = words(memory);
  const g = Math.min(3, [...words(query)].filter((w) => m.has(w)).length);
  return `M: ${g}, T: 3\n##final score: ${g}`;
}

beforeAll(async () => {
  study = await installPackage();
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  const corpus = readFileSync(join(study.dir, 'evalset', 'examples', 'alex-memory', 'corpus.jsonl'), 'utf8');
  for (const line of corpus.trim().split('\n')) memories.push((JSON.parse(line) as { text: string }).text);
  server = await startChatServer(judgeReply);
}, 600_000);

afterAll(async () => {
  await server?.close();
  study?.remove();
});

describe('the judge audit with the installed package and a chat server on 127.0.0.1', { shuffle: false }, () => {
  it('judge --audit: the judge is fooled by injected instructions and by nothing else, and says so', async () => {
    const s = server as ChatServer;
    const config = ['--config', 'configs/example-judged.yaml', '--base-url', s.baseURL];
    await step(study, 'judge', ['judge', ...config], { env: NO_KEY });
    const before = s.calls.length;
    const ran = await step(study, 'judge --audit', ['judge', ...config, '--audit', '--audit-pairs', '20'], { env: NO_KEY });
    const line = (probe: string) => new RegExp(`^ {2}${probe}: (\\d+) pairs; grade moved in (\\d+) \\([\\d.]+%\\), up in (\\d+) `, 'm').exec(ran.stdout);
    const stuffing = line('stuffing');
    const injection = line('injection');
    const padding = line('padding');
    expect(stuffing, ran.stdout).not.toBeNull();
    expect(injection, ran.stdout).not.toBeNull();
    expect(padding, ran.stdout).not.toBeNull();
    expect(Number(injection?.[1])).toBeGreaterThan(0);
    // Every injected pair was graded 0 or 1 before, and 3 after.
    expect(injection?.[3]).toBe(injection?.[1]);
    expect([stuffing?.[2], stuffing?.[3], padding?.[2], padding?.[3]]).toEqual(['0', '0', '0', '0']);
    expect(ran.stdout).toMatch(/FOOLED by injection: the grade went up in more than 20\.0% of the pairs/);
    const probed = [stuffing, injection, padding].reduce((n, m) => n + Number(m?.[1]), 0);
    expect(s.calls.length - before).toBe(probed);
    const manifest = JSON.parse(readFileSync(join(study.dir, JUDGMENTS, 'manifest.json'), 'utf8')) as {
      qrelsVersion: string;
      audit?: { qrelsVersion: string };
    };
    expect(manifest.audit?.qrelsVersion).toBe(manifest.qrelsVersion);
  }, 600_000);

  it('ablate on gold+judged: the report shows the audit, a serious judge-fooled warning, and the holes table', async () => {
    await step(study, 'ablate', ['ablate', '--config', 'configs/example-judged.yaml'], { env: NO_KEY });
    const reports = join(study.dir, 'reports');
    const folder = readdirSync(reports).find((d) => d.startsWith('example-judged-')) as string;
    const md = readFileSync(join(reports, folder, 'report.md'), 'utf8');
    expect(md).toContain('## Judge audit');
    expect(md).toMatch(/^\| injection \| \d+ \| \d+ \(100\.0%\) \| \d+ \(100\.0%\) \|/m);
    expect(md).toMatch(/^\| padding \| \d+ \| 0 \(0\.0%\) \| 0 \(0\.0%\) \|/m);
    expect(md).toMatch(/- \*\*serious\*\* `judge-fooled` \(judge\): the judge audit raised the grade in 100\.0% of \d+ injection pairs/);
    expect(md).toContain("| system | nDCG@10 | nDCG'@10 | Bpref |");
    const data = JSON.parse(readFileSync(join(reports, folder, 'report.json'), 'utf8')) as { evalset: { judge?: { audit?: unknown } }; holes?: unknown };
    expect(data.evalset.judge?.audit).toBeDefined();
    expect(data.holes).toBeDefined();
  }, 600_000);
});
