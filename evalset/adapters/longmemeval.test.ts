import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../harness/errors.js';
import { runCaptured } from '../../harness/testing/cli.js';
import { describeShared, sharedPath } from '../../harness/testing/shared.js';
import { tempDir } from '../../harness/testing/temp.js';
import { evalSetFingerprint } from '../fingerprint.js';
import { LIMITS } from '../limits.js';
import { readJsonFile } from '../lines.js';
import { loadLongMemEval, longMemEvalFromJson, longMemEvalOptions, parseLongMemEvalDate, readLongMemEval } from './longmemeval.js';
import { writeSyntheticLongMemEval } from './longmemeval-synthetic.js';

const session = longMemEvalOptions.parse({});
const turn = longMemEvalOptions.parse({ unit: 'turn' });
const allOptions = [session, turn, longMemEvalOptions.parse({ unit: 'session', roles: 'all' }), longMemEvalOptions.parse({ unit: 'turn', roles: 'all' })];

/** Two questions sharing a filler session; q2's evidence is only in an assistant turn. */
function tiny(): unknown {
  const filler = [
    { role: 'user', content: 'I like tea.' },
    { role: 'assistant', content: 'Tea is nice.' },
  ];
  return [
    {
      question_id: 'q1',
      question_type: 'multi-session',
      question: 'How many pets?',
      answer: '2',
      question_date: '2023/06/01 (Thu) 00:58',
      haystack_dates: ['2023/05/25 (Thu) 20:21', '2023/05/26 (Fri) 09:00', '2023/05/27 (Sat) 10:20'],
      haystack_session_ids: ['s_fill', 'answer_1', 'answer_2'],
      haystack_sessions: [
        filler,
        [
          { role: 'user', content: 'Got a dog.', has_answer: true },
          { role: 'assistant', content: 'Congrats.', has_answer: false },
        ],
        [
          { role: 'user', content: 'Hello.', has_answer: false },
          { role: 'assistant', content: 'Hi.', has_answer: false },
          { role: 'user', content: 'Got a cat.', has_answer: true },
        ],
      ],
      answer_session_ids: ['answer_1', 'answer_2'],
    },
    {
      question_id: 'q2',
      question_type: 'single-session-assistant',
      question: 'What did you recommend?',
      answer: 'x',
      haystack_dates: ['2023/05/25 (Thu) 20:21', '2023/05/28 (Sun) 10:20'],
      haystack_session_ids: ['s_fill', 'answer_3'],
      haystack_sessions: [
        filler,
        [
          { role: 'user', content: 'Recommend a book?' },
          { role: 'assistant', content: 'Dune.', has_answer: true },
        ],
      ],
      answer_session_ids: ['answer_3'],
    },
    {
      question_id: 'q3_abs',
      question_type: 'temporal-reasoning',
      question: 'Unanswerable?',
      answer: 'x',
      haystack_dates: ['2023/05/25 (Thu) 20:21'],
      haystack_session_ids: ['answer_9'],
      haystack_sessions: [[{ role: 'user', content: 'Something.', has_answer: true }]],
      answer_session_ids: ['answer_9'],
    },
  ];
}

