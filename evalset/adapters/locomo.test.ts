import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../harness/errors.js';
import { describeShared, sharedPath } from '../../harness/testing/shared.js';
import { LOCOMO_ABSTENTION_ANSWER, locomoFromJson, locomoOptions, normalizeEvidence, parseLocomoDate } from './locomo.js';
import { contentOverlap, exactOrParaphrase } from './overlap.js';

const defaults = locomoOptions.parse({});

/** A hand-made two-session conversation with every evidence quirk the real file has. */
function tiny(): unknown {
  return [
    {
      sample_id: 'conv-x',
      conversation: {
        speaker_a: 'Ann',
        speaker_b: 'Bo',
        session_1_date_time: '1:56 pm on 8 May, 2023',
        session_1: [
          { speaker: 'Ann', dia_id: 'D1:1', text: 'I adopted a cat named Tom.' },
          { speaker: 'Bo', dia_id: 'D1:2', text: 'Nice! Look at this.', img_url: ['u'], blip_caption: 'a photo of a red bike' },
        ],
        session_2_date_time: '12:05 am on 1 June, 2023',
        session_2: [{ speaker: 'Ann', dia_id: 'D2:1', text: 'We moved to Lisbon last week.' }],
        session_3_date_time: '9:00 am on 2 June, 2023',
      },
      qa: [
        { question: 'What is the name of the cat Ann adopted?', answer: 'Tom', evidence: ['D1:1'], category: 4 },
        { question: 'Where does she live now?', answer: 'Lisbon', evidence: ['D:2:01'], category: 4 },
        { question: 'Pets and city?', answer: 'x', evidence: ['D1:1; D2:1', 'D1:1'], category: 1 },
        { question: 'When?', answer: 'x', evidence: ['D9:9', 'D'], category: 2 },
        { question: 'Trap?', adversarial_answer: 'x', evidence: ['D1:2'], category: 5 },
        { question: 'Common sense?', answer: 'x', evidence: [], category: 3 },
      ],
      observation: { session_1_observation: { Ann: [['Ann adopted a cat named Tom.', 'D1:1']], Bo: [['Bo has a red bike.', 'D1:2, D1:9']] } },
    },
  ];
}

