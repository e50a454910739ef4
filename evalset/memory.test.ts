import { describe, expect, it } from 'vitest';
import { type HarnessError, InputError, InputProblems } from '../harness/errors.js';
import { parseCsv } from './csv.js';
import { loadMemory } from './memory.js';
import { tempFolder } from '../harness/testing/files.js';

const folder = (files: Record<string, string>): Promise<string> => tempFolder('memory', files);

const corpus = [
  '{"id": "m1", "text": "Ana prefers green tea.", "date": "2024-03-05", "category": "preference", "importance": 0.8}',
  '{"id": "m2", "text": "Ana moved to Porto.", "title": "move", "date": "2024-03-05T14:30:00Z", "sensitive": true, "metadata": {"source": "chat"}}',
  '{"id": "m3", "text": "The meeting is on Friday."}',
].join('\n');
const queries = [
  '{"id": "q1", "text": "what does Ana drink", "stratum": "paraphrase", "qrels": {"m1": 3, "m3": 0}}',
  '{"id": "q2", "text": "Ana Porto", "stratum": "exact", "qrels": {"m3": 0}, "metadata": {"author": "x"}}',
].join('\n');

describe('loadMemory (JSONL)', () => {
  it('maps memories to documents and queries with graded qrels', async () => {
    const es = await loadMemory(await folder({ 'corpus.jsonl': corpus, 'queries.jsonl': queries }));
    expect(es.documents).toEqual([
      { id: 'm1', text: 'Ana prefers green tea.', timestamp: '2024-03-05', metadata: { category: 'preference', importance: 0.8 }, sensitive: false },
      { id: 'm2', text: 'Ana moved to Porto.', title: 'move', timestamp: '2024-03-05T14:30:00Z', metadata: { source: 'chat' }, sensitive: true },
      { id: 'm3', text: 'The meeting is on Friday.', sensitive: false },
    ]);
    expect(es.queries).toEqual([
      { id: 'q1', text: 'what does Ana drink', stratum: 'paraphrase' },
      { id: 'q2', text: 'Ana Porto', stratum: 'exact', metadata: { author: 'x' } },
    ]);
    expect(es.qrels.get('q1')).toEqual(
      new Map([
        ['m1', 3],
        ['m3', 0],
      ]),
    );
    // q2 has only a grade-0 judgment: kept and counted.
    expect(es.notes).toEqual(['1 query has no relevant document (no grade >= 1)']);
  });

  it("scopes come from the memories' metadata.scope", async () => {
    const es = await loadMemory(
      await folder({
        'corpus.jsonl': '{"id": "a", "text": "x", "metadata": {"scope": "u1"}}\n{"id": "b", "text": "y", "metadata": {"scope": "u2"}}\n',
        'queries.jsonl': '{"id": "q", "text": "x", "stratum": "exact", "qrels": {"a": 1}, "scope": "u1"}\n',
      }),
    );
    expect(es.scopes).toEqual(
      new Map([
        ['u1', ['a']],
        ['u2', ['b']],
      ]),
    );
    expect(es.queries[0]?.scope).toBe('u1');
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['an unknown corpus field', { 'corpus.jsonl': '{"id": "m1", "text": "x", "importnace": 1}' }, /corpus\.jsonl:1: unknown field "importnace"/],
    [
      'a qrels doc not in the corpus',
      { 'queries.jsonl': '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m9": 1}}' },
      /queries\.jsonl:1: query "q1": qrels doc id "m9" is not in the corpus/,
    ],
    ['a missing stratum', { 'queries.jsonl': '{"id": "q1", "text": "t", "qrels": {"m1": 1}}' }, /queries\.jsonl:1: missing field "stratum"/],
    ['a bad grade', { 'queries.jsonl': '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m1": 1.5}}' }, /grade of "m1" must be an integer 0\.\.3/],
    ['a bad date', { 'corpus.jsonl': '{"id": "m1", "text": "x", "date": "05/03/2024"}' }, /corpus\.jsonl:1: memory "m1": date "05\/03\/2024" is not ISO 8601/],
    ['importance out of range', { 'corpus.jsonl': '{"id": "m1", "text": "x", "importance": 2}' }, /importance must be a number in \[0, 1\]/],
    ['empty text', { 'corpus.jsonl': '{"id": "m1", "text": " "}' }, /memory "m1": text is empty/],
    ['a duplicate memory id', { 'corpus.jsonl': '{"id": "m1", "text": "x"}\n{"id": "m1", "text": "y"}' }, /corpus\.jsonl:2: duplicate memory id "m1"/],
    [
      'truncated JSONL',
      { 'queries.jsonl': '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m1": 1}}\n{"id": "q2", "te' },
      /queries\.jsonl:2: not valid JSON/,
    ],
    ['an undeclared scope', { 'queries.jsonl': '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m1": 1}, "scope": "u9"}' }, /scope "u9" is not declared/],
    [
      'an answer that is neither text nor a number',
      {
        'queries.jsonl':
          '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m1": 1}}\n{"id": "q2", "text": "t", "stratum": "s", "qrels": {"m1": 1}, "answer": ["tea"]}',
      },
      /queries\.jsonl:2: query "q2": field "answer" must be a string or a number, got \["tea"\]/,
    ],
    [
      'an empty answer',
      { 'queries.jsonl': '{"id": "q1", "text": "t", "stratum": "s", "qrels": {"m1": 1}, "answer": " "}' },
      /queries\.jsonl:1: query "q1": answer is empty/,
    ],
  ];
  for (const [name, override, message] of bad) {
    it(`rejects ${name}`, async () => {
      const dir = await folder({ 'corpus.jsonl': corpus, 'queries.jsonl': queries, ...override });
      const err = await loadMemory(dir).catch((e: unknown) => e);
      // One problem comes as that InputError; several (the overrides can leave qrels naming a dropped memory)
      // as one InputProblems listing each. Both exit 2.
      expect(err instanceof InputError || err instanceof InputProblems).toBe(true);
      expect((err as HarnessError).exitCode).toBe(2);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('lists the known fields in the hint of an unknown-field error', async () => {
    const err = (await loadMemory(await folder({ 'corpus.jsonl': '{"id": "m", "text": "x", "tags": []}', 'queries.jsonl': '' })).catch(
      (e: unknown) => e,
    )) as InputError;
    expect(err.hint).toBe('known fields: id, text, title, date, category, importance, sensitive, metadata');
    const q = (await loadMemory(
      await folder({ 'corpus.jsonl': corpus, 'queries.jsonl': '{"id": "q", "text": "t", "stratum": "s", "qrels": {}, "gold": "x"}' }),
    ).catch((e: unknown) => e)) as InputError;
    expect(q.hint).toBe('known fields: id, text, stratum, qrels, scope, answer, metadata');
  });
});

describe('loadMemory: gold answers', () => {
  /** The eval set of `corpus` and these lines of queries.jsonl. */
  const withQueries = async (lines: readonly string[]) => loadMemory(await folder({ 'corpus.jsonl': corpus, 'queries.jsonl': lines.join('\n') }));

  it('a query may carry a gold answer, text or a number (kept as its decimal string)', async () => {
    const es = await withQueries([
      '{"id": "q1", "text": "what does Ana drink", "stratum": "paraphrase", "qrels": {"m1": 3}, "answer": "Green tea"}',
      '{"id": "q2", "text": "how many cups", "stratum": "exact", "qrels": {"m1": 1}, "answer": 2.5}',
      '{"id": "q3", "text": "Ana Porto", "stratum": "exact", "qrels": {"m2": 2}}',
    ]);
    expect(es.format).toBe('memory');
    expect(es.queries.map((q) => q.answer)).toEqual(['Green tea', '2.5', undefined]);
    expect(es.notes).toEqual([]);
  });

  it('a query without judgments but with an answer is kept for answer measures only; one without either is dropped', async () => {
    const es = await withQueries([
      '{"id": "q1", "text": "t", "stratum": "exact", "qrels": {"m1": 1}}',
      '{"id": "q2", "text": "t", "stratum": "exact", "qrels": {}, "answer": "Porto", "metadata": {"author": "x"}}',
      '{"id": "q3", "text": "t", "stratum": "exact", "qrels": {}}',
    ]);
    expect(es.queries.map((q) => q.id)).toEqual(['q1', 'q2']);
    expect(es.queries[1]).toEqual({ id: 'q2', text: 't', stratum: 'exact', answer: 'Porto', metadata: { author: 'x', answerOnly: true } });
    expect(es.qrels.has('q2')).toBe(false);
    expect(es.notes).toEqual([
      '1 query dropped: no judgments ("qrels": {}): q3',
      '1 query without judgments ("qrels": {}) kept for answer measures only (it has an answer): q2',
    ]);
  });
});

describe('loadMemory (CSV)', () => {
  it('reads quoted fields, converts types and keeps line numbers', async () => {
    const csv = 'id,text,date,importance,sensitive,metadata\nm1,"Ana said ""hi"", then left",2024-03-05,0.5,true,"{""k"": 1}"\nm2,"two\nlines",,,,\n';
    const es = await loadMemory(await folder({ 'corpus.csv': csv, 'queries.jsonl': '{"id": "q", "text": "t", "stratum": "s", "qrels": {"m2": 1}}' }));
    expect(es.documents).toEqual([
      { id: 'm1', text: 'Ana said "hi", then left', timestamp: '2024-03-05', metadata: { importance: 0.5, k: 1 }, sensitive: true },
      { id: 'm2', text: 'two\nlines', sensitive: false },
    ]);
  });

  it('names the line of a bad row and unknown columns', async () => {
    const q = '{"id": "q", "text": "t", "stratum": "s", "qrels": {}}';
    const e1 = await loadMemory(await folder({ 'corpus.csv': 'id,text\nm1,ok\nm2,"multi\nline"\nm3,a,b\n', 'queries.jsonl': q })).catch((e: unknown) => e);
    expect((e1 as Error).message).toMatch(/corpus\.csv:5: 3 fields, but the header has 2/);
    const e2 = await loadMemory(await folder({ 'corpus.csv': 'id,txt\nm1,ok\n', 'queries.jsonl': q })).catch((e: unknown) => e);
    expect((e2 as Error).message).toMatch(/corpus\.csv:1: unknown column "txt"/);
    const e3 = await loadMemory(await folder({ 'corpus.csv': 'id,text\nm1,"unterminated\n', 'queries.jsonl': q })).catch((e: unknown) => e);
    expect((e3 as Error).message).toMatch(/corpus\.csv:2: unterminated quoted field/);
  });

  it('refuses both corpus files at once', async () => {
    const dir = await folder({ 'corpus.csv': 'id,text\n', 'corpus.jsonl': '', 'queries.jsonl': '' });
    await expect(loadMemory(dir)).rejects.toThrow(/both corpus\.jsonl and corpus\.csv exist/);
  });

  it('parseCsv handles CRLF and a missing final newline', () => {
    expect(parseCsv('f', 'a,b\r\n1,"2"\r\n3,4')).toEqual([
      { cells: ['a', 'b'], line: 1 },
      { cells: ['1', '2'], line: 2 },
      { cells: ['3', '4'], line: 3 },
    ]);
  });
});
