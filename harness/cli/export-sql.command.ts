import type { ExportedFusion, FtsPairExport } from '../../arms/postgres/export.js';
import { defineCommand } from './io.js';

export const exportSqlCommand = defineCommand({
  command: 'export-sql',
  describe: 'Print a fusion of a report (tuned or declared) over two postgres arms as the SQL statement to deploy',
  builder: (y) =>
    y
      .option('report', { type: 'string', demandOption: true, describe: 'report folder holding report.json' })
      .option('system', { type: 'string', demandOption: true, describe: 'the fusion (or <group>.tuned) to export' })
      .example('$0 export-sql --report reports/example-postgres-1a2b3c4d --system rrf.pg-fts+pg-exact', ''),
  async run(args, io) {
    const { readFile } = await import('node:fs/promises');
    const { join, resolve } = await import('node:path');
    const { UsageError } = await import('../errors.js');
    const { exportFromReport } = await import('../../arms/postgres/export.js');
    const file = join(resolve(io.cwd, args.report), 'report.json');
    const text = await readFile(file, 'utf8').catch((err: Error) => {
      throw new UsageError(`cannot read ${file}: ${err.message}`, { hint: 'give --report the folder harness ablate wrote' });
    });
    let runs: unknown;
    try {
      runs = (JSON.parse(text) as { runs?: unknown } | null)?.runs;
    } catch (err) {
      throw new UsageError(`${file} is not JSON: ${(err as Error).message}`, { hint: 'give --report a folder harness ablate wrote, its report.json unedited' });
    }
    if (!Array.isArray(runs)) throw new UsageError(`${file}: no runs array`, { hint: 'give --report a folder harness ablate wrote' });
    const out = exportFromReport(runs as Parameters<typeof exportFromReport>[0], args.system);
    io.out(
      [
        ...(out.ftsPair ? ftsPairHead(out.system, out.ftsPair) : hybridHead(out.system, out.hybrid)),
        ...out.settings.map((s) => `${s};`),
        `${out.sql};`,
        '',
      ].join('\n'),
    );
  },
});

/** The comment lines above a full-text and vector statement: the arm params that compute it, its binds, its table. */
function hybridHead(system: string, hybrid: ExportedFusion['hybrid']): string[] {
  return [
    `-- ${system}: ${JSON.stringify(hybrid)} (postgres arm ranking: hybrid, params.hybrid)`,
    '-- binds: $1 query text, $2 entries read per list, $3 query vector (pgvector text), $4 topK;',
    '-- replace harness_scratch.docs (id, tsv, emb) with your table. In the same transaction first:',
  ];
}

/** The comment lines above two full-text rankings' statement: what it fuses, its binds, its table and how each tsvector column is built. */
function ftsPairHead(system: string, pair: FtsPairExport): string[] {
  const names = pair.columns.map((c) => c.name).join(', ');
  return [
    `-- ${system}: ${JSON.stringify(pair.fusion)} (two full-text rankings of one table; no postgres arm ranking computes it)`,
    '-- binds: $1 query text, $2 entries read per list, $3 topK;',
    `-- replace harness_scratch.docs (id, ${names}) with your table, each tsvector column built from title and text as:`,
    ...pair.columns.map((c) => `--   ${c.name} = ${c.definition}`),
  ];
}
