export { canonicalJson, sha256Hex, cacheKey } from './key.js';
export type { CacheKey, CacheNamespace } from './key.js';
export {
  ContentStore,
  cachePathError,
  failWrite,
  folderReplaceProblem,
  openEntry,
  processAlive,
  readFolderFiles,
  recoverFolder,
  sealEntry,
  tempNameFor,
  tempWriterPid,
  writeFileAtomic,
  writeFolderAtomic,
} from './store.js';
export type { CacheStats, FolderState, ShapeCheck } from './store.js';
