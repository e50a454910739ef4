import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './testing/shared.js';

/**
 * The layers of the code base, lowest first. A folder may import from its own layer and the ones below it,
 * never from above: kernels (metrics, stats, fusion, eval sets) know nothing of the CLI, the report or the
 * runner, so they can be used as libraries and tested alone.
 */
const FORBIDDEN: Readonly<Record<string, readonly string[]>> = {
  'harness/metrics': ['harness/cli', 'harness/report', 'harness/ablate', 'harness/config', 'harness/compare', 'harness/systems'],
  'harness/stats': ['harness/cli', 'harness/report', 'harness/ablate', 'harness/config', 'harness/compare', 'harness/systems', 'harness/metrics'],
  'harness/fusion': ['harness/cli', 'harness/report', 'harness/ablate', 'harness/config', 'harness/compare', 'harness/systems'],
  evalset: ['harness/cli', 'harness/report', 'harness/ablate', 'harness/compare', 'harness/systems'],
  'harness/compare': ['harness/cli', 'harness/report', 'harness/ablate', 'harness/config', 'harness/systems'],
  'harness/systems': ['harness/cli', 'harness/report', 'harness/ablate'],
  arms: ['harness/cli', 'harness/report', 'harness/ablate', 'harness/compare'],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === 'node_modules' || f === 'examples' ? [] : sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

/** Relative import specifiers of a TypeScript file (static, dynamic and type-only), resolved to project paths. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1] as string);
  return specs.map((s) => relative(PROJECT_ROOT, resolve(dirname(file), s)));
}

describe('layers', () => {
  for (const [layer, above] of Object.entries(FORBIDDEN)) {
    it(`${layer} imports nothing from ${above.join(', ')}`, () => {
      const offending: string[] = [];
      for (const file of sources(join(PROJECT_ROOT, layer))) {
        for (const target of imports(file)) {
          if (above.some((a) => target === a || target.startsWith(`${a}/`))) offending.push(`${relative(PROJECT_ROOT, file)} -> ${target}`);
        }
      }
      expect(offending).toEqual([]);
    });
  }
});
