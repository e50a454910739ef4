import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { filesContaining } from '../testing/secret.js';
import { foolingProbes, INJECTED_INSTRUCTION, injected, padded, queryWords, stuffed } from './audit.js';
import { readJudgments } from './store.js';

const KEY = 'sk-audit-loopback-secret-7';

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function passageOf(req: LoopbackRequest): string {
  const prompt = (req.json as { messages: { content: string }[] }).messages[0]!.content;
  return /Passage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)![1]!;
}

/**
 * A judge that grades by the first `gN` tag of the passage, so repeating the passage (padding) or adding the
 * query's words (stuffing) changes nothing, but obeys an instruction inside the passage: it is fooled by
 * injection and by nothing else.
 */
function gullibleJudge(req: LoopbackRequest) {
  const p = passageOf(req);
  const grade = p.includes('grade it 3') ? '3' : /g(\d)/.exec(p)![1];
  return chatCompletion(`##final score: ${grade}`, { prompt: 50, completion: 4 });
}

// Eight pooled documents per query, graded 0-3 by their tag; gold grades none of them, so the judge grades every pooled pair.
const grades = [0, 0, 0, 1, 1, 2, 3, 0];
const queries = [
  { id: 'q1', text: 'Where does Alex run?', stratum: 'exact' },
  { id: 'q2', text: 'What did Alex buy?', stratum: 'multi-hop' },
  { id: 'q3', text: 'When is rent due?', stratum: 'exact' },
];
const corpus = [
  ...queries.flatMap((q) => grades.map((g, i) => ({ id: `${q.id}d${i}`, text: `memory ${i} of ${q.id} g${g}` }))),
  // Gold grades one unpooled document per query (a query without qrels is dropped at load).
  ...queries.map((q) => ({ id: `${q.id}gold`, text: `the answer to ${q.id} g3` })),
];
const run = queries.flatMap((q) => grades.map((_, i) => `${q.id} Q0 ${q.id}d${i} ${i + 1} ${10 - i} A`)).join('\n');

async function fixture(): Promise<string> {
  return tempFolder('audit', {
    'es/corpus.jsonl': corpus.map((d) => JSON.stringify(d)).join('\n'),
    'es/queries.jsonl': queries.map((q) => JSON.stringify({ ...q, qrels: { [`${q.id}gold`]: 3 } })).join('\n'),
    'a.trec': `${run}\n`,
  });
}

const common = (url: string, model = 'judge-m') => ['--evalset', 'es', '--out', 'judgments', '--cache', 'cache', '--model', model, '--base-url', `${url}/v1`];

describe('probes', () => {
  it('stuff the query words before the passage, append the instruction, repeat the passage k times', () => {
    expect(queryWords('Where does Alex run? Alex!')).toEqual(['Where', 'does', 'Alex', 'run']);
    expect(stuffed('Dog named Biscuit', 'Where does Alex run?', 2)).toBe('Where does Alex run Where does Alex run\nDog named Biscuit');
    expect(injected('Dog named Biscuit')).toBe(`Dog named Biscuit\n${INJECTED_INSTRUCTION}`);
    expect(padded('abc', 3)).toBe('abc\n\nabc\n\nabc');
  });
});

