import { defineCommand } from './io.js';

export const initCommand = defineCommand({
  command: 'init [dir]',
  describe: 'Scaffold a private study in a folder: a config with lexical arms, a sample memory store under data/ (git-ignored), the next commands',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', default: '.', describe: 'study folder, created if missing; must not hold a harness config' })
      .option('name', { type: 'string', describe: "the config's name: (report folder <name>-<configHash8>); default the folder's name" })
      .example('$0 init my-study', 'my-study/study.yaml, my-study/data/store/ (a sample store), my-study/.gitignore')
      .example('$0 init my-study && $0 ablate --config my-study/study.yaml', 'scaffold and run: the report goes to my-study/data/reports/'),
  async run(args, io) {
    const { initStudy, formatStudy } = await import('../init/study.js');
    const result = initStudy(args.dir, { cwd: io.cwd, ...(args.name === undefined ? {} : { name: args.name }) });
    io.out(formatStudy(result, io.cwd));
  },
});
