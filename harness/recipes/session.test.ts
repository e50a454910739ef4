import { describe, expect, it } from 'vitest';
import type { Document } from '../../evalset/types.js';
import { buildSessions, extractiveSummary, sessionHeader } from './session.js';

const at = (id: string, time: string, text: string, speaker = 'Ann', chat?: string): Document => ({
  id,
  text: `${speaker}: ${text}`,
  timestamp: `2023-05-08T${time}`,
  metadata: { speaker, ...(chat === undefined ? {} : { chat }) },
});

describe('buildSessions: 30 minutes of inactivity', () => {
  it('keeps a 29:59 pause inside a session and splits at 30:00, per chat, in time order', () => {
    const s = buildSessions(
      [
        at('m1', '10:00:00', 'hi'),
        at('m2', '10:29:59', 'hello', 'Bob'),
        at('m3', '10:59:59', 'later'),
        at('x1', '10:10:00', 'other chat', 'Cy', 'c2'),
        at('m0', '09:00:00', 'early'),
      ],
      30,
      'c1',
    );
    expect(s.map((x) => [x.id, x.messages.map((m) => m.id)])).toEqual([
      ['c1/session-1', ['m0']],
      ['c1/session-2', ['m1', 'm2']],
      ['c1/session-3', ['m3']],
      ['c2/session-1', ['x1']],
    ]);
    expect(s[1]!.participants).toEqual(['Ann', 'Bob']);
  });

  it('keeps equal timestamps (LoCoMo turns of one session) in corpus order', () => {
    const s = buildSessions([at('t2', '10:00:00', 'b'), at('t1', '10:00:00', 'a')], 30, 'c');
    expect(s[0]!.messages.map((m) => m.id)).toEqual(['t2', 't1']);
  });
});

describe('extractiveSummary', () => {
  it('picks topics, decisions, entities and key points from the text, not the speakers', () => {
    const session = buildSessions(
      [
        at('1', '10:00:00', 'I went to the adoption agency in Boston today.', 'Caroline'),
        at('2', '10:01:00', 'How was the adoption interview?', 'Melanie'),
        at('3', '10:02:00', 'Great. I decided to adopt a child next year. The agency was kind.', 'Caroline'),
        at('4', '10:03:00', 'Caroline, that is wonderful news from Boston!', 'Melanie'),
      ],
      30,
      'conv-1',
    )[0]!;
    const sum = extractiveSummary(session);
    expect(sum.topics.slice(0, 3)).toEqual(['adoption', 'agency', 'boston']);
    expect(sum.decisions).toEqual(['I decided to adopt a child next year.']);
    expect(sum.entities).toEqual(['Boston']);
    expect(sum.keyPoints[0]).toBe('I went to the adoption agency in Boston today.');
    expect(sessionHeader(session, sum.topics.slice(0, 2))).toBe(
      '[chat: conv-1 | 2023-05-08 10:00 to 2023-05-08 10:03 | participants: Caroline, Melanie | topics: adoption, agency]',
    );
  });
});
