import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { Corpus, Query } from '../../../evalset/types.js';
import { HarnessError } from '../../../harness/errors.js';
import type { Arm, ArmContext, ArmFactory, IndexStats, ScoredDoc } from '../../types.js';
import { MAX_TIMER_MS, refuseSensitive, timeoutMsSchema } from '../limits.js';
import { scopeName } from '../scope.js';
import { HitRanker, type RemoteHit } from '../mapping.js';
import { textMatchSchema } from '../text-match.js';
import { BoundedStderr } from '../stderr.js';
import { STORE_CHECK_DEFAULT, runStoreCheck, storeCheckSchema } from '../store-check.js';

const params = z
  .object({
    /** The program to run (found on PATH, or a path). */
    command: z.string().min(1),
    /** Its arguments. They are in the fingerprint and the manifest: pass credentials through the environment. */
    args: z.array(z.string()).default([]),
    /** Its working folder, relative to the config file's folder; default the harness's own. */
    cwd: z.string().optional(),
    /** Send each scope's documents in an `index` request; false when the program holds its corpus already. */
    index: z.boolean().default(true),
    /**
     * The program runs on this machine, so documents sent to it stay here; set false when it forwards them to a
     * service elsewhere: then the arm counts as sending text off the machine and never sends Sensitive documents.
     */
    local: z.boolean().default(true),
    /** The retriever's version, for the fingerprint: change it and every cached run of the arm is recomputed. */
    version: z.string().optional(),
    /** Prefix of the scope names sent with each request. */
    scopePrefix: z.string().default('harness-'),
    /** How many requests may be in flight at once (the program answers them by `id`, in any order). */
    concurrency: z.number().int().min(1).max(256).default(1),
    /** After an index request: a sample of documents searched by their own text; too many missing stops the run. */
    storeCheck: storeCheckSchema.default(STORE_CHECK_DEFAULT),
    /** Milliseconds to wait for one answer (an index request waits 10 times as long). */
    timeoutMs: timeoutMsSchema().default(30_000),
    /**
     * Results may carry `text` (a memory the program rewrote): such a result is mapped to a Document by its text
     * with these settings, and judged when none matches (docs/arms/remote-responses.md). Absent: ids only.
     */
    textMatch: textMatchSchema.optional(),
  })
  .strict();

export type CommandParams = z.output<typeof params>;

interface Pending {
  resolve(v: Record<string, unknown>): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * One running program speaking the JSONL protocol of docs/arms/command-protocol.md: requests with an `id`
 * on its stdin, one answer line per request with the same `id` on its stdout, its stderr passed to the log.
 */
class JsonlProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | undefined;
  private readonly exited: Promise<void>;
  private readonly stderr: BoundedStderr;

  constructor(
    private readonly arm: string,
    p: CommandParams,
    ctx: ArmContext,
  ) {
    this.child = spawn(p.command, p.args, { stdio: 'pipe', env: ctx.env, ...(p.cwd === undefined ? {} : { cwd: p.cwd }) });
    this.exited = new Promise((res) => this.child.once('close', () => res()));
    // A write to a program that failed to start or died fails here too; the 'error' and 'exit' handlers say why.
    this.child.stdin.on('error', () => undefined);
    this.child.once('error', (err) =>
      this.fail(new HarnessError(`arm ${arm}: cannot start ${p.command}: ${err.message}`, { exitCode: 2, hint: 'check command and cwd' })),
    );
    this.child.once(
      'exit',
      (code, signal) =>
        void this.stderr
          .settled()
          .then(() =>
            this.fail(new HarnessError(`arm ${arm}: ${p.command} exited (${signal ?? `code ${code}`}) with requests unanswered${this.stderr.describe()}`)),
          ),
    );
    this.stderr = new BoundedStderr(this.child.stderr, `${arm} (stderr)`, ctx.log);
    let lineNo = 0;
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      lineNo++;
      if (line.trim() === '') return;
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        // The line is not quoted: it may hold document text.
        return this.fail(
          new HarnessError(`arm ${arm}: stdout line ${lineNo} is not JSON; the program must write only JSONL answers on stdout (logs go to stderr)`),
        );
      }
      const id = (msg as { id?: unknown } | null)?.id;
      const waiting = typeof id === 'number' ? this.pending.get(id) : undefined;
      if (!waiting) return this.fail(new HarnessError(`arm ${arm}: stdout line ${lineNo} answers no open request (id ${JSON.stringify(id)})`));
      this.pending.delete(id as number);
      clearTimeout(waiting.timer);
      const error = (msg as { error?: unknown }).error;
      if (error !== undefined) waiting.reject(new HarnessError(`arm ${arm}: the program answered request ${id} with an error: ${String(error).slice(0, 300)}`));
      else waiting.resolve(msg as Record<string, unknown>);
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const [, w] of this.pending) {
      clearTimeout(w.timer);
      w.reject(this.failure);
    }
    this.pending.clear();
  }

  request(body: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((res, rej) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        rej(
          new HarnessError(`arm ${this.arm}: no answer to ${String(body['op'])} request ${id} within ${timeoutMs} ms`, {
            hint: 'raise the arm param timeoutMs',
          }),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve: res, reject: rej, timer });
      this.child.stdin.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    const killer = setTimeout(() => this.child.kill('SIGTERM'), 5000);
    await this.exited;
    clearTimeout(killer);
  }
}

