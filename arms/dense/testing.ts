import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildGloveModel, defaultGloveDir, GLOVE_MODEL_NAME } from './glove-model.js';

let building: Promise<string> | undefined;

/**
 * The GloVe model folder for tests: built once into this checkout's `.cache/models/` (reused by every later
 * test run while the package and build options are unchanged; ~10-30 s and ~1.3 GB RSS the first time).
 */
export function gloveModelForTests(): Promise<string> {
  building ??= buildGloveModel(defaultGloveDir(), { log: (m) => process.stderr.write(`${m}\n`) });
  return building;
}

/** Makes `<cacheRoot>/models/wink-glove-100d` point at the shared test build, so a temp cache needs no rebuild. */
export async function linkGloveInto(cacheRoot: string): Promise<void> {
  const dir = await gloveModelForTests();
  mkdirSync(join(cacheRoot, 'models'), { recursive: true });
  symlinkSync(dir, join(cacheRoot, 'models', GLOVE_MODEL_NAME), 'dir');
}
