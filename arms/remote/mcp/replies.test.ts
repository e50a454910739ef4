import { describe, expect, it } from 'vitest';
import { mcpArm, searchHits } from './index.js';

/** Search replies as servers send them: JSON hits, and "nothing found" in words (mcp-memory-keeper's shapes). */
const params = (response: Record<string, unknown> = {}) =>
  mcpArm.params.parse({ server: { command: 'node' }, response: { results: '$.items[*]', docId: '$.key', ...response } });
const query = { id: 'q1', text: 'which dog', stratum: 'exact' };
const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

describe('mcp search replies', () => {
  it('maps JSON hits in the text content', () => {
    expect(searchHits('own', params(), query, text(JSON.stringify({ items: [{ key: 'm1' }, { key: 'm2' }] })))).toEqual([
      { docId: 'm1', score: 1 },
      { docId: 'm2', score: 0.5 },
    ]);
  });

  it.each(['No results found for: "which dog"', 'No memories found.', 'No matching context found', '0 results', 'Nothing found', '  no relevant memories'])(
    'maps the plain-text reply %j to no hits',
    (reply) => {
      expect(searchHits('own', params(), query, text(reply))).toEqual([]);
    },
  );

  it('stops on other plain text (exit 1), naming params.response.empty and quoting nothing of the reply', () => {
    const reply = 'Alex adopted a beagle named Biscuit';
    let err: unknown;
    try {
      searchHits('own', params(), query, text(reply));
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toBe(
      `arm own: tool search returned plain text, not JSON (${reply.length} characters), and not a reply params.response.empty recognises as "nothing found"`,
    );
    expect((err as { exitCode?: number }).exitCode ?? 1).toBe(1);
    expect(JSON.stringify(err)).not.toContain('Biscuit');
  });

  it('takes the words for "nothing found" from response.empty, and refuses one that is not a regular expression', () => {
    expect(searchHits('own', params({ empty: '^Keine Treffer' }), query, text('Keine Treffer.'))).toEqual([]);
    expect(() => searchHits('own', params({ empty: '^Keine Treffer' }), query, text('No results found'))).toThrow(/plain text, not JSON/);
    const bad = mcpArm.params.safeParse({ server: { command: 'node' }, response: { empty: '(' } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ['response', 'empty'], message: expect.stringMatching(/^is not a regular expression/) });
  });
});
