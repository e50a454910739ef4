import type { CommandSpec } from './io.js';
import { evalCommand } from './eval.command.js';
import { ablateCommand } from './ablate.command.js';
import { armsCommand } from './arms.command.js';
import { evalsetCommand } from './evalset.command.js';
import { datasetsCommand } from './datasets.command.js';
import { adrCommand } from './adr.command.js';
import { compareCommand } from './compare.command.js';
import { reportCommand } from './report.command.js';
import { measuresCommand } from './measures.command.js';
import { cacheCommand } from './cache.command.js';
import { judgeCommand } from './judge.command.js';
import { kappaCommand } from './kappa.command.js';
import { initCommand } from './init.command.js';
import { powerCommand } from './power.command.js';
import { exportSqlCommand } from './export-sql.command.js';
import { modelsCommand } from './models.command.js';

/** Every verb of the CLI, in `--help` order. One line per command module. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds factories of different param types; each entry is checked by `satisfies` against its own
export const commands: readonly CommandSpec<any>[] = [
  ablateCommand,
  adrCommand,
  armsCommand,
  cacheCommand,
  compareCommand,
  datasetsCommand,
  evalCommand,
  evalsetCommand,
  exportSqlCommand,
  initCommand,
  judgeCommand,
  kappaCommand,
  measuresCommand,
  modelsCommand,
  powerCommand,
  reportCommand,
];
