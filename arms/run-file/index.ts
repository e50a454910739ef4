import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { z } from 'zod';
import type { Corpus, Query, Run } from '../../evalset/types.js';
import { LIMITS } from '../../evalset/limits.js';
import { readTrecRun } from '../../evalset/trec.js';
import { sha256Hex } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import { compareRanked } from '../../harness/metrics/ranking.js';
import type { Arm, ArmFactory, IndexStats, ScoredDoc } from '../types.js';

const params = z
  .object({
    /** A TREC run file (`qid Q0 docid rank score tag`), plain or gzip; relative to the config file's folder. */
    path: z.string().min(1),
    /**
     * Largest run file read, in bytes of text (a gzip file's decompressed text): the whole run is held in memory,
     * at about 4 bytes of heap per byte of file at its peak. Raise it with Node's heap (--max-old-space-size).
     */
    maxBytes: z.number().int().positive().default(LIMITS.runFileBytes),
  })
  .strict();

export type RunFileParams = z.output<typeof params>;

/**
 * A run file past its arm's size limit: exit 2, the fix is a smaller run (or a larger limit and heap). What to do
 * is in the message: the config loader reports it as a problem of the arm's params, without a hint.
 */
function tooLarge(path: string, bytes: number | undefined, maxBytes: number): HarnessError {
  const size = bytes === undefined ? 'more than' : `${bytes.toLocaleString('en-US')} bytes, past`;
  return new HarnessError(
    `run file ${path} is ${size} the limit of ${maxBytes.toLocaleString('en-US')} bytes of run text (params.maxBytes); ` +
      "keep each query's top entries only (the arm returns at most topK), or raise maxBytes together with node --max-old-space-size (docs/limits.md)",
    { exitCode: 2 },
  );
}

/** The file's text bytes: decompressed when gzip, so a run and its .gz share one fingerprint; never past `maxBytes`. */
function contentOf(path: string, maxBytes: number): Buffer {
  let raw: Buffer;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw new HarnessError(`run file ${path} is a folder; point path at a TREC run file`, { exitCode: 2 });
    if (st.size > maxBytes) throw tooLarge(path, st.size, maxBytes);
    raw = readFileSync(path);
  } catch (err) {
    if (err instanceof HarnessError) throw err;
    throw new HarnessError(
      `run file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); point path at a TREC run file`,
      {
        exitCode: 2,
      },
    );
  }
  if (raw[0] !== 0x1f || raw[1] !== 0x8b) return raw;
  try {
    return gunzipSync(raw, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(path, undefined, maxBytes);
    throw new HarnessError(`run file ${path} starts like gzip but cannot be decompressed: ${(err as Error).message}`, { exitCode: 2 });
  }
}

/**
 * The run, read whole. Memory running out while it is read (an allocation refused, a string or Map past V8's
 * size) is named with the arm and the file: V8's own message names neither.
 */
async function readRun(id: string, path: string): Promise<Run> {
  try {
    return (await readTrecRun(path)).run;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!(err instanceof RangeError) && code !== 'ERR_FS_FILE_TOO_LARGE' && code !== 'ERR_STRING_TOO_LONG') throw err;
    throw new HarnessError(`${id}: run file ${path} does not fit in memory (${(err as Error).message})`, {
      hint: "keep each query's top entries only, or run node with a larger --max-old-space-size (limits: docs/limits.md)",
      cause: err,
    });
  }
}

/**
 * `run-file`: a TREC run made elsewhere (Pyserini, a vector database export) played back as an arm, so it
 * fuses, pools and is gated like any other. Identity is the file's content hash. Each scope is checked against
 * the eval set: the scope's queries the file lacks (they score 0), entries naming a document outside the
 * scope's corpus, and (on an unscoped eval set) file queries the eval set does not have are counted in the
 * index statistics (so in the manifest) and warned about on stderr.
 */
export const runFileArm: ArmFactory<typeof params> = {
  kind: 'run-file',
  summary: 'a TREC run file (plain or .gz) made by another tool, checked against the eval set',
  params,
  resolvePaths: (p, dir) => ({ ...p, path: isAbsolute(p.path) ? p.path : resolve(dir, p.path) }),
  fingerprint: (p) => ({ kind: 'run-file', v: 1, sha256: sha256Hex(contentOf(p.path, p.maxBytes)) }),
  // A run file's scores are whatever its tool wrote.
  theoreticalMinScore: () => undefined,
  sendsTextOffMachine: () => false,
  create(id, p, ctx): Arm {
    let run: Run | undefined;
    let ranked = new Map<string, ScoredDoc[]>();
    const asked = new Set<string>();
    let scoped = false;
    return {
      id,
      async index(corpus: Corpus, queries: readonly Query[] = []): Promise<IndexStats> {
        run ??= await readRun(id, p.path);
        const docs = new Set(corpus.map((d) => d.id));
        const mine = new Set(queries.map((q) => q.id));
        scoped ||= queries.some((q) => q.scope !== undefined);
        let missing = 0;
        let unknownDocuments = 0;
        const unknownDocIds: string[] = [];
        ranked = new Map();
        for (const q of queries) {
          asked.add(q.id);
          const entries = run.get(q.id);
          if (!entries) {
            missing++;
            continue;
          }
          const list = [...entries].map(([docId, score]) => ({ docId, score }));
          list.sort((a, b) => compareRanked(a.score, a.docId, b.score, b.docId));
          for (const d of list) {
            if (!docs.has(d.docId)) {
              unknownDocuments++;
              if (unknownDocIds.length < 5) unknownDocIds.push(d.docId);
            }
          }
          ranked.set(q.id, list);
        }
        const unknownQueryIds = scoped ? [] : [...run.keys()].filter((q) => !mine.has(q));
        if (unknownQueryIds.length > 0)
          ctx.log.warn(
            `${id}: ${unknownQueryIds.length} query id(s) of ${p.path} are not in the eval set (${unknownQueryIds.slice(0, 5).join(', ')}${unknownQueryIds.length > 5 ? ', ...' : ''}); ignored`,
          );
        if (unknownDocuments > 0)
          ctx.log.warn(
            `${id}: ${unknownDocuments} entr${unknownDocuments === 1 ? 'y' : 'ies'} of ${p.path} name a document outside the corpus (${unknownDocIds.join(', ')}${unknownDocuments > 5 ? ', ...' : ''}); kept, scored not relevant`,
          );
        if (missing > 0) ctx.log.warn(`${id}: ${missing} of ${queries.length} queries have no entry in ${p.path}; they score 0`);
        return {
          documents: corpus.length,
          runQueries: queries.length - missing,
          missingQueries: missing,
          unknownQueries: unknownQueryIds.length,
          unknownDocuments,
        };
      },
      async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
        return (ranked.get(query.id) ?? []).slice(0, topK);
      },
      async close() {
        // On a scoped eval set a scope sees only its own queries: the file's unknown queries are known at the end.
        if (!scoped || run === undefined) return;
        const unknown = [...run.keys()].filter((q) => !asked.has(q));
        if (unknown.length > 0)
          ctx.log.warn(
            `${id}: ${unknown.length} query id(s) of ${p.path} were asked by no scope run here (${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ', ...' : ''})`,
          );
      },
    };
  },
};
