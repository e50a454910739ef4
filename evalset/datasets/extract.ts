import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { openPromise } from 'yauzl';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';

/**
 * Extracts a zip into `targetDir` atomically: members go to a sibling temporary folder first, which is renamed
 * into place once every member is written, so an interrupted extraction never leaves a half-filled folder that
 * would load as a smaller eval set. BEIR zips hold one top folder named like the set (`nfcorpus/...`); when the
 * archive has exactly one top folder its contents become `targetDir`, otherwise all members do.
 * Member names that are absolute or climb out with `..` are refused (zip slip).
 */
export async function extractZip(zipPath: string, targetDir: string, log: Logger): Promise<void> {
  const tmp = `${targetDir}.extracting`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  const zip = await openPromise(zipPath, { strictFileNames: true }).catch((e: unknown) => {
    throw new HarnessError(`${zipPath}: not a readable zip archive (${(e as Error).message})`, { cause: e });
  });
  const tops = new Set<string>();
  const progress = log.progress(`extract ${zipPath}`, zip.entryCount);
  try {
    for await (const entry of zip.eachEntry()) {
      progress.tick();
      const name = entry.fileName;
      const out = resolve(tmp, name);
      if (!out.startsWith(resolve(tmp) + sep)) throw new HarnessError(`${zipPath}: member "${name}" would be written outside the target folder`);
      tops.add(name.split('/')[0]!);
      if (name.endsWith('/')) {
        await mkdir(out, { recursive: true });
        continue;
      }
      // macOS resource forks carry no data of the set.
      if (name.startsWith('__MACOSX/')) continue;
      await mkdir(dirname(out), { recursive: true });
      await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(out));
    }
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    if (e instanceof HarnessError) throw e;
    throw new HarnessError(`${zipPath}: extraction failed (${(e as Error).message})`, { cause: e });
  } finally {
    zip.close();
  }
  progress.done();
  tops.delete('__MACOSX');
  const [only] = [...tops];
  const source = tops.size === 1 && only !== undefined && (await stat(join(tmp, only))).isDirectory() ? join(tmp, only) : tmp;
  await rm(targetDir, { recursive: true, force: true });
  await rename(source, targetDir);
  await rm(tmp, { recursive: true, force: true });
}
