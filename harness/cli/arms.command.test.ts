import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { armFactories } from '../../arms/registry.js';
import { armEntrySchema } from '../config/schema.js';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';
import { armExamples } from './arm-examples.js';

const dir = tempDir('harness-arms-command');
const page = readFileSync(new URL('../../docs/arms/examples.md', import.meta.url), 'utf8');

describe('harness arms <kind>: a config example for every arm kind', () => {
  it.each(Object.keys(armFactories))('%s: an example that parses as an arm entry of that kind, in the docs too', (kind) => {
    const text = armExamples[kind as keyof typeof armExamples];
    expect(text, `no example for ${kind}`).toBeDefined();
    const [entry] = parse(text) as unknown[];
    const arm = armEntrySchema.parse(entry);
    expect(arm.kind).toBe(kind);
    const params = armFactories[kind as keyof typeof armFactories].params.safeParse(arm.params);
    expect(params.success, JSON.stringify(params.error?.issues)).toBe(true);
    expect(page).toContain(`### ${kind}\n`);
    expect(page).toContain(`\`\`\`yaml\narms:\n${text}\n\`\`\``);
  });

  it('prints the example of one kind, exit 0', async () => {
    const r = await runCaptured(['arms', 'http'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^http: a search service over HTTP/);
    expect(r.out).toContain('    index:\n        url: http://127.0.0.1:8080/store');
  });

  it('refuses an unknown kind with a did-you-mean, exit 2', async () => {
    const r = await runCaptured(['arms', 'htp'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('harness: arms htp: unknown arm kind "htp"; did you mean "http"?');
  });
});
