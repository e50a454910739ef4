import { afterEach, describe, expect, it, vi } from 'vitest';
import { HarnessError } from '../errors.js';
import { instantiateKernels, kernelSet, PAGE_BYTES } from './kernel-set.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('HARNESS_KERNELS', () => {
  it('defaults to wasm where the runtime has WebAssembly, unset or empty', () => {
    vi.stubEnv('HARNESS_KERNELS', undefined);
    expect(kernelSet()).toBe('wasm');
    vi.stubEnv('HARNESS_KERNELS', '');
    expect(kernelSet()).toBe('wasm');
  });

  it('selects js or wasm', () => {
    vi.stubEnv('HARNESS_KERNELS', 'js');
    expect(kernelSet()).toBe('js');
    vi.stubEnv('HARNESS_KERNELS', 'wasm');
    expect(kernelSet()).toBe('wasm');
  });

  it('refuses any other value, naming the variable and the allowed values (exit 2)', () => {
    vi.stubEnv('HARNESS_KERNELS', 'simd');
    expect(() => kernelSet()).toThrow('HARNESS_KERNELS=simd names no kernel set: use js or wasm');
    try {
      kernelSet();
    } catch (e) {
      expect(e).toBeInstanceOf(HarnessError);
      expect((e as HarnessError).exitCode).toBe(2);
    }
  });
});

describe('instantiateKernels', () => {
  it('gives the js set a zeroed memory of whole pages, at least one', () => {
    const module = { source: 'none.as.ts', js: (memory: ArrayBuffer) => ({ size: () => memory.byteLength }) };
    const { kernels, memory } = instantiateKernels(module, 3 * PAGE_BYTES + 1, 'js');
    expect(memory.byteLength).toBe(4 * PAGE_BYTES);
    expect(kernels.size()).toBe(4 * PAGE_BYTES);
    expect(new Uint8Array(memory).every((b) => b === 0)).toBe(true);
    expect(instantiateKernels(module, 0, 'js').memory.byteLength).toBe(PAGE_BYTES);
  });

  it('names the build step when a compiled module is missing', () => {
    const module = { source: 'harness/util/no-such-kernels.as.ts', js: () => ({}) };
    expect(() => instantiateKernels(module, 8, 'wasm')).toThrow(/no-such-kernels\.wasm are missing/);
  });
});
