import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../cache/index.js';
import { UsageError } from '../errors.js';
import { projectRoot } from '../util/project.js';

/**
 * A versioned prompt template kept as a file in the repository (`harness/judge/prompts/<name>.md`,
 * `harness/evalset-build/prompts/<name>.md`). Its sha256 is part of every cache key and of the provenance, so
 * editing a prompt (even a comma) makes every later reply a new one instead of a stale cache hit.
 */
export interface PromptTemplate {
  readonly name: string;
  readonly text: string;
  readonly sha256: string;
}

/**
 * `harness/<folder>/prompts/` under the package root: the same folder from a clone (source or dist/) and from
 * an installed package, which ships the prompt files as they are (`files` in package.json).
 */
function promptsDir(folder: string): string {
  return join(projectRoot(), 'harness', folder, 'prompts');
}

/** The prompt names (file names without .md) in `dir`, sorted; none when the folder is missing. */
function promptNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** Reads prompt `name` (e.g. `umbrela-v1`) of `folder` (`judge`, `evalset-build`). */
export function loadPrompt(folder: string, name: string): PromptTemplate {
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(name)) throw new UsageError(`prompt name "${name}": use the file name without .md, e.g. umbrela-v1`);
  const dir = promptsDir(folder);
  const file = join(dir, `${name}.md`);
  if (!existsSync(file)) {
    const names = promptNames(dir);
    const have = names.length === 0 ? 'it has none' : `it has ${names.join(', ')}`;
    throw new UsageError(`no prompt "${name}" in ${dir}: ${have}`, {
      hint: 'name one of those; a new prompt version is a new file beside them (old ones are never edited)',
    });
  }
  const text = readFileSync(file, 'utf8');
  return { name, text, sha256: sha256Hex(text) };
}

/**
 * The template with each `{{slot}}` replaced by its value. Values are inserted once, left to right, so a value
 * that itself contains `{{query}}` is never expanded again.
 */
export function renderPrompt(t: PromptTemplate, values: Readonly<Record<string, string>>): string {
  return t.text.replace(/\{\{([a-z]+)\}\}/g, (_whole, slot: string) => {
    const v = values[slot];
    if (v === undefined) throw new Error(`prompt ${t.name}: no value for {{${slot}}}`);
    return v;
  });
}
