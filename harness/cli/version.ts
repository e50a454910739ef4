import { ownPackage } from '../util/project.js';

/** harness's own version, from its package.json (source and dist/ alike). */
export function harnessVersion(): string {
  return ownPackage().version;
}