describe('LongMemEval adapter on hand-made questions', () => {
  it('session level: user turns joined by spaces, one scope per question, shared filler kept once', () => {
    const { evalSet, stats } = longMemEvalFromJson('t.json', tiny(), longMemEvalOptions.parse({ roles: 'all' }));
    expect(evalSet.documents.map((d) => [d.id, d.text, d.timestamp])).toEqual([
      ['s_fill', 'I like tea. Tea is nice.', '2023-05-25T20:21:00'],
      ['answer_1', 'Got a dog. Congrats.', '2023-05-26T09:00:00'],
      ['answer_2', 'Hello. Hi. Got a cat.', '2023-05-27T10:20:00'],
      ['answer_3', 'Recommend a book? Dune.', '2023-05-28T10:20:00'],
    ]);
    expect(evalSet.scopes?.get('q2')).toEqual(['s_fill', 'answer_3']);
    expect(stats.shared).toBe(1);
    expect(evalSet.queries.map((q) => [q.id, q.stratum, q.scope])).toEqual([
      ['q1', 'multi-hop', 'q1'],
      ['q2', 'single-session-assistant', 'q2'],
    ]);
    const user = longMemEvalFromJson('t.json', tiny(), session);
    expect(user.evalSet.documents.map((d) => [d.id, d.text])).toEqual([
      ['s_fill', 'I like tea.'],
      ['answer_1', 'Got a dog.'],
      ['answer_2', 'Hello. Got a cat.'],
    ]);
    expect(user.evalSet.qrels.get('q1')).toEqual(
      new Map([
        ['answer_1', 1],
        ['answer_2', 1],
      ]),
    );
    // Official protocol: with user turns only, q2 has no has_answer user turn (its evidence is an assistant
    // turn), so run_retrieval.py's averages skip it: skipped, like q3_abs, and named in the notes.
    expect(user.evalSet.queries.map((q) => q.id)).toEqual(['q1']);
    expect(user.evalSet.scopes?.has('q2')).toBe(false);
    expect([user.stats.noTarget, user.stats.noRelevant, user.stats.abstention]).toEqual([['q2'], [], ['q3_abs']]);
    expect(user.evalSet.notes).toEqual([
      'LongMemEval: 3 questions, 1 kept, unit session, user turns only',
      '1 abstention questions (_abs) skipped: q3_abs',
      "1 questions with no user turn marked has_answer skipped, as LongMemEval's averages skip them: q2",
    ]);
  });

  it('a question with a has_answer turn but none in an answer session is kept, scores 0, and is counted', () => {
    const data = tiny() as { haystack_sessions: { role: string; content: string; has_answer?: boolean }[][] }[];
    data[1]!.haystack_sessions[0] = [{ role: 'user', content: 'I like tea.', has_answer: true }];
    const { evalSet, stats } = longMemEvalFromJson('t.json', data, session);
    expect(evalSet.queries.map((q) => q.id)).toEqual(['q1', 'q2']);
    expect(evalSet.qrels.has('q2')).toBe(false);
    expect([stats.noTarget, stats.noRelevant]).toEqual([[], ['q2']]);
    expect(evalSet.notes?.join('\n')).toMatch(/1 questions have no relevant session under this protocol \(they score 0\): q2/);
  });

  it('turn level: ids number all turns 1-based, only user turns are documents', () => {
    const { evalSet } = longMemEvalFromJson('t.json', tiny(), turn);
    expect(evalSet.scopes?.get('q1')).toEqual(['s_fill_1', 'answer_1_1', 'answer_2_1', 'answer_2_3']);
    expect(evalSet.qrels.get('q1')).toEqual(
      new Map([
        ['answer_1_1', 1],
        ['answer_2_3', 1],
      ]),
    );
    expect(evalSet.units?.get('session')?.get('answer_2_3')).toBe('answer_2');
  });

  it('roles all indexes assistant turns, making q2 answerable', () => {
    const { evalSet } = longMemEvalFromJson('t.json', tiny(), longMemEvalOptions.parse({ unit: 'turn', roles: 'all' }));
    expect(evalSet.qrels.get('q2')).toEqual(new Map([['answer_3_2', 1]]));
  });

  it('a reused session id with another text is renamed and counted, never merged', () => {
    const data = tiny() as { haystack_sessions: { role: string; content: string }[][] }[];
    data[1]!.haystack_sessions[0] = [{ role: 'user', content: 'I like coffee.' }];
    const { evalSet, stats } = longMemEvalFromJson('t.json', data, longMemEvalOptions.parse({ roles: 'all' }));
    expect(stats.renamed).toBe(1);
    expect(evalSet.scopes?.get('q2')).toEqual(['s_fill@q2', 'answer_3']);
  });

  it('rejects missing fields and mismatched haystack lengths naming the question', () => {
    const a = tiny() as Record<string, unknown>[];
    delete a[0]!['answer_session_ids'];
    expect(() => longMemEvalFromJson('t.json', a, session)).toThrow(/\[0\]\.answer_session_ids/);
    const b = tiny() as { haystack_dates: string[] }[];
    b[0]!.haystack_dates.pop();
    expect(() => longMemEvalFromJson('t.json', b, session)).toThrow(
      /\[0\] \(q1\): haystack_session_ids \(3\), haystack_sessions \(3\) and haystack_dates \(2\)/,
    );
  });

  it('parses the official date form', () => {
    expect(parseLongMemEvalDate('2023/05/30 (Tue) 08:08')).toBe('2023-05-30T08:08:00');
    expect(parseLongMemEvalDate('30 May 2023')).toBeUndefined();
  });
});

