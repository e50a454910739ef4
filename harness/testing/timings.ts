/**
 * Two runs of the same inputs write the same report folder except for what measures the machine: the
 * manifest's timings, timestamps and cache counts, and the timings in report.json's `costs` block with the
 * Cost section that renders them. Tests that compare folders byte for byte compare them without these.
 */
export function withoutTimings(file: string, text: string): string {
  if (file === 'manifest.json') {
    const { timings: _t, startedAt: _s, finishedAt: _f, cache: _c, systems, ...rest } = JSON.parse(text) as Record<string, unknown>;
    const kept = (systems as Record<string, unknown>[] | undefined)?.map(({ cache: _sc, indexMs: _i, searchMs: _q, ...s }) => s);
    return JSON.stringify({ ...rest, systems: kept });
  }
  if (file === 'report.json') {
    const data = JSON.parse(text) as { costs?: Record<string, Record<string, unknown>> };
    if (data.costs) {
      for (const c of Object.values(data.costs)) for (const k of ['indexMs', 'searchMs', 'queryMsP50', 'queryMsP95']) c[k] = 0;
    }
    return JSON.stringify(data);
  }
  if (file === 'report.md') {
    // Keep the cost table's sizes; blank its three timing columns (index ms, query ms p50, p95).
    // The Cost section sits in the appendix (### Cost), last or before another section.
    return text.replace(/\n#{2,3} Cost\n[\s\S]*?(?=\n#{2,3} |$)/, (section) =>
      section.replace(/^\| (?!system \||---)(.*) \|$/gm, (row) => {
        const cells = row.slice(2, -2).split(' | ');
        for (const i of [2, 3, 4]) if (cells[i] !== undefined) cells[i] = '(timing)';
        return `| ${cells.join(' | ')} |`;
      }),
    );
  }
  if (file === 'report.html') return text.replace(/<h([23])>Cost<\/h\1>[\s\S]*?(?=<h[23][ >]|<\/body>)/, '<h3>Cost (timings)</h3>');
  return text;
}
