import { readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { InputError } from '../harness/errors.js';
import { checkDocumentText, checkQueryText } from './limits.js';
import { checkId, idField, parseGrade, Problems, readJsonl, readLines, stringField } from './lines.js';
import type { Document, EvalSet, Query } from './types.js';

export interface BeirOptions {
  /** The qrels split: `qrels/<split>.tsv`. */
  readonly split: string;
  /** The corpus file, relative to `dir` or absolute; default: `corpus.jsonl`, else the single `corpus/*.jsonl`. */
  readonly corpusFile?: string;
}

/** The stratum of every BEIR query: BEIR sets carry no strata; a strata file (evalset/strata.ts) can override. */
export const BEIR_STRATUM = 'all';

/**
 * Reads a BEIR folder (Thakur et al. 2021, https://github.com/beir-cellar/beir): `corpus.jsonl`
 * (`{_id, title, text}` per line), `queries.jsonl` (`{_id, text}`) and `qrels/<split>.tsv`
 * (header `query-id corpus-id score`, tab-separated, integer grades).
 *
 * Conventions, each chosen to match BEIR's own loader where it is sound and to fail loudly where it is not:
 * - Queries are exactly those with at least one qrels line in the split, in `queries.jsonl` order
 *   (BEIR's `GenericDataLoader` keeps the same set). Grade-0 lines are kept: they are judged-not-relevant.
 * - `title` stays separate from `text` (Document.title); an arm that wants BEIR's "flat" text joins
 *   `title + " " + text` itself, as Pyserini's flat indexes do. An empty title is absent. Source `metadata`
 *   (NFCorpus: a URL) is not kept: no arm reads it and it costs memory on large corpora.
 * - Every query's stratum is {@link BEIR_STRATUM}.
 * - Errors, never silent skips: bad JSON, missing `_id`/`text`, duplicate ids, a qrels line naming an unknown
 *   query or document, a duplicate (query, doc) pair, a non-integer grade, a line without 3 tab-separated fields.
 *   Every bad line of the three files is reported at once (up to the cap of {@link Problems}).
 */
export async function loadBeir(dir: string, opts: BeirOptions): Promise<EvalSet> {
  const root = resolve(dir);
  const corpusPath = await findCorpusFile(root, opts.corpusFile);
  const queriesPath = join(root, 'queries.jsonl');
  const qrelsPath = join(root, 'qrels', `${opts.split}.tsv`);
  await statOrThrow(qrelsPath, `no qrels for split "${opts.split}"`, await listSplits(root));

  const problems = new Problems();
  const documents: Document[] = [];
  const docIds = new Set<string>();
  for await (const { obj, line } of readJsonl(corpusPath, problems)) {
    problems.attempt(() => {
      const id = idField(corpusPath, line, obj, '_id');
      if (docIds.has(id)) throw new InputError(corpusPath, line, `duplicate document id "${id}"`);
      docIds.add(id);
      const text = stringField(corpusPath, line, obj, 'text', true);
      checkDocumentText(corpusPath, line, id, text);
      const title = stringField(corpusPath, line, obj, 'title', false);
      documents.push(title === undefined || title === '' ? { id, text } : { id, text, title });
    });
  }

  const allQueries = new Map<string, string>();
  const queryOrder: string[] = [];
  for await (const { obj, line } of readJsonl(queriesPath, problems)) {
    problems.attempt(() => {
      const id = idField(queriesPath, line, obj, '_id');
      if (allQueries.has(id)) throw new InputError(queriesPath, line, `duplicate query id "${id}"`);
      const text = stringField(queriesPath, line, obj, 'text', true);
      // Known before it is checked, so its qrels lines do not add "not in queries.jsonl" to the one problem.
      allQueries.set(id, text);
      queryOrder.push(id);
      checkQueryText(queriesPath, line, id, text);
    });
  }

  const qrels = new Map<string, Map<string, number>>();
  let first = true;
  for await (const { text, line } of readLines(qrelsPath)) {
    if (text.trim() === '') continue;
    const cols = text.split('\t');
    if (first) {
      first = false;
      if (cols.length === 3 && cols[0] === 'query-id' && cols[1] === 'corpus-id' && cols[2] === 'score') continue;
    }
    problems.attempt(() => qrelsLine(qrelsPath, line, cols, { queries: allQueries, queriesPath, docIds, corpusPath, qrels }));
  }
  problems.throwIfAny();

  const queries: Query[] = [];
  for (const id of queryOrder) {
    if (qrels.has(id)) queries.push({ id, text: allQueries.get(id)!, stratum: BEIR_STRATUM });
  }
  return { name: `${basename(root)}/${opts.split}`, documents, queries, qrels };
}

function qrelsLine(
  qrelsPath: string,
  line: number,
  cols: readonly string[],
  known: {
    queries: ReadonlyMap<string, string>;
    queriesPath: string;
    docIds: ReadonlySet<string>;
    corpusPath: string;
    qrels: Map<string, Map<string, number>>;
  },
): void {
  const { queries: allQueries, queriesPath, docIds, corpusPath, qrels } = known;
  if (cols.length !== 3) {
    throw new InputError(qrelsPath, line, `expected 3 tab-separated fields (query-id, corpus-id, score), got ${cols.length}`);
  }
  const [qid, did, score] = cols as [string, string, string];
  checkId(qrelsPath, line, 'query-id', qid);
  checkId(qrelsPath, line, 'corpus-id', did);
  const grade = parseGrade(qrelsPath, line, score.trim());
  if (!allQueries.has(qid)) throw new InputError(qrelsPath, line, `query "${qid}" is not in ${queriesPath}`);
  if (!docIds.has(did)) throw new InputError(qrelsPath, line, `document "${did}" is not in ${corpusPath}`);
  let judged = qrels.get(qid);
  if (judged === undefined) {
    judged = new Map();
    qrels.set(qid, judged);
  }
  if (judged.has(did)) throw new InputError(qrelsPath, line, `duplicate judgment for query "${qid}", document "${did}"`);
  judged.set(did, grade);
}

async function findCorpusFile(root: string, explicit: string | undefined): Promise<string> {
  if (explicit !== undefined) return resolve(root, explicit);
  const top = join(root, 'corpus.jsonl');
  if ((await stat(top).catch(() => undefined))?.isFile() === true) return top;
  const sub = join(root, 'corpus');
  const entries = await readdir(sub).catch(() => undefined);
  const jsonl = (entries ?? []).filter((e) => e.endsWith('.jsonl')).sort();
  if (jsonl.length === 1) return join(sub, jsonl[0]!);
  if (jsonl.length > 1) {
    throw new InputError(sub, undefined, `several corpus files (${jsonl.join(', ')}); say which one`, {
      hint: 'set the beir option corpusFile, e.g. corpusFile: corpus/human.jsonl',
    });
  }
  throw new InputError(top, undefined, 'no corpus: expected corpus.jsonl or a single corpus/*.jsonl', {
    hint: 'point the path at a BEIR folder, or set the beir option corpusFile',
  });
}

async function listSplits(root: string): Promise<string[]> {
  const entries = await readdir(join(root, 'qrels')).catch(() => [] as string[]);
  return entries
    .filter((e) => e.endsWith('.tsv'))
    .map((e) => e.slice(0, -4))
    .sort();
}

async function statOrThrow(file: string, message: string, splits: readonly string[]): Promise<void> {
  if ((await stat(file).catch(() => undefined))?.isFile() === true) return;
  throw new InputError(file, undefined, message, {
    hint: splits.length > 0 ? `splits present: ${splits.join(', ')}` : 'the folder has no qrels/*.tsv',
  });
}
