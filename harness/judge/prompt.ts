import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../cache/index.js';
import { UsageError } from '../errors.js';

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

/** `harness/<folder>/prompts/`, found from the source tree or from `dist/` (tsc does not copy `.md` files). */
function promptsDir(folder: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['..', join('..', '..', '..')]) {
    const dir = resolve(here, up, folder, 'prompts');
    if (existsSync(dir)) return dir;
  }
  return resolve(here, '..', folder, 'prompts');
}

/** Reads prompt `name` (e.g. `umbrela-v1`) of `folder` (`judge`, `evalset-build`). */
export function loadPrompt(folder: string, name: string): PromptTemplate {
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(name)) throw new UsageError(`prompt name "${name}": use the file name without .md, e.g. umbrela-v1`);
  const file = join(promptsDir(folder), `${name}.md`);
  if (!existsSync(file))
    throw new UsageError(`no prompt "${name}" in ${dirname(file)}`, { hint: 'prompts are versioned files; add a new one instead of editing an old one' });
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