describe('LoCoMo adapter on a hand-made conversation', () => {
  it('builds turn documents with speaker, caption and ISO timestamp', () => {
    const { evalSet } = locomoFromJson('t.json', tiny(), defaults);
    expect(evalSet.documents).toEqual([
      { id: 'conv-x:D1:1', text: 'Ann: I adopted a cat named Tom.', timestamp: '2023-05-08T13:56:00', metadata: { session: 'session_1', speaker: 'Ann' } },
      {
        id: 'conv-x:D1:2',
        text: 'Bo: Nice! Look at this. [image: a photo of a red bike]',
        timestamp: '2023-05-08T13:56:00',
        metadata: { session: 'session_1', speaker: 'Bo' },
      },
      { id: 'conv-x:D2:1', text: 'Ann: We moved to Lisbon last week.', timestamp: '2023-06-01T00:05:00', metadata: { session: 'session_2', speaker: 'Ann' } },
    ]);
    expect(evalSet.scopes?.get('conv-x')).toEqual(['conv-x:D1:1', 'conv-x:D1:2', 'conv-x:D2:1']);
    expect(evalSet.units?.get('session')?.get('conv-x:D2:1')).toBe('conv-x:session_2');
  });

  it('normalises evidence, drops and counts what names no turn, excludes and counts QAs', () => {
    const { evalSet, stats } = locomoFromJson('t.json', tiny(), defaults);
    // q0 exact, q1 (D:2:01 -> D2:1) kept, q2 multi-hop (split "D1:1; D2:1", duplicate D1:1 merged),
    // q3 both ids invalid -> no evidence, q4 adversarial excluded, q5 empty evidence.
    expect(evalSet.queries.map((q) => [q.id, q.stratum, q.scope])).toEqual([
      ['conv-x:q0', 'exact', 'conv-x'],
      ['conv-x:q1', 'paraphrase', 'conv-x'],
      ['conv-x:q2', 'multi-hop', 'conv-x'],
    ]);
    expect(evalSet.qrels.get('conv-x:q1')).toEqual(new Map([['conv-x:D2:1', 1]]));
    expect(evalSet.qrels.get('conv-x:q2')).toEqual(
      new Map([
        ['conv-x:D1:1', 1],
        ['conv-x:D2:1', 1],
      ]),
    );
    expect(stats.evidence).toEqual({ split: 1, fixed: 1, dropped: ['conv-x:q3 "D9:9"', 'conv-x:q3 "D"'], duplicates: 1 });
    expect(stats.excluded).toEqual({ adversarial: 1, noEvidence: ['conv-x:q3', 'conv-x:q5'], noUnitEvidence: [] });
    expect(evalSet.notes?.join('\n')).toMatch(/2 ids dropped \(name no turn\): conv-x:q3 "D9:9", conv-x:q3 "D"/);
    expect(evalSet.notes?.join('\n')).toMatch(
      /2 QAs without valid evidence excluded \(keepWithoutEvidence keeps them for answer measures\): conv-x:q3, conv-x:q5/,
    );
  });

  it('keeps adversarial QAs as their own stratum when asked', () => {
    const { evalSet } = locomoFromJson('t.json', tiny(), locomoOptions.parse({ includeAdversarial: true }));
    expect(evalSet.queries.find((q) => q.id === 'conv-x:q4')?.stratum).toBe('adversarial');
  });

  it('session and observation units map evidence to their units; pooled drops scopes', () => {
    const s = locomoFromJson('t.json', tiny(), locomoOptions.parse({ unit: 'session', scope: 'pooled' })).evalSet;
    expect(s.documents.map((d) => [d.id, d.text])).toEqual([
      ['conv-x:session_1', 'Ann: I adopted a cat named Tom.\nBo: Nice! Look at this. [image: a photo of a red bike]'],
      ['conv-x:session_2', 'Ann: We moved to Lisbon last week.'],
    ]);
    expect(s.scopes).toBeUndefined();
    expect(s.queries[0]?.scope).toBeUndefined();
    expect(s.qrels.get('conv-x:q2')).toEqual(
      new Map([
        ['conv-x:session_1', 1],
        ['conv-x:session_2', 1],
      ]),
    );

    const { evalSet: o, stats } = locomoFromJson('t.json', tiny(), locomoOptions.parse({ unit: 'observation' }));
    expect(o.documents.map((d) => d.id)).toEqual(['conv-x:O1:1', 'conv-x:O1:2']);
    expect(o.qrels.get('conv-x:q0')).toEqual(new Map([['conv-x:O1:1', 1]]));
    // q1's only evidence turn D2:1 has no observation: excluded and named.
    expect(stats.excluded.noUnitEvidence).toEqual(['conv-x:q1']);
  });

  it('rejects malformed input naming the item', () => {
    const missing = tiny() as { qa: Record<string, unknown>[] }[];
    delete missing[0]!.qa[2]!['question'];
    expect(() => locomoFromJson('t.json', missing, defaults)).toThrow(/\[0\]\.qa\[2\]\.question/);
    const badCat = tiny() as { qa: Record<string, unknown>[] }[];
    badCat[0]!.qa[0]!['category'] = 6;
    expect(() => locomoFromJson('t.json', badCat, defaults)).toThrow(InputError);
    const badDate = tiny() as { conversation: Record<string, unknown> }[];
    badDate[0]!.conversation['session_2_date_time'] = 'yesterday';
    expect(() => locomoFromJson('t.json', badDate, defaults)).toThrow(/session_2_date_time: missing or unparsable date "yesterday"/);
  });
});

