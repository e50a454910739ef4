import { UsageError } from '../errors.js';
import { defineCommand } from './io.js';

export const datasetsCommand = defineCommand({
  command: 'datasets <action> [name]',
  describe: 'List the public eval sets the harness knows, or fetch one (resumable, checksum-verified)',
  builder: (y) =>
    y
      .positional('action', { choices: ['list', 'get'] as const, demandOption: true, describe: 'list the catalog, or get NAME' })
      .positional('name', { type: 'string', describe: 'dataset name (see `harness datasets list`)' })
      .option('dir', { type: 'string', describe: 'where datasets are stored (default data/datasets, gitignored)' })
      .option('from', { type: 'string', describe: 'import this local copy instead of downloading (checksum still checked)' })
      .option('base-url', { type: 'string', describe: 'fetch <base-url>/<file> instead of the catalog URL (env HARNESS_DATASETS_BASE_URL)' })
      .option('connect-timeout', { type: 'number', describe: 'seconds to open a connection (default 10)' })
      .option('idle-timeout', { type: 'number', describe: 'seconds of silence allowed once connected (default 20)' })
      .example('$0 datasets get locomo', '')
      .example('$0 datasets get longmemeval-m', '2.7 GB at a pinned revision, sha256 and size checked; loaded as a stream')
      .example('$0 datasets get nfcorpus --from ~/Downloads/nfcorpus.zip', ''),
  async run(args, io) {
    const { BASE_URL_ENV, DEFAULT_DATASETS_DIR, describeVerification, formatCatalog, getDataset } = await import('../../evalset/datasets/get.js');
    const { resolve } = await import('node:path');
    if (args.action === 'list') {
      io.out(formatCatalog());
      return;
    }
    if (args.name === undefined) throw new UsageError('datasets get needs a NAME', { hint: 'see `harness datasets list`' });
    const baseUrl = args.baseUrl ?? io.env[BASE_URL_ENV];
    if (baseUrl !== undefined) {
      const { urlCredentialProblem } = await import('../util/redact.js');
      // Refused as everywhere else (ADR 0035): a credential in a URL reaches shell history, logs and process lists.
      const problem = urlCredentialProblem(baseUrl, 'give the mirror a URL without credentials (one that needs them is not supported)');
      if (problem !== undefined) throw new UsageError(`${args.baseUrl === undefined ? BASE_URL_ENV : '--base-url'} ${problem}`);
    }
    const { MAX_TIMER_MS } = await import('../../arms/remote/limits.js');
    const seconds = (flag: string, v: number | undefined) => {
      if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new UsageError(`--${flag} must be a positive number of seconds, got ${v}`);
      // Both arm Node.js timers, and a longer one than a timer keeps would fire after 1 ms.
      if (v !== undefined && v * 1000 > MAX_TIMER_MS)
        throw new UsageError(`--${flag}: must be at most ${MAX_TIMER_MS / 1000} (about 24.8 days), the longest timer Node.js can set`);
      return v === undefined ? undefined : v * 1000;
    };
    const connectTimeoutMs = seconds('connect-timeout', args.connectTimeout);
    const idleTimeoutMs = seconds('idle-timeout', args.idleTimeout);
    const r = await getDataset(args.name, {
      dir: resolve(io.cwd, args.dir ?? DEFAULT_DATASETS_DIR),
      log: io.log,
      ...(args.from === undefined ? {} : { from: resolve(io.cwd, args.from) }),
      ...(baseUrl === undefined ? {} : { baseUrl }),
      timeouts: { ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }), ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }) },
    });
    io.out(
      [
        `${r.entry.name}: ${r.source === 'present' ? 'already present' : r.source === 'import' ? 'imported' : 'downloaded'} ${r.file}`,
        `  ${describeVerification(r)}`,
        `  licence: ${r.entry.license}`,
        `  use: harness evalset inspect --format ${r.entry.format} --path ${r.evalsetPath}`,
        '',
      ].join('\n'),
    );
  },
});
