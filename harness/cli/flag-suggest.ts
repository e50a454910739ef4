import { closest } from '../util/suggest.js';

/** How the user typed `name` on the command line: as a flag (`--name`, `--name=v`, `-n`) or as a plain word. */
function typedAsFlag(name: string, argv: readonly string[]): string | undefined {
  for (const a of argv) {
    const bare = a.replace(/^--?/, '').split('=')[0];
    if (a.startsWith('-') && bare === name) return a.startsWith('--') ? `--${name}` : `-${name}`;
  }
  return undefined;
}

/**
 * yargs' "Unknown argument(s): a, b" with each mistyped flag followed by the nearest flag the command knows
 * (the one "did you mean" of the workbench, harness/util/suggest.ts), so `ablate --dryrun` says `--dry-run`.
 * Any other message is returned as it is.
 */
export function withFlagSuggestions(msg: string, argv: readonly string[], knownFlags: readonly string[]): string {
  const m = /^Unknown arguments?: (.+)$/.exec(msg);
  if (!m) return msg;
  const long = knownFlags.filter((k) => k.length > 1);
  const parts = (m[1] as string).split(', ').map((name) => {
    const typed = typedAsFlag(name, argv);
    if (typed === undefined) return `"${name}"`;
    const near = name.length > 1 ? closest(name, long) : undefined;
    return near === undefined ? typed : `${typed} (did you mean --${near}?)`;
  });
  return `${parts.length === 1 ? 'unknown argument' : 'unknown arguments'} ${parts.join(', ')}`;
}
