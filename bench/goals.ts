/**
 * The goal lines of the issues with benchmark goals, collected from what the benchmarks print
 * (`goal 30.N (...): ...: MET|MISSED`, `goal 44.6 (...): ...`) so that one run of `npm run bench` ends with every
 * goal in one place. A goal no benchmark printed is listed as such, never as met.
 */

const GOAL_LINE = /^\s*(goal (\d+\.\d+)\b.*)$/;
/** Every goal a full run should print: issue 30's eight, and issue 44's item 6 (bench/llm-batch.ts). */
const GOALS: readonly string[] = [...Array.from({ length: 8 }, (_, i) => `30.${i + 1}`), '44.6'];
const KNOWN = new Set(GOALS);

/** Tees every line written to `stream` that starts with one of {@link GOALS} (`goal 30.N`, `goal 44.6`) into a list, in the order printed. */
export function collectGoals(stream: NodeJS.WriteStream): { lines: () => readonly string[] } {
  const seen: string[] = [];
  let partial = '';
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    partial += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const m = GOAL_LINE.exec(line);
      if (m && KNOWN.has(m[2]!)) seen.push(m[1]!);
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof stream.write;
  return { lines: () => seen };
}

/** The summary: each goal's lines, then goals without a line ("not printed": its benchmark did not run or skipped it). */
export function summariseGoals(lines: readonly string[], all: boolean): string {
  const out: string[] = [...lines];
  const printed = new Set(lines.map((l) => GOAL_LINE.exec(l)![2]));
  for (const g of GOALS) {
    if (!printed.has(g)) out.push(`goal ${g}: not printed by ${all ? 'any benchmark (skipped: see above)' : 'the benchmarks selected'}: MISSED`);
  }
  const met = out.filter((l) => /: MET\s*$/.test(l)).length;
  out.push(`${met} of ${out.length} goal lines MET`);
  return `${out.join('\n')}\n`;
}
