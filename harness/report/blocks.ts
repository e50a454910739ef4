/** A rendering-neutral piece of a report section; Markdown and HTML render the same blocks. */
export type Block =
  | { readonly kind: 'heading'; readonly level: 2 | 3; readonly text: string }
  | { readonly kind: 'para'; readonly text: string; readonly strong?: boolean }
  | { readonly kind: 'list'; readonly items: readonly string[] }
  | {
      readonly kind: 'table';
      readonly head: readonly string[];
      readonly align: readonly ('l' | 'r')[];
      readonly rows: readonly (readonly Cell[])[];
      /** Columns that name a row (1 when absent): repeated in each part when Markdown splits a wide table. */
      readonly keyColumns?: number;
    };
/** A table cell: text, or text shown strong (a flagged value). */
export type Cell = string | { readonly text: string; readonly strong: true };