describe('LoCoMo adapter: gold answers for answer measures', () => {
  it('carries the gold answer (a number as its decimal string), the conversation index and the category', () => {
    const data = tiny() as { sample_id: string; qa: Record<string, unknown>[] }[];
    data[0]!.qa[1]!['answer'] = 2022;
    // A second conversation, so the index is the file position, not a constant.
    const second = structuredClone(data[0]!);
    second.sample_id = 'conv-y';
    const { evalSet } = locomoFromJson('t.json', [data[0], second], defaults);
    const q = (id: string) => evalSet.queries.find((x) => x.id === id);
    expect(q('conv-x:q0')).toMatchObject({ answer: 'Tom', metadata: { category: 4, conversationIndex: 0, evidence: ['D1:1'] } });
    expect(q('conv-x:q1')?.answer).toBe('2022');
    expect(q('conv-y:q0')?.metadata?.['conversationIndex']).toBe(1);
    // Retrieval queries are not marked answer-only or abstention.
    for (const x of evalSet.queries) expect([x.metadata?.['answerOnly'], x.metadata?.['abstention']]).toEqual([undefined, undefined]);
  });

  it('an adversarial QA, when included, is an abstention question whose trap answer is kept apart', () => {
    const { evalSet } = locomoFromJson('t.json', tiny(), locomoOptions.parse({ includeAdversarial: true }));
    const q4 = evalSet.queries.find((q) => q.id === 'conv-x:q4');
    expect(q4?.answer).toBe(LOCOMO_ABSTENTION_ANSWER);
    expect(q4?.metadata).toMatchObject({ category: 5, abstention: true, adversarialAnswer: 'x' });
    // Its evidence turn stays judged: retrieval scores it as before.
    expect(evalSet.qrels.get('conv-x:q4')).toEqual(new Map([['conv-x:D1:2', 1]]));
  });

  it('keepWithoutEvidence keeps QAs without valid evidence, with an answer, as answer-only queries without qrels', () => {
    const data = tiny() as { qa: Record<string, unknown>[] }[];
    delete data[0]!.qa[5]!['answer'];
    const { evalSet, stats } = locomoFromJson('t.json', data, locomoOptions.parse({ keepWithoutEvidence: true }));
    // q3 (both ids invalid) is kept; q5 (no evidence, and now no answer) serves nothing and stays excluded.
    expect(evalSet.queries.map((q) => q.id)).toEqual(['conv-x:q0', 'conv-x:q1', 'conv-x:q2', 'conv-x:q3']);
    const q3 = evalSet.queries[3]!;
    expect(q3).toMatchObject({ stratum: 'temporal', scope: 'conv-x', answer: 'x', metadata: { category: 2, evidence: [], answerOnly: true } });
    expect(evalSet.qrels.has('conv-x:q3')).toBe(false);
    expect(stats.answerOnly).toEqual({ noEvidence: ['conv-x:q3'], noUnitEvidence: [] });
    expect(stats.excluded.noEvidence).toEqual(['conv-x:q5']);
    expect(evalSet.notes).toContain('1 QAs without valid evidence kept for answer measures only (no qrels): conv-x:q3');
    expect(evalSet.notes).toContain('1 QAs without valid evidence excluded (no answer either): conv-x:q5');
    // The retrieval queries are those of the default load, unchanged.
    const plain = locomoFromJson('t.json', data, defaults).evalSet;
    expect(evalSet.queries.filter((q) => q.metadata?.['answerOnly'] !== true)).toEqual(plain.queries);
    expect(evalSet.qrels).toEqual(plain.qrels);
  });

  it('at unit observation, keepWithoutEvidence also keeps QAs whose evidence turns have no observation', () => {
    const { evalSet, stats } = locomoFromJson('t.json', tiny(), locomoOptions.parse({ unit: 'observation', keepWithoutEvidence: true }));
    expect(stats.answerOnly.noUnitEvidence).toEqual(['conv-x:q1']);
    // Its valid evidence turn is still named in metadata; it has no observation to judge.
    expect(evalSet.queries.find((q) => q.id === 'conv-x:q1')?.metadata).toMatchObject({ evidence: ['D2:1'], answerOnly: true });
    expect(evalSet.qrels.has('conv-x:q1')).toBe(false);
  });

  it('rejects an answer that is neither text nor a number, naming the QA', () => {
    const data = tiny() as { qa: Record<string, unknown>[] }[];
    data[0]!.qa[0]!['answer'] = { text: 'Tom' };
    expect(() => locomoFromJson('t.json', data, defaults)).toThrow(/\[0\]\.qa\[0\]\.answer/);
  });
});

