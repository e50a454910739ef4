import { defineCommand } from './io.js';

export const measuresCommand = defineCommand({
  command: 'measures',
  describe: 'List the measures: canonical names, the other names accepted for them, their trec_eval spelling, and presets',
  builder: (y) =>
    y
      .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'text for people, json for tools' })
      .example('$0 measures', 'every measure, with its aliases and trec_eval -m spelling'),
  async run(args, io) {
    const { describeMeasures, measureAliases, parseMeasure, trecEvalSpelling } = await import('../metrics/measure.js');
    const { measurePresets } = await import('../metrics/presets.js');
    const rows = describeMeasures().map((d) => ({
      name: d.name,
      examples: d.examples,
      params: d.params,
      describe: d.describe,
      aliases: measureAliases(d.name),
      trecEval: d.examples.map((e) => {
        const t = trecEvalSpelling(parseMeasure(e));
        return t === undefined ? undefined : `${t.level === undefined ? '' : `-l ${t.level} `}-m ${t.measure}`;
      }),
    }));
    if (args.format === 'json') {
      io.out(`${JSON.stringify({ measures: rows, presets: measurePresets }, null, 2)}\n`);
      return;
    }
    const lines = [
      'Measures, in their canonical spelling (reports, CSV columns and configs print these). Write parameters as',
      "Name(param=value)@cutoff, e.g. P(rel=2)@5, nDCG(gain=exp)@10. Other tools' names are read as the same measure",
      'and printed canonically: ir_measures (MAP, MRR, NDCG), BEIR (NDCG@10, Recall@100, MRR@10), trec_eval value',
      'names (P_5, ndcg_cut_10), MTEB (ndcg_at_10), any case.',
      '',
    ];
    for (const r of rows) {
      lines.push(`${r.examples.join(' | ')}${r.params.length ? `  (params: ${r.params.join(', ')})` : ''}`);
      lines.push(`    ${r.describe}`);
      const trec = r.examples.map((e, i) => `${e}: ${r.trecEval[i] ?? 'none'}`).join('; ');
      lines.push(`    trec_eval (harness eval): ${trec}`);
      if (r.aliases.length) lines.push(`    also accepted: ${r.aliases.join(', ')}`);
    }
    lines.push('', "Presets (a name in a config's measures: expands to its list):");
    for (const [name, list] of Object.entries(measurePresets)) lines.push(`  ${name}: ${list.join(', ')}`);
    io.out(`${lines.join('\n')}\n`);
  },
});
