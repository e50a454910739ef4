/**
 * The goal lines of issue 30, collected from what the benchmarks print (`goal 30.N (...): ...: MET|MISSED`)
 * so that one run of `npm run bench` ends with every goal in one place. A goal no benchmark printed is listed
 * as such, never as met.
 */

const GOAL_LINE = /^\s*(goal 30\.(\d+)\b.*)$/;
const GOALS = 8;

/** Tees every line written to `stream` that starts with `goal 30.` into a list, in the order printed. */
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
      if (m) seen.push(m[1]!);
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof stream.write;
  return { lines: () => seen };
}

/** The summary: each goal's lines, then goals without a line ("not printed": its benchmark did not run or skipped it). */
export function summariseGoals(lines: readonly string[], all: boolean): string {
  const out: string[] = [...lines];
  const printed = new Set(lines.map((l) => Number(GOAL_LINE.exec(l)![2])));
  for (let g = 1; g <= GOALS; g++) {
    if (!printed.has(g)) out.push(`goal 30.${g}: not printed by ${all ? 'any benchmark (skipped: see above)' : 'the benchmarks selected'}: MISSED`);
  }
  const met = out.filter((l) => /: MET\s*$/.test(l)).length;
  out.push(`${met} of ${out.length} goal lines MET`);
  return `${out.join('\n')}\n`;
}
