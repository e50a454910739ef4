import { defineCommand } from './io.js';

export const reportCommand = defineCommand({
  command: 'report <dir>',
  describe: 'Re-render a report folder (Markdown, CSV, LaTeX, HTML) from its report.json, recomputing nothing',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', demandOption: true, describe: 'report folder holding report.json' })
      .example('$0 report reports/example-1a2b3c4d', 'rewrite report.md, report.html, ... from report.json'),
  async run(args, io) {
    const { resolve } = await import('node:path');
    const { rerenderReport } = await import('../report/write.js');
    const { data, files } = await rerenderReport(resolve(io.cwd, args.dir));
    const verdict = data.decision ? `; gate ${data.decision.headline}` : '';
    io.out(`${args.dir}: rendered ${files.join(', ')} (${data.warnings.length} warning(s)${verdict})\n`);
  },
});
