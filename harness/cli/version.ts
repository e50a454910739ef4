import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../util/project.js';

/** harness's own version, from its package.json (source and dist/ alike). */
export function harnessVersion(): string {
  return (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
