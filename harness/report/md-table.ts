/**
 * Markdown tables narrow enough for a code host (GitHub, GitLab) to show without a sideways scroll. Such a
 * host wraps a cell at its spaces but never inside a word, so what makes a table scroll is its number of
 * columns and its longest words. A table past either limit is split into several that repeat its key columns.
 */

/** Most columns one Markdown table holds, key columns included. */
export const MD_MAX_COLUMNS = 9;
/** Most characters of narrowest width (each column's longest word, plus padding) one Markdown table holds. */
export const MD_MAX_WIDTH = 100;
/** Padding and border a column adds to its longest word, in characters. */
const COLUMN_PAD = 3;

/** Superscripts are set smaller: their characters count this much of a full one. */
const SUP_SHARE = 0.6;

/**
 * The longest unbreakable piece of a Markdown cell as it reads once rendered (bold, code ticks and escapes
 * dropped, superscripts at their smaller size), in characters. A browser breaks lines at spaces and after a
 * hyphen before a letter (`cc-minmax`), never elsewhere inside a word.
 */
export function longestWord(cell: string): number {
  const shown = cell.replace(/\*\*|`/g, '').replace(/\\(.)/g, '$1');
  const words = shown.split(/\s+|(?<=[a-z]-)(?=[a-z])/i);
  return Math.max(
    0,
    ...words.map((w) => {
      const sup = [...w.matchAll(/<sup>(.*?)<\/sup>/g)].reduce((n, m) => n + [...(m[1] as string)].length, 0);
      return [...w.replace(/<\/?sup>/g, '')].length - sup * (1 - SUP_SHARE);
    }),
  );
}

/**
 * The columns of each table a wide table splits into: the key columns first in each, then the rest in parts
 * as even as the limits allow (a 10-column table becomes two halves, not nine columns and one).
 */
export function splitColumns(widths: readonly number[], keyColumns: number): number[][] {
  const keys = Array.from({ length: Math.min(keyColumns, widths.length) }, (_, i) => i);
  const greedy = fill(widths, keys, MD_MAX_COLUMNS - keys.length);
  if (greedy.length < 2) return greedy;
  const even = fill(widths, keys, Math.ceil((widths.length - keys.length) / greedy.length));
  return even.length === greedy.length ? even : greedy;
}

/** Key columns, then at most `perPart` more per table while the width allows. */
function fill(widths: readonly number[], keys: readonly number[], perPart: number): number[][] {
  const keyWidth = keys.reduce((s, c) => s + (widths[c] as number), 0);
  const parts: number[][] = [];
  let current: number[] = [];
  let width = keyWidth;
  for (let c = keys.length; c < widths.length; c++) {
    const w = widths[c] as number;
    if (current.length > 0 && (current.length + 1 > perPart || width + w > MD_MAX_WIDTH)) {
      parts.push(current);
      current = [];
      width = keyWidth;
    }
    current.push(c);
    width += w;
  }
  if (current.length > 0 || parts.length === 0) parts.push(current);
  return parts.map((p) => [...keys, ...p]);
}

/** The fewest leading columns (at most 3) that tell every row apart, so each part of a split table still names its rows. */
function namingColumns(rows: readonly (readonly string[])[]): number {
  for (let k = 1; k < 3; k++) if (new Set(rows.map((r) => r.slice(0, k).join('\u0000'))).size === rows.length) return k;
  return 3;
}

const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/**
 * Lines of a Markdown table whose cells are already escaped, split into several tables (a blank line between)
 * when it is wider than a code host shows; each repeats the first `keyColumns` columns (by default, as many as
 * name a row) so its rows can be told apart.
 */
export function mdTable(
  head: readonly string[],
  align: readonly ('l' | 'r')[],
  rows: readonly (readonly string[])[],
  keyColumns = namingColumns(rows),
): string[] {
  const widths = head.map((h, c) => Math.max(longestWord(h), ...rows.map((r) => longestWord(r[c] ?? ''))) + COLUMN_PAD);
  return splitColumns(widths, keyColumns).flatMap((cols, i) => [
    ...(i > 0 ? [''] : []),
    row(cols.map((c) => head[c] as string)),
    row(cols.map((c) => (align[c] === 'r' ? '--:' : '---'))),
    ...rows.map((r) => row(cols.map((c) => r[c] ?? ''))),
  ]);
}