describeShared('LongMemEval adapter on the 2-question sample', ['data/longmemeval/longmemeval_sample.json'], () => {
  const file = sharedPath('data', 'longmemeval', 'longmemeval_sample.json');
  it('loads both questions, skips and counts the abstention one, names relevant turns officially', async () => {
    const data = await readJsonFile(file);
    expect(data).toHaveLength(2);
    const { evalSet, stats } = longMemEvalFromJson(file, data, turn);
    expect(stats.questions).toBe(2);
    expect(stats.abstention).toEqual(['gpt4_70e84552_abs']);
    expect(evalSet.queries.map((q) => [q.id, q.stratum])).toEqual([['6a1eabeb', 'knowledge-update']]);
    // SOURCE.md: has_answer turns are session 1 turn 5 and session 2 turn 1 (both user turns); ids are
    // <session_id>_<1-based index over all turns>.
    expect(evalSet.qrels.get('6a1eabeb')).toEqual(
      new Map([
        ['answer_a25d4a91_1_5', 1],
        ['answer_a25d4a91_2_1', 1],
      ]),
    );
    // 2 sessions x 12 turns alternating user/assistant -> 6 user turns each -> 12 documents.
    expect(evalSet.documents).toHaveLength(12);
    expect(evalSet.documents.every((d) => /^answer_a25d4a91_[12]_(1|3|5|7|9|11)$/.test(d.id))).toBe(true);

    const s = longMemEvalFromJson(file, data, session).evalSet;
    expect(s.qrels.get('6a1eabeb')).toEqual(
      new Map([
        ['answer_a25d4a91_1', 1],
        ['answer_a25d4a91_2', 1],
      ]),
    );
  });

  it('streamed, it gives the eval set the whole-file parse gives, fingerprint included', async () => {
    const data = await readJsonFile(file);
    for (const options of allOptions) {
      const streamed = await loadLongMemEval(file, options);
      const whole = longMemEvalFromJson(file, data, options).evalSet;
      expect(streamed).toEqual(whole);
      expect(evalSetFingerprint(streamed)).toBe(evalSetFingerprint(whole));
    }
  });
});

