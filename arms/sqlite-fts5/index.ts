import { createRequire } from 'node:module';
import { z } from 'zod';
import type BetterSqlite3 from 'better-sqlite3';
import type { Arm, ArmFactory, IndexStats, ScoredDoc } from '../types.js';
import type { Corpus, Query } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';

/** Bump when a change here changes any score for the same params. */
const ALGORITHM_VERSION = 1;

const params = z
  .object({
    /** FTS5 tokenizer: `unicode61` (FTS5's default) or `porter` (= `porter unicode61`, Porter-stemmed). */
    tokenizer: z.enum(['unicode61', 'porter']).default('unicode61'),
    /** `flat`: title and text in one column (BEIR "flat"); `separate`: two columns, weighted below. */
    fields: z.enum(['flat', 'separate']).default('flat'),
    /** Column weights passed to bm25() when `fields` is `separate`. */
    titleWeight: z.number().finite().positive().default(1),
    textWeight: z.number().finite().positive().default(1),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.fields === 'flat' && (p.titleWeight !== 1 || p.textWeight !== 1)) {
      ctx.addIssue({ code: 'custom', path: ['fields'], message: 'titleWeight/textWeight need fields: separate' });
    }
  });

const TOKENIZE = { unicode61: 'unicode61', porter: 'porter unicode61' } as const;

/** Runs of what unicode61 treats as token characters (letters, digits, private use) plus combining marks. */
const RE_QUERY_TOKEN = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

/**
 * Turns free user text into an FTS5 MATCH expression that can never be a syntax error and never an operator:
 * every token is a double-quoted string (so `NEAR`, `AND`, `-`, `*`, `:`, `^` and parentheses are plain text),
 * joined with OR (a disjunction, like BM25 over a bag of words). Returns undefined when the text has no
 * token; FTS5 would match nothing anyway.
 */
export function toMatchExpression(text: string): string | undefined {
  const tokens = text.match(RE_QUERY_TOKEN);
  if (tokens === null) return undefined;
  return tokens.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

/**
 * SQLite FTS5 through better-sqlite3, ranked by FTS5's built-in `bm25()`: the engine memory stores ship.
 * FTS5 fixes k1 = 1.2 and b = 0.75 (constants in fts5_aux.c; not configurable), uses
 * idf = ln((N - n + 0.5) / (n + 0.5)) clamped to 1e-6 when not positive, and returns the negated sum so that
 * lower is better; this arm negates it back (higher is better). Every matching term therefore adds a positive
 * amount, so the theoretical minimum score is 0. The database is in memory. FTS5 has no stop words: a query
 * word like "the" walks its whole posting list.
 */
export const sqliteFts5Arm: ArmFactory<typeof params> = {
  kind: 'sqlite-fts5',
  summary: 'SQLite FTS5 bm25() via better-sqlite3 (k1=1.2, b=0.75 fixed), unicode61 or porter tokenizer',
  params,
  requires: { packages: ['better-sqlite3'] },
  fingerprint: (p) => ({
    kind: 'sqlite-fts5',
    v: ALGORITHM_VERSION,
    tokenizer: p.tokenizer,
    fields: p.fields,
    titleWeight: p.titleWeight,
    textWeight: p.textWeight,
  }),
  theoreticalMinScore: () => 0,
  sendsTextOffMachine: () => false,
  create(id, p): Arm {
    let db: BetterSqlite3.Database | undefined;
    let select: BetterSqlite3.Statement<[string, number], { rowid: number; rank: number }> | undefined;
    let docIds: readonly string[] = [];
    return {
      id,
      async index(corpus: Corpus): Promise<IndexStats> {
        // A new scope replaces the previous index.
        db?.close();
        // Loaded here, not at import, so a run without this arm never opens the native module.
        const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
        const conn = new Database(':memory:');
        db = conn;
        const separate = p.fields === 'separate';
        const columns = separate ? 'title, body' : 'body';
        conn.exec(`CREATE VIRTUAL TABLE docs USING fts5(${columns}, content='', tokenize='${TOKENIZE[p.tokenizer]}')`);
        if (separate) conn.prepare(`INSERT INTO docs(docs, rank) VALUES ('rank', ?)`).run(`bm25(${p.titleWeight}, ${p.textWeight})`);
        const insert = conn.prepare<unknown[]>(
          separate ? 'INSERT INTO docs(rowid, title, body) VALUES (?, ?, ?)' : 'INSERT INTO docs(rowid, body) VALUES (?, ?)',
        );
        const load = conn.transaction((docs: Corpus) => {
          docs.forEach((d, i) => {
            if (separate) insert.run(i, d.title ?? '', d.text);
            else insert.run(i, d.title ? `${d.title}\n${d.text}` : d.text);
          });
        });
        load(corpus);
        docIds = corpus.map((d) => d.id);
        select = conn.prepare('SELECT rowid, rank FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?');
        return { documents: corpus.length };
      },
      async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
        if (select === undefined) throw new HarnessError(`arm '${id}': search called before index`);
        const expr = toMatchExpression(query.text);
        if (expr === undefined || topK <= 0) return [];
        return select.all(expr, topK).map((r) => ({ docId: docIds[r.rowid]!, score: -r.rank }));
      },
      async close() {
        db?.close();
        db = undefined;
        select = undefined;
      },
    };
  },
};
