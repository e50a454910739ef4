/**
 * Kernel sets: each WebAssembly kernel module (the shared-draw sums, the PPR step) exists twice, as
 * AssemblyScript compiled by `npm run build` and as the same functions in TypeScript, with bit-identical
 * results; `HARNESS_KERNELS` picks the set that runs (docs/adr/0028-readable-simd-kernels.md). Both work on one
 * memory through byte addresses, so the code that lays data out for a kernel is the same for either set.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HarnessError } from '../errors.js';
import { projectRoot } from './project.js';

export type KernelSet = 'js' | 'wasm';

/** The slice of the WebAssembly JS API the kernels use (the project's type libraries do not declare it). */
declare const WebAssembly:
  | {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
      Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
    }
  | undefined;

/** One page of WebAssembly memory; a JavaScript set's memory is rounded up to pages too. */
export const PAGE_BYTES = 65536;
/** Kernels address memory with 32-bit offsets, which JavaScript passes as signed integers. */
export const MAX_MEMORY_BYTES = 2 ** 31;

/** The set `HARNESS_KERNELS` names (`js` or `wasm`); unset or empty, `wasm` where the runtime has WebAssembly. */
export function kernelSet(): KernelSet {
  const value = process.env['HARNESS_KERNELS'];
  if (value === undefined || value === '') return WebAssembly === undefined ? 'js' : 'wasm';
  if (value === 'js' || value === 'wasm') return value;
  throw new HarnessError(`HARNESS_KERNELS=${value} names no kernel set: use js or wasm`, {
    exitCode: 2,
    hint: 'unset HARNESS_KERNELS for the default (wasm where the runtime has WebAssembly)',
  });
}

/** One kernel module: its AssemblyScript source and its TypeScript form, built over a memory. */
export interface KernelModule<K> {
  /** Project-relative; `npm run build` compiles it to the same path under dist/ with `.wasm` for `.as.ts`. */
  readonly source: string;
  readonly js: (memory: ArrayBuffer) => K;
}

/** A kernel module's functions over a fresh, zeroed memory of at least `bytes` bytes, and that memory. */
export interface KernelInstance<K> {
  readonly kernels: K;
  readonly memory: ArrayBuffer;
}

/** Compiled WebAssembly modules by source, each compiled once per process. */
const compiled = new Map<string, object>();

/** Instantiates `module` from kernel set `set` over at least `bytes` bytes (at most {@link MAX_MEMORY_BYTES}; the caller checks). */
export function instantiateKernels<K>(module: KernelModule<K>, bytes: number, set: KernelSet = kernelSet()): KernelInstance<K> {
  const pages = Math.max(1, Math.ceil(bytes / PAGE_BYTES));
  if (set === 'js') {
    const memory = new ArrayBuffer(pages * PAGE_BYTES);
    return { kernels: module.js(memory), memory };
  }
  if (WebAssembly === undefined) {
    throw new HarnessError('WebAssembly is unavailable in this runtime; HARNESS_KERNELS=wasm needs it', {
      hint: 'run Node 20 or later without --jitless, or set HARNESS_KERNELS=js',
    });
  }
  let wasmModule = compiled.get(module.source);
  if (wasmModule === undefined) {
    wasmModule = new WebAssembly.Module(readFileSync(compiledPath(module.source)));
    compiled.set(module.source, wasmModule);
  }
  const memory = new WebAssembly.Memory({ initial: pages });
  const { exports } = new WebAssembly.Instance(wasmModule, { env: { memory } });
  return { kernels: exports as K, memory: memory.buffer };
}

/**
 * Where `npm run build` wrote the module compiled from `source`: dist/ of the package root, which a run from
 * source (tests through tsx) reads as well. A run from source refuses a module older than its source.
 */
function compiledPath(source: string): string {
  const root = projectRoot();
  const path = join(root, 'dist', source.replace(/\.as\.ts$/, '.wasm'));
  const hint = 'run `npm run build`, which compiles the AssemblyScript kernels';
  if (!existsSync(path)) throw new HarnessError(`the compiled kernels ${path} are missing`, { hint });
  const fromSource = import.meta.url.endsWith('.ts');
  if (fromSource && statSync(join(root, source)).mtimeMs > statSync(path).mtimeMs)
    throw new HarnessError(`the compiled kernels ${path} are older than their source ${source}`, { hint });
  return path;
}
