import { z } from 'zod';

/**
 * Deviations of a Recipe from its source document (issue 31, docs/adr/0024-reference-recipes.md): every stage or
 * parameter where what runs differs from what the source specifies, or where the source is silent and a value
 * had to be chosen. A config entry lists its own; a system inherits those of its inputs, so a recipe's row names
 * every deviation of every stage under it, and report.json carries them per run.
 */

/** `substitute`: the source specifies X and something else stands in; `assumption`: the source is silent. */
export const DEVIATION_KINDS = ['substitute', 'assumption'] as const;
export type DeviationKind = (typeof DEVIATION_KINDS)[number];

/** Values a `when` condition compares a system's params with: what a grid axis can hold. */
const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const deviationSchema = z
  .object({
    kind: z.enum(DEVIATION_KINDS),
    /** The stage or parameter concerned, as the fidelity table names it (e.g. `blend.recency`). */
    stage: z.string().min(1),
    /** What runs instead and why, in one line: the label a report shows. */
    text: z.string().min(1),
    /**
     * Applies only to the systems of a grid whose params hold these values (`{ recency: 0.2 }`), so each variant
     * of a recipe carries exactly the deviations it makes. Absent: every system of the entry.
     */
    when: z.record(z.string(), scalar).optional(),
  })
  .strict();

/** A deviation as a config entry declares it. */
export type DeviationEntry = z.output<typeof deviationSchema>;

/** A deviation as a planned system and report.json carry it: whose entry declared it, without the condition. */
export interface Deviation {
  readonly kind: DeviationKind;
  readonly stage: string;
  readonly text: string;
  /** The id of the system whose config entry declared it (the system itself or a stage under it). */
  readonly from: string;
}

function holds(when: DeviationEntry['when'], params: unknown): boolean {
  if (when === undefined) return true;
  const p = (params ?? {}) as Record<string, unknown>;
  return Object.entries(when).every(([k, v]) => p[k] === v);
}

/**
 * A system's deviations: its entry's own whose `when` holds for its params (defaults filled), then each input's,
 * in input order, each deviation once (the first stage that declares a text keeps it).
 */
export function deviationsOf(
  own: readonly DeviationEntry[] | undefined,
  system: { readonly id: string; readonly params: unknown },
  inputs: readonly { readonly deviations?: readonly Deviation[] }[],
): readonly Deviation[] {
  const out: Deviation[] = [];
  const seen = new Set<string>();
  const add = (d: Deviation) => {
    const key = `${d.kind}\u0000${d.stage}\u0000${d.text}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(d);
  };
  for (const d of own ?? []) if (holds(d.when, system.params)) add({ kind: d.kind, stage: d.stage, text: d.text, from: system.id });
  for (const i of inputs) for (const d of i.deviations ?? []) add(d);
  return out;
}
