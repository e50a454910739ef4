import { relative } from 'node:path';
import { defineCommand } from './io.js';
import { jobsOption, parseJobs, refreshIds, refreshOption } from './plan-args.js';

export const ablateCommand = defineCommand({
  command: 'ablate',
  describe: 'Run the systems of an ablation config (arms, fusions, grids) over its eval set and write a report folder',
  builder: (y) =>
    y
      .option('config', { type: 'string', demandOption: true, describe: 'Ablation config (YAML)', group: 'Ablation:' })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'Print the expanded plan (every system, what the cache holds) and run nothing',
        group: 'Ablation:',
      })
      .option('output', { type: 'string', describe: "Folder for the report (overrides the config's output:)", group: 'Ablation:' })
      .option('cache', { type: 'string', describe: "Cache folder (overrides the config's cache:)", group: 'Ablation:' })
      .option('jobs', { ...jobsOption, group: 'Ablation:' })
      .option('verify', { type: 'boolean', default: false, describe: "Check the config's expect: block; exit 1 on FAIL", group: 'Ablation:' })
      .option('refresh', { ...refreshOption, group: 'Ablation:' })
      .option('batch', {
        type: 'boolean',
        default: false,
        describe: "Send the answer reader's and judge's calls through the provider's batch API (half the price; a rerun resumes the batches)",
        group: 'Ablation:',
      })
      .option('gate-exit', {
        type: 'boolean',
        default: false,
        describe: "Exit 3 when the config's gate: says REJECT (for CI); the report is written first",
        group: 'Ablation:',
      })
      .example('$0 ablate --config configs/example.yaml', 'run the bundled example')
      .example('$0 ablate --config configs/nfcorpus-bm25.yaml --verify', 'reproduce the published BM25 figures')
      .example('$0 ablate --config configs/example.yaml --gate-exit', 'fail a CI job when the gate rejects the candidate')
      .example('$0 ablate --config configs/own-system.yaml --refresh own', 'ask your own server again instead of the run cache'),
  async run(args, io) {
    const { loadConfig } = await import('../config/load.js');
    const { ablate, verify, formatVerify } = await import('../ablate/run.js');
    const { ablationSummary } = await import('../ablate/summary.js');
    const { GateExitError, UsageError, VerificationError } = await import('../errors.js');
    const { withDetail } = await import('../log.js');
    const jobs = parseJobs(args.jobs);
    // --verbose is global (main.ts); here it also lets through how each system ran (a worker fallback).
    const log = (args as { verbose?: boolean }).verbose === true ? withDetail(io.log) : io.log;
    const cfg = loadConfig(args.config, {
      env: io.env,
      cwd: io.cwd,
      ...(args.output === undefined ? {} : { output: args.output }),
      ...(args.cache === undefined ? {} : { cache: args.cache }),
    });
    if (args.gateExit && cfg.gate === undefined) {
      throw new UsageError(`--gate-exit: ${relative(io.cwd, cfg.file) || cfg.file} has no gate: block to decide on`, {
        hint: 'add gate: { candidate, measure } to the config',
      });
    }
    const refresh = refreshIds(args.refresh, cfg, io.cwd);
    if (args.dryRun) {
      const { plan } = await import('../ablate/dry-run.js');
      io.out(await plan(cfg, log, io.env));
      return;
    }
    const command = `harness ablate --config ${relative(io.cwd, cfg.file) || cfg.file}`;
    const result = await ablate(cfg, { log, env: io.env, command, jobs, batch: args.batch, ...(refresh.length > 0 ? { refresh } : {}) });
    io.out(ablationSummary(cfg, result, io.cwd));
    if (args.verify) {
      const checks = verify(cfg, result.means);
      if (checks.every((c) => c.status === undefined)) {
        throw new VerificationError(`--verify: ${relative(io.cwd, cfg.file)} has no expect: block to check`);
      }
      io.out(`verify:\n${formatVerify(checks)}\n`);
      const failed = checks.filter((c) => c.status === 'FAIL');
      if (failed.length > 0)
        throw new VerificationError(`--verify: ${failed.length} expectation(s) failed: ${failed.map((f) => `${f.run} ${f.measure}`).join(', ')}`);
    }
    const d = result.decision;
    if (args.gateExit && d !== undefined && d.exitCode !== 0) {
      const { verdictSentence } = await import('../decision/verdict.js');
      throw new GateExitError(verdictSentence(d), d.exitCode, `${relative(io.cwd, result.reportDir) || result.reportDir}/report.md`);
    }
  },
});
