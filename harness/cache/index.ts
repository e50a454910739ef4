export { canonicalJson, sha256Hex, cacheKey } from './key.js';
export type { CacheKey, CacheNamespace } from './key.js';
export { ContentStore, writeFileAtomic, writeJsonAtomic } from './store.js';
export type { CacheStats } from './store.js';
