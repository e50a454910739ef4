import type { JudgeConfig } from '../config/judge.js';
import type { CliIo } from './io.js';
import { defineCommand } from './io.js';
import { jobsOption, parseJobs, refreshIds, refreshOption } from './plan-args.js';

/** The parsed flags of `harness judge`. */
interface JudgeArgs {
  readonly config?: string | undefined;
  readonly runs?: readonly string[] | undefined;
  readonly evalset?: string | undefined;
  readonly format: string;
  readonly out?: string | undefined;
  readonly cache?: string | undefined;
  readonly all: boolean;
  readonly jobs: string;
  readonly refresh?: readonly unknown[] | undefined;
  readonly audit: boolean;
  readonly status: boolean;
}

/** Judge settings: the config's judge: block (or none) under the flags, validated; problems name `source`. */
type Settings = (base: Record<string, unknown>, source: string) => JudgeConfig;

/** The flags that set a judge: key, by key, with the name yargs parses each into. */
const JUDGE_FLAGS: Readonly<Record<string, { readonly flag: string; readonly arg: string }>> = {
  depth: { flag: 'depth', arg: 'depth' },
  model: { flag: 'model', arg: 'model' },
  baseURL: { flag: 'base-url', arg: 'baseUrl' },
  apiKeyEnv: { flag: 'api-key-env', arg: 'apiKeyEnv' },
  local: { flag: 'local', arg: 'local' },
  samples: { flag: 'samples', arg: 'samples' },
  concurrency: { flag: 'concurrency', arg: 'concurrency' },
  maxConcurrency: { flag: 'max-concurrency', arg: 'maxConcurrency' },
  provider: { flag: 'provider', arg: 'provider' },
  batch: { flag: 'batch', arg: 'batch' },
  maxRetries: { flag: 'max-retries', arg: 'maxRetries' },
  timeoutMs: { flag: 'timeout-ms', arg: 'timeoutMs' },
};

/**
 * The flags laid over a judge: block and validated. A bad value a flag gave is a usage error naming the flag
 * (`--timeout-ms: ...`), since the config does not hold it; a bad value of the block names `judge.<key>`.
 */
async function judgeSettings(args: Record<string, unknown>): Promise<Settings> {
  const { ConfigError, UsageError } = await import('../errors.js');
  const { judgeConfigSchema } = await import('../config/judge.js');
  const flags = Object.fromEntries(Object.entries(JUDGE_FLAGS).flatMap(([key, f]) => (args[f.arg] === undefined ? [] : [[key, args[f.arg]]])));
  // The flag that set the value at `path`, if one did.
  const flagOf = (path: readonly PropertyKey[]): string | undefined =>
    path[0] === 'audit'
      ? path[1] === 'pairs' && args['auditPairs'] !== undefined
        ? 'audit-pairs'
        : undefined
      : String(path[0]) in flags
        ? JUDGE_FLAGS[String(path[0])]?.flag
        : undefined;
  return (base, source) => {
    const audit = args['auditPairs'] === undefined ? {} : { audit: { ...((base['audit'] as object | undefined) ?? {}), pairs: args['auditPairs'] } };
    // `--batch` turns the batch API on and keeps the block's batch settings when it has some; `--poll-seconds` sets one.
    const blockBatch = typeof base['batch'] === 'object' && base['batch'] !== null ? (base['batch'] as object) : undefined;
    const poll = args['pollSeconds'];
    const keepBatch =
      poll !== undefined ? { batch: { ...blockBatch, pollSeconds: poll } } : flags['batch'] === true && blockBatch !== undefined ? { batch: blockBatch } : {};
    const r = judgeConfigSchema.safeParse({ ...base, ...flags, ...audit, ...keepBatch });
    if (r.success) return r.data;
    const fromFlag = r.error.issues.filter((i) => flagOf(i.path) !== undefined);
    if (fromFlag.length > 0) throw new UsageError(fromFlag.map((i) => `--${flagOf(i.path)}: ${i.message}`).join('; '));
    throw new ConfigError(
      source,
      r.error.issues.map((i) => `judge.${i.path.join('.')}: ${i.message}`),
    );
  };
}