/**
 * `results` of a search answer as hits; anything else is a protocol error naming the request. A result has a
 * docId, or (with `textMatch` set) a text, or both.
 */
function resultsOf(arm: string, msg: Record<string, unknown>, texts: boolean): RemoteHit[] {
  const results = msg['results'];
  if (!Array.isArray(results)) throw new HarnessError(`arm ${arm}: answer ${String(msg['id'])} has no "results" array`);
  return results.map((r, i) => {
    const { docId, score, text } = (r ?? {}) as { docId?: unknown; score?: unknown; text?: unknown };
    const hasText = texts && typeof text === 'string';
    if ((typeof docId !== 'string' && !hasText) || typeof score !== 'number' || !Number.isFinite(score)) {
      const shape = texts ? '{ "docId": string and/or "text": string, "score": finite number }' : '{ "docId": string, "score": finite number }';
      throw new HarnessError(`arm ${arm}: answer ${String(msg['id'])} result ${i + 1} is not ${shape}`);
    }
    return { ...(typeof docId === 'string' ? { docId } : {}), ...(hasText ? { text } : {}), score };
  });
}

/**
 * `command`: any program, in any language, that answers JSONL requests on stdin with JSONL answers on stdout
 * (docs/arms/command-protocol.md). Started once per ablation, it is sent each scope's documents (unless
 * `index: false`) and then that scope's queries.
 */
export const commandArm: ArmFactory<typeof params> = {
  kind: 'command',
  summary: 'a program speaking JSONL on stdin/stdout (index and search requests); any language',
  params,
  resolvePaths: (p, dir) => (p.cwd === undefined ? p : { ...p, cwd: isAbsolute(p.cwd) ? p.cwd : resolve(dir, p.cwd) }),
  // v2: the store check decides whether a run is written at all.
  fingerprint: (p) => ({
    kind: 'command',
    v: 2,
    command: p.command,
    args: p.args,
    index: p.index,
    storeCheck: p.index ? p.storeCheck : null,
    version: p.version ?? null,
    scopePrefix: p.scopePrefix,
    ...(p.textMatch === undefined ? {} : { textMatch: p.textMatch }),
  }),
  theoreticalMinScore: () => undefined,
  sendsTextOffMachine: (p) => !p.local && p.index,
  create(id, p, ctx): Arm {
    let proc: JsonlProcess | undefined;
    let scope = '';
    const ranker = new HitRanker(p.textMatch);
    const search = async (query: Query, topK: number): Promise<readonly ScoredDoc[]> => {
      if (!proc) throw new HarnessError(`arm ${id}: search before index`);
      const answer = await proc.request({ op: 'search', scope, query: { id: query.id, text: query.text, stratum: query.stratum }, topK }, p.timeoutMs);
      return ranker.rank(resultsOf(id, answer, p.textMatch !== undefined));
    };
    return {
      id,
      concurrency: p.concurrency,
      async index(corpus: Corpus): Promise<IndexStats> {
        const running = (proc ??= new JsonlProcess(id, p, ctx));
        scope = scopeName(p.scopePrefix, corpus);
        ranker.index(corpus);
        if (!p.index) return { documents: corpus.length };
        refuseSensitive(id, `${p.command} (local: false)`, corpus, p.local);
        const answer = await running.request({ op: 'index', scope, documents: corpus.map(wireDocument) }, Math.min(p.timeoutMs * 10, MAX_TIMER_MS));
        const stats: Record<string, number> = {};
        for (const [k, v] of Object.entries((answer['stats'] as Record<string, unknown> | undefined) ?? {}))
          if (typeof v === 'number' && Number.isFinite(v)) stats[k] = v;
        const check = await runStoreCheck(id, corpus, p.storeCheck, p.concurrency, search, ctx.log);
        ranker.reset();
        return { ...stats, ...check, documents: corpus.length };
      },
      search,
      searchStats: () => ranker.stats() ?? {},
      async close() {
        await proc?.close();
      },
    };
  },
};

/** A document as an index request carries it (docs/arms/command-protocol.md). */
function wireDocument(d: Corpus[number]): Record<string, unknown> {
  return {
    id: d.id,
    text: d.text,
    ...(d.title === undefined ? {} : { title: d.title }),
    ...(d.timestamp === undefined ? {} : { timestamp: d.timestamp }),
    ...(d.metadata === undefined ? {} : { metadata: d.metadata }),
  };
}