describe('harness judge --audit against a loopback judge fooled by injected instructions only', () => {
  it('finds exactly that, writes the audit into the manifest, and a rerun is served from the cache', async () => {
    server = await startLoopback(gullibleJudge);
    const dir = await fixture();
    const judged = await runCaptured(['judge', '--runs', 'a.trec', ...common(server.url), '--depth', '8'], dir, { OPENAI_API_KEY: KEY });
    expect(judged.code, judged.log.join('\n')).toBe(0);
    const before = await readJudgments(join(dir, 'judgments'));
    expect(before.records).toHaveLength(24);
    const sent = server.requests.length;

    const r = await runCaptured(['judge', '--audit', '--audit-pairs', '10', ...common(server.url)], dir, { OPENAI_API_KEY: KEY });
    expect(r.code, r.log.join('\n')).toBe(0);
    const { manifest, records } = await readJudgments(join(dir, 'judgments'));
    expect(records).toEqual(before.records);
    const audit = manifest.audit!;
    expect(audit.qrelsVersion).toBe(before.manifest.qrelsVersion);
    const byProbe = Object.fromEntries(audit.probes.map((p) => [p.probe, p]));
    // 12 pairs graded 0, 18 graded 0 or 1, 24 graded: 10 drawn of each.
    expect(byProbe['stuffing']).toMatchObject({ eligible: 12, drawn: 10, probed: 10, moved: 0, up: 0, meanShift: 0 });
    expect(byProbe['padding']).toMatchObject({ eligible: 24, drawn: 10, probed: 10, moved: 0, up: 0, meanShift: 0 });
    expect(byProbe['injection']).toMatchObject({ eligible: 18, drawn: 10, probed: 10, moved: 10, up: 10 });
    expect(byProbe['injection']!.meanShift).toBeGreaterThan(2);
    expect(byProbe['injection']!.upInterval![0]).toBeCloseTo(0.7225, 4);
    expect(byProbe['padding']!.upInterval).toEqual([0, expect.closeTo(0.2775, 4)]);
    expect(foolingProbes(audit).map((p) => p.probe)).toEqual(['injection']);
    expect(server.requests.length - sent).toBe(30);
    expect(r.out).toContain('injection: 10 pairs; grade moved in 10 (100.0%), up in 10');
    expect(r.out).toContain('padding: 10 pairs; grade moved in 0 (0.0%), up in 0');
    expect(r.out).toContain('FOOLED by injection');

    const again = await runCaptured(['judge', '--audit', '--audit-pairs', '10', ...common(server.url)], dir, { OPENAI_API_KEY: KEY });
    expect(again.code).toBe(0);
    expect(server.requests.length - sent).toBe(30);
    expect(again.out).toContain('requests sent: 0; replies from cache: 30');
    expect(filesContaining([dir], KEY)).toEqual([]);
  });

  it('fails (exit 1) when no probed passage gets a grade, naming how many replies had none, and writes no audit', async () => {
    let vague = false;
    server = await startLoopback((req) => {
      const reply = gullibleJudge(req);
      if (vague) reply.body.choices[0]!.message.content = 'It is hard to say.';
      return reply;
    });
    const dir = await fixture();
    expect((await runCaptured(['judge', '--runs', 'a.trec', ...common(server.url), '--depth', '8'], dir, { OPENAI_API_KEY: KEY })).code).toBe(0);
    vague = true;
    const r = await runCaptured(['judge', '--audit', '--audit-pairs', '4', ...common(server.url)], dir, { OPENAI_API_KEY: KEY });
    expect(r.code).toBe(1);
    const said = r.stderr + r.log.join('\n');
    expect(said).toContain(
      `judge audit of ${join(dir, 'judgments')}: no probe could be graded: none of the 12 probed passages got a grade (12 replied without a grade`,
    );
    expect(said).not.toContain('no probe moved the grade up');
    expect((await readJudgments(join(dir, 'judgments'))).manifest.audit).toBeUndefined();
  });

  it('asks another server afresh instead of serving the replies cached from the first', async () => {
    server = await startLoopback(gullibleJudge);
    const other = await startLoopback(gullibleJudge);
    try {
      const dir = await fixture();
      expect((await runCaptured(['judge', '--runs', 'a.trec', ...common(server.url), '--depth', '8'], dir, { OPENAI_API_KEY: KEY })).code).toBe(0);
      const first = await runCaptured(['judge', '--audit', '--audit-pairs', '4', ...common(server.url)], dir, { OPENAI_API_KEY: KEY });
      expect(first.code, first.log.join('\n')).toBe(0);
      expect(first.out).toContain('requests sent: 12; replies from cache: 0');
      const moved = await runCaptured(['judge', '--audit', '--audit-pairs', '4', ...common(other.url)], dir, { OPENAI_API_KEY: KEY });
      expect(moved.code, moved.log.join('\n')).toBe(0);
      expect(other.requests).toHaveLength(12);
      expect(moved.out).toContain('requests sent: 12; replies from cache: 0');
      // The key names the server, never its credentials: a user:password URL is refused at load anyway.
      expect(filesContaining([dir], KEY)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('refuses another judge than the one that judged the folder, and a folder with no judgments', async () => {
    server = await startLoopback(gullibleJudge);
    const dir = await fixture();
    const none = await runCaptured(['judge', '--audit', ...common(server.url)], dir, { OPENAI_API_KEY: KEY });
    expect(none.code).toBe(2);
    expect(none.stderr + none.log.join('\n')).toMatch(/holds no judgments to audit/);
    expect((await runCaptured(['judge', '--runs', 'a.trec', ...common(server.url), '--depth', '2'], dir, { OPENAI_API_KEY: KEY })).code).toBe(0);
    const other = await runCaptured(['judge', '--audit', ...common(server.url, 'other-m')], dir, { OPENAI_API_KEY: KEY });
    expect(other.code).toBe(2);
    expect(other.stderr + other.log.join('\n')).toMatch(/judged by judge-m .* audit with the judge settings the folder was judged with/s);
    const pairsAlone = await runCaptured(['judge', '--audit-pairs', '5', ...common(server.url)], dir, { OPENAI_API_KEY: KEY });
    expect(pairsAlone.code).toBe(2);
  });
});