describe('LoCoMo helpers', () => {
  it('normalizeEvidence splits lists and fixes the two malformed spellings', () => {
    expect(normalizeEvidence(['D8:6; D9:17', 'D9:1 D4:4 D4:6', 'D:11:26', 'D30:05', 'D', 'D1:3'])).toEqual({
      ids: ['D8:6', 'D9:17', 'D9:1', 'D4:4', 'D4:6', 'D11:26', 'D30:5', 'D', 'D1:3'],
      split: 2,
      fixed: 2,
    });
  });
  it('parseLocomoDate converts 12-hour clock times', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00');
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).toBe('2023-09-13T00:09:00');
    expect(parseLocomoDate('12:30 pm on 1 January, 2024')).toBe('2024-01-01T12:30:00');
    expect(parseLocomoDate('13:00 pm on 1 May, 2023')).toBeUndefined();
  });
  it('the overlap rule counts distinct content tokens of the question', () => {
    // Question content tokens: {charity, race, raise, awareness} (what, did, the, for are stop words).
    // Evidence tokens hold charity, race, awareness but "raising", not "raise": 3/4 = 0.75 -> exact.
    const ev = ['Caroline: That charity race sounds great! Raising awareness for mental health is rewarding.'];
    expect(contentOverlap('What did the charity race raise awareness for?', ev)).toBe(0.75);
    // {melanie, prioritize, self, care}: none occurs in the evidence below -> 0 -> paraphrase.
    expect(exactOrParaphrase('How does Melanie prioritize self-care?', ['Bo: carving out me-time each day'])).toBe('paraphrase');
    // Exactly half is exact: {caroline, plans} vs "caroline" only = 1/2.
    expect(exactOrParaphrase("Caroline's plans?", ['Caroline: hello'])).toBe('exact');
    expect(contentOverlap('What is it?', ['anything'])).toBe(0);
  });
});

