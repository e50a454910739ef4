import { rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { HarnessError, UsageError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';
import { fileInTheWay } from '../../harness/util/fs-paths.js';
import { datasetCatalog, findDataset, type DatasetEntry } from './catalog.js';
import { downloadVerified, hashFile, importVerified, verify, type Checksums, type NetTimeouts, type Verification } from './download.js';
import { extractZip } from './extract.js';

export const DEFAULT_DATASETS_DIR = join('data', 'datasets');
export const BASE_URL_ENV = 'HARNESS_DATASETS_BASE_URL';

export interface GetOptions {
  /** Where datasets live; default `data/datasets` (gitignored: `data/`). */
  readonly dir: string;
  /** A local copy to import instead of downloading. */
  readonly from?: string;
  /** Fetch `<baseUrl>/<file>` instead of the catalog URL (mirrors, tests). */
  readonly baseUrl?: string;
  readonly log: Logger;
  /** Connect and idle timeouts of the download; defaults in DEFAULT_TIMEOUTS (10 s, 20 s). */
  readonly timeouts?: Partial<NetTimeouts>;
}

export interface GetResult {
  readonly entry: DatasetEntry;
  readonly file: string;
  /** What to pass as `--path` with `--format entry.format`. */
  readonly evalsetPath: string;
  readonly checksums: Checksums;
  readonly verification: Verification;
  /** `present`: the file was already there and verified again; nothing was fetched. */
  readonly source: 'download' | 'import' | 'present';
}

export function lookupDataset(name: string): DatasetEntry {
  const entry = findDataset(name);
  if (entry === undefined) {
    throw new UsageError(`unknown dataset "${name}"`, { hint: `known: ${datasetCatalog.map((d) => d.name).join(', ')} (see \`harness datasets list\`)` });
  }
  return entry;
}

/**
 * Re-verifies a file already in place. A mismatch is not trusted and not kept: the file is deleted (said so on
 * the logger) and undefined returned, so the caller downloads it again.
 */
async function checkPresent(file: string, entry: DatasetEntry, log: Logger): Promise<{ checksums: Checksums; verification: Verification } | undefined> {
  const checksums = await hashFile(file);
  try {
    return { checksums, verification: verify(`${file} (already present)`, checksums, entry) };
  } catch (e) {
    if (!(e instanceof HarnessError)) throw e;
    await rm(file, { force: true });
    log.warn(`${e.message}; deleted it, downloading it again`);
    return undefined;
  }
}

export function datasetUrl(entry: DatasetEntry, baseUrl: string | undefined): string {
  return baseUrl === undefined || baseUrl === '' ? entry.url : `${baseUrl.replace(/\/+$/, '')}/${entry.file}`;
}

/**
 * Fetches one catalog entry into `dir`: download (resumable) or `--from` import, checksum verification,
 * atomic rename, and for zips an atomic extraction to `dir/<name>`. A file already present is re-hashed and
 * verified rather than trusted.
 */
export async function getDataset(name: string, opts: GetOptions): Promise<GetResult> {
  return getDatasetEntry(lookupDataset(name), opts);
}

/** {@link getDataset} for an entry given whole: a mirror's own file, a pinned copy, a test's generated file. */
export async function getDatasetEntry(entry: DatasetEntry, opts: GetOptions): Promise<GetResult> {
  const dir = resolve(opts.dir);
  const blocked = fileInTheWay(dir);
  if (blocked !== undefined) {
    throw new HarnessError(`--dir ${dir}: ${blocked === dir ? 'it' : blocked} is a file, not a folder`, {
      exitCode: 2,
      hint: 'point --dir at a folder (a missing one is created), or move the file away',
    });
  }
  const file = join(dir, entry.file);
  let result: { checksums: Checksums; verification: Verification };
  let source: GetResult['source'];
  if (opts.from !== undefined) {
    result = await importVerified(resolve(opts.from), file, entry, entry.name);
    source = 'import';
  } else {
    const download = () =>
      downloadVerified(datasetUrl(entry, opts.baseUrl), file, entry, {
        log: opts.log,
        label: entry.name,
        ...(opts.timeouts === undefined ? {} : { timeouts: opts.timeouts }),
      });
    const present = (await stat(file).catch(() => undefined))?.isFile() === true;
    const checked = present ? await checkPresent(file, entry, opts.log) : undefined;
    if (checked !== undefined) {
      result = checked;
      source = 'present';
    } else {
      result = await download();
      source = 'download';
    }
  }
  const evalsetPath = join(dir, entry.evalsetPath);
  if (entry.archive === 'zip') {
    const extracted = (await stat(evalsetPath).catch(() => undefined))?.isDirectory() === true;
    if (!extracted || source !== 'present') await extractZip(file, evalsetPath, opts.log);
  }
  return { entry, file, evalsetPath, source, ...result };
}

export function describeVerification(r: GetResult): string {
  if (r.verification.status === 'verified') {
    return `verified: ${r.verification.by} ${r.verification.by === 'sha256' ? r.checksums.sha256 : r.checksums.md5} matches the catalog`;
  }
  return `NOT verified: no published checksum is known for ${r.entry.name}; computed sha256 ${r.checksums.sha256} (record it to pin this copy)`;
}

export function formatCatalog(): string {
  const rows = datasetCatalog.map((d) => [d.name, d.format, d.sha256 !== null ? 'sha256' : d.md5 !== null ? 'md5' : 'none', d.summary]);
  const head = ['name', 'format', 'checksum', 'summary'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return `${[line(head), ...rows.map(line)].join('\n')}\n`;
}