export const judgeCommand = defineCommand({
  command: 'judge',
  describe: 'Pool the top-k of every system and have an LLM judge (0-3, UMBRELA-style) grade the pairs no qrels grade',
  builder: (y) =>
    y
      .option('config', {
        type: 'string',
        describe: 'ablation config: pools every system; judge settings from its judge: block, output to its judgments:',
        conflicts: 'runs',
      })
      .option('runs', { type: 'string', array: true, describe: 'TREC run files to pool instead of a config (with --evalset and --out)' })
      .option('evalset', { type: 'string', describe: 'eval-set folder or file the runs answer (with --runs)' })
      .option('format', { type: 'string', default: 'memory', describe: 'eval-set format (with --runs)' })
      .option('out', { type: 'string', describe: "judgments folder (overrides the config's judgments:)" })
      .option('depth', { type: 'number', describe: 'pool depth: top-k documents of every run per query (default 10)' })
      .option('model', { type: 'string', describe: 'judge model' })
      .option('provider', {
        type: 'string',
        choices: ['openai', 'anthropic'],
        describe: 'who serves the judge model (default openai: any OpenAI-compatible server)',
      })
      .option('base-url', {
        type: 'string',
        describe: 'OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1; for anthropic the server root',
      })
      .option('api-key-env', {
        type: 'string',
        describe: "environment variable holding the API key (default the provider's: OPENAI_API_KEY, ANTHROPIC_API_KEY)",
      })
      .option('local', { type: 'boolean', describe: 'the server is local: sensitive documents may be sent to it' })
      .option('samples', { type: 'number', describe: 'replies per pair, majority vote (ties to the lower grade)' })
      .option('concurrency', { type: 'number', describe: 'requests in flight at the start' })
      .option('max-concurrency', { type: 'number', describe: 'requests in flight the rate limiter may raise to while the server keeps up' })
      .option('batch', {
        type: 'boolean',
        describe: "send the pairs through the provider's batch API (half the price); the same command again resumes the batches, never resubmitting",
      })
      .option('poll-seconds', { type: 'number', describe: 'seconds between two polls of a batch (default 30; implies --batch)' })
      .option('status', { type: 'boolean', default: false, describe: "show the judge's batches (pending, ended, failed) and exit" })
      .option('max-retries', { type: 'number', describe: 'retries of a request on 408, 409, 429, 5xx and connection errors (default 4)' })
      .option('timeout-ms', { type: 'number', describe: 'milliseconds one attempt may take, to the last byte of the reply (default 120000)' })
      .option('all', { type: 'boolean', default: false, describe: 'also judge pairs gold already grades (to measure the judge against gold)' })
      .option('audit', {
        type: 'boolean',
        default: false,
        describe: 're-grade a sample of the judged pairs with probes (keyword stuffing, an injected instruction, length padding) instead of judging',
      })
      .option('audit-pairs', { type: 'number', describe: 'pairs per probe in --audit (default 50)' })
      .option('cache', { type: 'string', describe: "cache folder (default the config's cache:, else .cache)" })
      .option('jobs', { ...jobsOption, default: '1', describe: `(with --config) ${jobsOption.describe}` })
      .option('refresh', { ...refreshOption, describe: `(with --config) ${refreshOption.describe}` })
      .example('$0 judge --config configs/example-judged.yaml', 'judge the pool of every system of the ablation')
      .example('$0 judge --runs a.trec b.trec --evalset data/store --depth 10 --model m --base-url http://127.0.0.1:8080/v1 --local --out data/judgments', ''),
  async run(args, io) {
    const settings = await judgeSettings(args);
    if (args.auditPairs !== undefined && !args.audit) throw new (await import('../errors.js')).UsageError('--audit-pairs goes with --audit');
    if (args.status) await statusCommand(args, io, settings);
    else if (args.audit) await auditCommand(args, io, settings);
    else if (args.config !== undefined) await judgeAblation({ ...args, config: args.config }, io, settings);
    else await judgeRunFiles(args, io, settings);
  },
});

