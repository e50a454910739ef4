import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from './testing/shared.js';

/** Issue 25's bound: a function a maintainer reads on one screen or two, never a 200-line staircase. */
const MAX_LINES = 80;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every function, method, constructor and arrow in `text` spanning more than `max` lines, as `file:line name (lines)`. */
function longFunctions(file: string, text: string, max: number): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = src.getLineAndCharacterOfPosition(node.getStart(src)).line;
      const last = src.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      const name = node.name?.getText(src) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(src) : '<anonymous>');
      if (lines > max) found.push(`${file}:${first + 1} ${name} (${lines})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return found;
}

describe('function length', () => {
  it(`no function in harness/, arms/ or evalset/ is over ${MAX_LINES} lines`, () => {
    const long = ['harness', 'arms', 'evalset'].flatMap((dir) =>
      sources(join(PROJECT_ROOT, dir)).flatMap((path) => longFunctions(relative(PROJECT_ROOT, path), readFileSync(path, 'utf8'), MAX_LINES)),
    );
    expect(long).toEqual([]);
  });

  it('the checker finds a long function, method and arrow, and passes a short one', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `function short() {\n${body(5)}\n}`,
      `function long() {\n${body(90)}\n}`,
      `class C {\n m() {\n${body(90)}\n }\n}`,
      `const arrow = () => {\n${body(90)}\n};`,
    ].join('\n');
    expect(longFunctions('x.ts', text, MAX_LINES).map((s) => s.replace(/^x\.ts:\d+ /, ''))).toEqual(['long (92)', 'm (92)', 'arrow (92)']);
  });
});
