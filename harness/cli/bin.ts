#!/usr/bin/env node
import { runCli } from './main.js';

// Exit code set, never process.exit(): pending stdout writes flush before Node exits.
process.exitCode = await runCli(process.argv.slice(2));