/** `--config`: the pool of every system of the ablation, its runs from the one plan entry (probed, from the run cache). */
async function judgeAblation(args: JudgeArgs & { readonly config: string }, io: CliIo, settings: Settings): Promise<void> {
  const { resolve, relative } = await import('node:path');
  const { UsageError } = await import('../errors.js');
  const { runJudge, ablationRuns, evalsetProvenance, formatJudgeSummary } = await import('../judge/run.js');
  const { loadConfig } = await import('../config/load.js');
  const { loadConfiguredEvalSet } = await import('../ablate/scopes.js');
  const jobs = parseJobs(args.jobs);
  const cfg = loadConfig(args.config, { env: io.env, cwd: io.cwd, ...(args.cache === undefined ? {} : { cache: args.cache }) });
  const refresh = refreshIds(args.refresh, cfg, io.cwd);
  const shown = relative(io.cwd, cfg.file) || cfg.file;
  const out = args.out !== undefined ? resolve(io.cwd, args.out) : cfg.judgments;
  if (out === undefined) throw new UsageError(`${shown} has no judgments: folder; add one or pass --out`);
  const judge = settings({ ...(cfg.judge ?? {}) }, shown);
  // Judge the gold eval set's pool: the config may already read judged qrels, which must not feed themselves.
  const es = await loadConfiguredEvalSet(cfg, io.log);
  const { runs, returned } = await ablationRuns(cfg, es, io.log, io.env, { jobs, ...(refresh.length > 0 ? { refresh } : {}) });
  const evalset = evalsetProvenance(es, cfg.evalset.format, cfg.evalset.path, out, cfg.evalset.split);
  const job = { es, evalset, evalsetDir: cfg.evalset.path, runs, returned, judge, out, cache: cfg.cache, all: args.all, source: shown };
  const summary = await runJudge(job, io.log, io.env);
  io.out(`${formatJudgeSummary(summary, relative(io.cwd, out) || out)}\n`);
}

/**
 * `--status`: the batches the judge's endpoint submitted from this cache, as its ledger records them, each polled
 * once when the key is there (without it, the ledger alone). Reads nothing else and judges nothing.
 */
async function statusCommand(args: JudgeArgs, io: CliIo, settings: Settings): Promise<void> {
  const { resolve, relative } = await import('node:path');
  const { judgeEndpoint } = await import('../judge/run.js');
  const { batchApiOf } = await import('../llm/client.js');
  const { describeLedger } = await import('../llm/ledger.js');
  const { batchLedgerDir } = await import('../config/llm-endpoint.js');
  let judge: JudgeConfig;
  let cache: string;
  let source: string;
  if (args.config !== undefined) {
    const { loadConfig } = await import('../config/load.js');
    const cfg = loadConfig(args.config, { env: io.env, cwd: io.cwd, ...(args.cache === undefined ? {} : { cache: args.cache }) });
    source = relative(io.cwd, cfg.file) || cfg.file;
    judge = settings({ ...(cfg.judge ?? {}) }, source);
    cache = cfg.cache;
  } else {
    source = 'harness judge flags';
    judge = settings({}, source);
    cache = resolve(io.cwd, args.cache ?? '.cache');
  }
  const ep = judgeEndpoint({ ...judge, batch: judge.batch === false ? true : judge.batch }, cache);
  const api = await batchApiOf(ep, io.env, source, 'judge').catch(() => undefined);
  if (api === undefined) io.log.info(`judge --status: ${ep.apiKeyEnv} is not set: showing the ledger only, without asking the provider`);
  const lines = await describeLedger(batchLedgerDir(cache, 'judge'), ep, api);
  io.out(`${lines.join('\n')}\n`);
}