describeShared('LoCoMo adapter on locomo10.json', ['data/locomo/locomo10.json'], () => {
  const file = sharedPath('data', 'locomo', 'locomo10.json');

  it('counts conversations, turns, QAs, categories, evidence fixes and strata', async () => {
    const raw = JSON.parse(await readFile(file, 'utf8')) as {
      conversation: Record<string, unknown>;
      qa: { category: number; evidence: string[] }[];
    }[];
    const { evalSet, stats } = locomoFromJson(file, raw, defaults);

    // Independent counts straight from the JSON.
    let turns = 0;
    for (const s of raw) for (const [k, v] of Object.entries(s.conversation)) if (/^session_\d+$/.test(k)) turns += (v as unknown[]).length;
    const cats = [1, 2, 3, 4, 5].map((c) => raw.flatMap((s) => s.qa).filter((q) => q.category === c).length);
    const rawEvidence = raw.flatMap((s) => s.qa).flatMap((q) => q.evidence);
    const listEntries = rawEvidence.filter((e) => /[;,\s]/.test(e.trim())).length;
    const misspelled = rawEvidence.filter((e) => /^D:/.test(e) || /:0\d/.test(e)).length;

    expect(raw).toHaveLength(10);
    expect(turns).toBe(5882);
    expect(cats).toEqual([282, 321, 96, 841, 446]);
    expect(stats.conversations).toBe(10);
    expect(stats.sessions).toBe(272);
    expect(stats.turns).toBe(5882);
    expect(evalSet.documents).toHaveLength(5882);
    expect(stats.qas).toBe(1986);
    expect(stats.byCategory).toEqual({ 1: 282, 2: 321, 3: 96, 4: 841, 5: 446 });

    // DATA.md: "D8:6; D9:17", "D9:1 D4:4 D4:6" and two more space-separated lists in conv-49 -> 4 splits;
    // "D:11:26" and "D30:05" -> 2 fixes; "D", conv-42 D10:19 and conv-47 D4:36 name no turn -> 3 drops.
    expect(listEntries).toBe(4);
    expect(misspelled).toBe(2);
    expect(stats.evidence.split).toBe(listEntries);
    expect(stats.evidence.fixed).toBe(misspelled);
    expect(stats.evidence.dropped).toEqual(['conv-42:q58 "D10:19"', 'conv-42:q88 "D"', 'conv-47:q38 "D4:36"']);
    expect(stats.evidence.duplicates).toBe(1);

    // 446 adversarial excluded; 4 category-3 QAs have empty evidence (DATA.md) -> 1,986 - 446 - 4 = 1,536 queries.
    const emptyEvidence = raw.flatMap((s) => s.qa).filter((q) => q.category !== 5 && q.evidence.length === 0).length;
    expect(emptyEvidence).toBe(4);
    expect(stats.excluded.adversarial).toBe(446);
    expect(stats.excluded.noEvidence).toEqual(['conv-26:q30', 'conv-26:q46', 'conv-50:q39', 'conv-50:q42']);
    expect(evalSet.queries).toHaveLength(1986 - 446 - 4);
    // Strata: multi-hop 282, temporal 321, open-domain 96 - 4 = 92, single-hop 841 = 496 exact + 345 paraphrase.
    expect(stats.queriesPerStratum).toEqual({ 'multi-hop': 282, temporal: 321, 'open-domain': 92, exact: 496, paraphrase: 345 });
    const recount: Record<string, number> = {};
    for (const q of evalSet.queries) recount[q.stratum] = (recount[q.stratum] ?? 0) + 1;
    expect(recount).toEqual(stats.queriesPerStratum);
    // Every relevant turn lies in its query's scope (validate checks this too).
    for (const q of evalSet.queries) {
      const scope = new Set(evalSet.scopes?.get(q.scope!));
      for (const d of evalSet.qrels.get(q.id)!.keys()) expect(scope.has(d)).toBe(true);
    }
  });

  it('keepWithoutEvidence gives every question of categories 1-4 with its answer: the 1,540 answer measures use', async () => {
    const raw = JSON.parse(await readFile(file, 'utf8')) as { sample_id: string; qa: { category: number; answer?: string | number }[] }[];
    const { evalSet, stats } = locomoFromJson(file, raw, locomoOptions.parse({ keepWithoutEvidence: true }));
    expect(evalSet.queries).toHaveLength(1540);
    // The 4 category-3 QAs with empty evidence are the answer-only ones; the 3 dropped ids left their QAs evidence.
    expect(stats.answerOnly).toEqual({ noEvidence: ['conv-26:q30', 'conv-26:q46', 'conv-50:q39', 'conv-50:q42'], noUnitEvidence: [] });
    expect(evalSet.qrels.size).toBe(1536);
    // Every answer is the file's, numbers (2 in category 1, 4 in category 2) as decimal strings.
    const byId = new Map(evalSet.queries.map((q) => [q.id, q]));
    let numeric = 0;
    raw.forEach((s, si) =>
      s.qa.forEach((qa, qi) => {
        if (qa.category === 5) return;
        const q = byId.get(`${s.sample_id}:q${qi}`);
        if (typeof qa.answer === 'number') numeric += 1;
        expect(q?.answer).toBe(String(qa.answer));
        expect(q?.metadata?.['conversationIndex']).toBe(si);
      }),
    );
    expect(numeric).toBe(6);
    const perCategory = [1, 2, 3, 4].map((c) => evalSet.queries.filter((q) => q.metadata?.['category'] === c).length);
    expect(perCategory).toEqual([282, 321, 96, 841]);
  });

  it('with includeAdversarial as well, the 446 adversarial QAs are abstention questions', async () => {
    const raw = JSON.parse(await readFile(file, 'utf8')) as unknown;
    const { evalSet } = locomoFromJson(file, raw, locomoOptions.parse({ keepWithoutEvidence: true, includeAdversarial: true }));
    expect(evalSet.queries).toHaveLength(1986);
    const abstention = evalSet.queries.filter((q) => q.metadata?.['abstention'] === true);
    expect(abstention).toHaveLength(446);
    expect(abstention.every((q) => q.metadata?.['category'] === 5 && q.answer === LOCOMO_ABSTENTION_ANSWER)).toBe(true);
    expect(abstention.every((q) => typeof q.metadata?.['adversarialAnswer'] === 'string')).toBe(true);
  });

  it('session and observation units keep the same 10 scopes', async () => {
    const raw = JSON.parse(await readFile(file, 'utf8')) as unknown;
    const s = locomoFromJson(file, raw, locomoOptions.parse({ unit: 'session' })).evalSet;
    expect(s.documents).toHaveLength(272);
    expect(s.queries).toHaveLength(1536);
    const o = locomoFromJson(file, raw, locomoOptions.parse({ unit: 'observation' }));
    expect(o.evalSet.documents).toHaveLength(2541); // DATA.md: 2,541 observation facts
    expect(o.evalSet.queries.length + o.stats.excluded.noUnitEvidence.length).toBe(1536);
    expect(o.stats.excluded.noUnitEvidence).toHaveLength(224);
  });
});
