import { defineCommand } from './io.js';

export const adrCommand = defineCommand({
  command: 'adr',
  describe: 'Draft an architecture decision record (docs/adr/NNNN-title.md) from a report folder',
  builder: (y) =>
    y
      .option('report', { type: 'string', demandOption: true, describe: 'report folder holding report.json' })
      .option('title', { type: 'string', demandOption: true, describe: 'decision title; also names the file' })
      .option('adr-dir', { type: 'string', default: 'docs/adr', describe: 'folder of ADRs; the next free number is used' })
      .option('date', { type: 'string', describe: 'date in the front matter, YYYY-MM-DD (default: today, UTC)' })
      .example('$0 adr --report reports/example-1a2b3c4d --title "Fuse BM25 and MiniLM with RRF"', ''),
  async run(args, io) {
    const { relative, resolve } = await import('node:path');
    const { writeAdr } = await import('../report/adr.js');
    const file = await writeAdr({
      reportDir: resolve(io.cwd, args.report),
      adrDir: resolve(io.cwd, args.adrDir),
      title: args.title,
      date: args.date ?? new Date().toISOString().slice(0, 10),
    });
    io.out(`${relative(io.cwd, file) || file}\n`);
  },
});