/** `--audit`: the judgments folder of `--config` (or `--out` over `--evalset`) re-graded with probes; no run is needed. */
async function auditCommand(args: JudgeArgs, io: CliIo, settings: Settings): Promise<void> {
  const { resolve, relative } = await import('node:path');
  const { UsageError } = await import('../errors.js');
  const { runAudit } = await import('../judge/audit-run.js');
  const { formatAudit } = await import('../judge/audit.js');
  if (args.runs !== undefined) throw new UsageError('--audit re-grades judgments already made: give --config C, or --evalset E --out J, without --runs');
  let job: Parameters<typeof runAudit>[0];
  if (args.config !== undefined) {
    const { loadConfig } = await import('../config/load.js');
    const { loadConfiguredEvalSet } = await import('../ablate/scopes.js');
    const cfg = loadConfig(args.config, { env: io.env, cwd: io.cwd, ...(args.cache === undefined ? {} : { cache: args.cache }) });
    const shown = relative(io.cwd, cfg.file) || cfg.file;
    const out = args.out !== undefined ? resolve(io.cwd, args.out) : cfg.judgments;
    if (out === undefined) throw new UsageError(`${shown} has no judgments: folder; add one or pass --out`);
    job = { es: await loadConfiguredEvalSet(cfg, io.log), out, judge: settings({ ...(cfg.judge ?? {}) }, shown), cache: cfg.cache, source: shown };
  } else {
    if (args.evalset === undefined || args.out === undefined)
      throw new UsageError('--audit needs --config C, or --evalset E with --out J (the judgments folder)');
    const { loadEvalSet } = await import('../../evalset/load.js');
    const es = await loadEvalSet({ format: args.format, path: resolve(io.cwd, args.evalset), source: '--evalset' }, io.log);
    job = { es, out: resolve(io.cwd, args.out), judge: settings({}, '--audit'), cache: resolve(io.cwd, args.cache ?? '.cache'), source: 'harness judge flags' };
  }
  io.out(`${formatAudit(await runAudit(job, io.log, io.env))}\n`);
}

/** `--runs`: the pool of TREC run files over an eval set, each run named by its tag. */
async function judgeRunFiles(args: JudgeArgs, io: CliIo, settings: Settings): Promise<void> {
  const { resolve, relative } = await import('node:path');
  const { UsageError } = await import('../errors.js');
  const { runJudge, evalsetProvenance, formatJudgeSummary } = await import('../judge/run.js');
  if (args.runs === undefined || args.runs.length === 0) throw new UsageError('give --config C, or --runs FILE... with --evalset and --out');
  if (args.evalset === undefined || args.out === undefined)
    throw new UsageError('--runs needs --evalset (the eval set the runs answer) and --out (the judgments folder)');
  const { loadEvalSet } = await import('../../evalset/load.js');
  const { readTrecRun } = await import('../../evalset/trec.js');
  const esPath = resolve(io.cwd, args.evalset);
  const es = await loadEvalSet({ format: args.format, path: esPath, source: '--evalset' }, io.log);
  const runs = new Map<string, Awaited<ReturnType<typeof readTrecRun>>['run']>();
  for (const file of args.runs) {
    const { run, runTag } = await readTrecRun(resolve(io.cwd, file));
    const id = runTag === '' ? file : runTag;
    if (runs.has(id)) throw new UsageError(`two runs carry the tag "${id}" (${file}); give each run its own tag`);
    runs.set(id, run);
  }
  const out = resolve(io.cwd, args.out);
  const summary = await runJudge(
    {
      es,
      evalset: evalsetProvenance(es, args.format, esPath, out),
      evalsetDir: esPath,
      runs,
      judge: settings({}, '--runs'),
      out,
      cache: resolve(io.cwd, args.cache ?? '.cache'),
      all: args.all,
      source: 'harness judge flags',
    },
    io.log,
    io.env,
  );
  io.out(`${formatJudgeSummary(summary, relative(io.cwd, out) || out)}\n`);
}
