#!/usr/bin/env node
// ONNX Runtime (the local dense arms) writes telemetry files (.ses, mat-debug-<pid>.log) into the temp dir unless
// this is set. It reads the process environment, which worker threads share only when the main thread sets it.
process.env['ORT_DISABLE_TELEMETRY'] ??= '1';
const argv = process.argv.slice(2);
// `harness eval` skips yargs when it can (eval-fast.ts): start-up is a large part of a small evaluation.
const fast = argv.includes('eval') ? await (await import('./eval-fast.js')).runEvalFastCommandLine(argv) : undefined;
// Exit code set, never process.exit(): pending stdout writes flush before Node exits.
process.exitCode = fast ?? (await (await import('./main.js')).runCli(argv));
