import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';
import { commands } from './commands.js';
import { withFlagSuggestions } from './flag-suggest.js';

const dir = tempDir('harness-flag-suggest');

/** A command's declared flags and the ones it demands, read from its builder as the parser sees them. */
function optionsOf(spec: (typeof commands)[number]): { flags: string[]; all: string[]; demanded: string[] } {
  const o = (spec.builder(yargs([])) as unknown as { getOptions(): { key: Record<string, unknown>; demandedOptions: Record<string, unknown> } }).getOptions();
  const all = Object.keys(o.key);
  return { flags: all.filter((k) => k.length >= 5 && !['help', 'version'].includes(k)), all, demanded: Object.keys(o.demandedOptions) };
}

/**
 * `--dry-run` → `--dryrun`, `--config` → `--confg`: one edit, the kind of typo a user makes. Where that edit is
 * one edit from another flag of the command too (`--batch` → `--bath`, as near `--path`), the last letter is
 * doubled instead (`--batchh`): a typo with two nearest flags has no one right answer.
 */
function typo(flag: string, others: readonly string[]): string {
  const dropped = flag.includes('-') ? flag.replace('-', '') : flag.slice(0, 3) + flag.slice(4);
  const oneEdit = (a: string, b: string) =>
    a.length === b.length
      ? [...a].filter((c, i) => c !== b[i]).length === 1
      : Math.abs(a.length - b.length) === 1 && [...a].some((_, i) => a.slice(0, i) + a.slice(i + 1) === b || b.slice(0, i) + b.slice(i + 1) === a);
  return others.some((o) => o !== flag && oneEdit(dropped, o)) ? `${flag}${flag.at(-1)}` : dropped;
}

describe('did you mean, for a mistyped flag', () => {
  it('names the nearest flag of the command and leaves other words and messages alone', () => {
    const known = ['config', 'dry-run', 'jobs', 'h'];
    expect(withFlagSuggestions('Unknown argument: dryrun', ['ablate', '--dryrun'], known)).toBe('unknown argument --dryrun (did you mean --dry-run?)');
    expect(withFlagSuggestions('Unknown arguments: jbos, zzzzzz, foo', ['ablate', '--jbos=2', '--zzzzzz', 'foo'], known)).toBe(
      'unknown arguments --jbos (did you mean --jobs?), --zzzzzz, "foo"',
    );
    expect(withFlagSuggestions('Missing required argument: config', ['ablate'], known)).toBe('Missing required argument: config');
  });

  it('ablate --dryrun exits 2 and suggests --dry-run, pointing at the command help', async () => {
    const r = await runCaptured(['ablate', '--config', 'x.yaml', '--dryrun'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('harness: unknown argument --dryrun (did you mean --dry-run?)\n  hint: See `harness ablate --help`.');
  });

  // Every command: a one-edit typo of each of its long flags is answered with that flag, before anything runs.
  const cases = commands
    .filter((c) => !c.command.startsWith('eval '))
    .flatMap((c) => {
      const { flags, all, demanded } = optionsOf(c);
      const verb = c.command.split(' ')[0] as string;
      // Required positionals (`<dir>`, `<runs..>`) and demanded flags get a placeholder so yargs reaches the unknown flag.
      const positionals = [...c.command.matchAll(/<[^>]+>/g)].map(() => 'x');
      const base = [verb, ...positionals, ...demanded.flatMap((d) => [`--${d}`, 'x'])];
      return flags.map((f) => [verb, f, [...base, `--${typo(f, all)}`, 'x']] as const);
    });

  it.each(cases)('%s --%s', async (_verb, flag, args) => {
    const r = await runCaptured(args, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`did you mean --${flag}?`);
  });

  it('eval (trec_eval flags) suggests the nearest long option too', async () => {
    const r = await runCaptured(['eval', '--formt', 'csv', 'q', 'r'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--formt'; did you mean '--format'?");
  });
});