describe('LongMemEval read as a stream, on generated files', () => {
  it('a generated LongMemEval-M-schema file: the eval set equals the whole-file parse, and the counts are what was written', async () => {
    const dir = await tempDir('lme-stream');
    const file = join(dir, 'longmemeval_m_synthetic.json');
    const wrote = await writeSyntheticLongMemEval(file, { bytes: 1_000_000, seed: 7, sessionsPerQuestion: 12, sharedPool: 40 });
    const text = await readFile(file, 'utf8');
    expect(Buffer.byteLength(text)).toBe(wrote.bytes);
    expect(wrote.bytes).toBeGreaterThanOrEqual(1_000_000);
    expect(wrote.abstention).toBeGreaterThan(0);
    const data = JSON.parse(text) as unknown;
    for (const options of allOptions) {
      const { evalSet, stats } = await readLongMemEval(file, options);
      const whole = longMemEvalFromJson(file, data, options);
      expect(evalSet).toEqual(whole.evalSet);
      expect(stats).toEqual(whole.stats);
      expect(evalSetFingerprint(evalSet)).toBe(evalSetFingerprint(whole.evalSet));
      expect([stats.questions, stats.sessions, stats.turns, stats.abstention.length]).toEqual([
        wrote.questions,
        wrote.haystackSessions,
        wrote.turns,
        wrote.abstention,
      ]);
      expect(stats.renamed).toBe(0);
      expect(evalSet.queries).toHaveLength(wrote.questions - wrote.abstention);
      if (options.unit === 'session') expect(evalSet.documents).toHaveLength(wrote.distinctSessionsKept);
      // Shared filler sessions are one document each, in several scopes.
      expect(stats.shared).toBeGreaterThan(0);
      if (options.unit === 'turn' && options.roles === 'user') {
        const inScopes = [...(evalSet.scopes?.values() ?? [])].reduce((n, ids) => n + ids.length, 0);
        expect(inScopes).toBe(wrote.userTurnsKept);
      }
    }
  });

  it('the generator is deterministic by seed', async () => {
    const dir = await tempDir('lme-gen');
    const hash = async (name: string, seed: number) => {
      await writeSyntheticLongMemEval(join(dir, name), { bytes: 200_000, seed });
      return createHash('sha256')
        .update(await readFile(join(dir, name)))
        .digest('hex');
    };
    expect(await hash('a.json', 1)).toBe(await hash('b.json', 1));
    expect(await hash('c.json', 2)).not.toBe(await hash('a.json', 1));
  });

  const caught = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );

  it('bad files are errors naming the file and what is wrong, never a shorter eval set', async () => {
    const dir = await tempDir('lme-bad');
    const good = JSON.stringify(tiny());
    const write = async (name: string, text: string | Buffer) => {
      await writeFile(join(dir, name), text);
      return join(dir, name);
    };
    const truncated = await write('cut.json', good.slice(0, good.length - 40));
    const e1 = (await caught(loadLongMemEval(truncated, session))) as InputError;
    expect(e1).toBeInstanceOf(InputError);
    expect(e1.message).toContain(truncated);
    expect(e1.message).toMatch(/not valid JSON within bytes 0-/);
    expect(e1.hint).toMatch(/truncated/);

    const object = await write('obj.json', JSON.stringify({ data: tiny() }));
    expect(((await caught(loadLongMemEval(object, session))) as Error).message).toMatch(/expected a JSON array at the top level/);
    const empty = await write('empty.json', '[]');
    expect(((await caught(loadLongMemEval(empty, session))) as Error).message).toMatch(/not LongMemEval's schema: \(root\): the array holds no questions/);
    const blank = await write('blank.json', '');
    expect(((await caught(loadLongMemEval(blank, session))) as Error).message).toMatch(/not valid JSON in an empty file/);

    const items = tiny() as Record<string, unknown>[];
    items[2] = { ...items[2], haystack_sessions: 'none' };
    const bad = await write('bad.json', JSON.stringify(items));
    expect(((await caught(loadLongMemEval(bad, session))) as Error).message).toMatch(/\[2\]\.haystack_sessions/);
    expect(((await caught(loadLongMemEval(join(dir, 'missing.json'), session))) as Error).message).toMatch(/file not found/);
  });

  it('a byte-order mark at the start is skipped, and a syntax error deep in a large file names the bytes around it', async () => {
    const dir = await tempDir('lme-bom');
    const bom = join(dir, 'bom.json');
    await writeFile(bom, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(tiny()))]));
    expect(await loadLongMemEval(bom, session)).toEqual(longMemEvalFromJson(bom, tiny(), session).evalSet);

    const big = join(dir, 'big.json');
    const wrote = await writeSyntheticLongMemEval(big, { bytes: 400_000, seed: 3 });
    const bytes = await readFile(big);
    // A raw control character inside a turn's text: JSON allows it only escaped.
    const at = bytes.indexOf('"content": "', 300_000) + 14;
    bytes[at] = 0x01;
    await writeFile(big, bytes);
    const err = (await caught(loadLongMemEval(big, session))) as InputError;
    const m = /within bytes ([\d,]+)-([\d,]+)/.exec(err.message);
    expect(m).not.toBeNull();
    const [from, to] = [Number(m![1]!.replaceAll(',', '')), Number(m![2]!.replaceAll(',', ''))];
    expect(from).toBeLessThanOrEqual(at);
    expect(to).toBeGreaterThanOrEqual(at);
    expect(to).toBeLessThan(wrote.bytes);
  });

  it('a string past the limit is refused naming the file, the element and its question_id, never built whole (exit 2)', async () => {
    const dir = await tempDir('lme-long');
    const items = tiny() as { haystack_sessions: { content: string }[][] }[];
    const file = join(dir, 'long.json');
    items[1]!.haystack_sessions[1]![0]!.content = 'x'.repeat(1001);
    await writeFile(file, JSON.stringify(items));
    const err = (await caught(readLongMemEval(file, session, { maxStringChars: 1000 }))) as InputError;
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toBe(`${file}: element [1] (question_id q2) holds a string of more than 1,000 characters (read no further)`);
    expect(err.exitCode).toBe(2);
    // At the limit it is read, and equal to the whole-file parse.
    items[1]!.haystack_sessions[1]![0]!.content = 'x'.repeat(1000);
    await writeFile(file, JSON.stringify(items));
    expect((await readLongMemEval(file, session, { maxStringChars: 1000 })).evalSet).toEqual(longMemEvalFromJson(file, items, session).evalSet);
  });

  it('through the CLI, the default limit (8 Mi characters, as a Document) names the file and the question (exit 2)', async () => {
    const dir = await tempDir('lme-long-cli');
    const items = tiny() as { haystack_sessions: { content: string }[][] }[];
    items[0]!.haystack_sessions[2]![2]!.content = 'y'.repeat(LIMITS.documentChars + 1);
    await writeFile(join(dir, 'huge.json'), JSON.stringify(items));
    const r = await runCaptured(['evalset', 'inspect', '--format', 'longmemeval', '--path', 'huge.json'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'huge.json')}: element [0] (question_id q1) holds a string of more than 8,388,608 characters (read no further)`);
    expect(r.stderr).not.toMatch(/unexpected failure|Invalid string length/);
  });
});
