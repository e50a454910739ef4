#!/usr/bin/env node
const argv = process.argv.slice(2);
// `harness eval` skips yargs when it can (eval-fast.ts): start-up is a large part of a small evaluation.
const fast = argv.includes('eval') ? await (await import('./eval-fast.js')).runEvalFastCommandLine(argv) : undefined;
// Exit code set, never process.exit(): pending stdout writes flush before Node exits.
process.exitCode = fast ?? (await (await import('./main.js')).runCli(argv));
