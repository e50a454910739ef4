/**
 * A small WebAssembly assembler: the integer encodings, the instructions the harness's SIMD kernels use, and a
 * module builder whose functions share one imported memory (`env.memory`). Kernels are written as arrays of
 * opcode bytes in TypeScript and assembled at first use, so the repository holds no binary and needs no
 * toolchain. Encodings follow the WebAssembly core specification 2.0, section 5 (binary format), with the
 * 128-bit SIMD instructions under the 0xfd prefix.
 */
import { HarnessError } from '../errors.js';

/** Unsigned LEB128 (spec 5.2.2), for sizes, counts, indices and memory offsets (at most 2^32 - 1). */
export function uleb(x: number): number[] {
  const out: number[] = [];
  let v = x >>> 0;
  do {
    const low = v & 0x7f;
    v >>>= 7;
    out.push(v === 0 ? low : low | 0x80);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 (spec 5.2.2), for i32 constants. */
export function sleb(x: number): number[] {
  const out: number[] = [];
  let v = x | 0;
  for (;;) {
    const low = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (low & 0x40) === 0) || (v === -1 && (low & 0x40) !== 0)) return [...out, low];
    out.push(low | 0x80);
  }
}

/** Value types (spec 5.3.1). */
export const I32 = 0x7f;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof F64 | typeof V128;

/** Local and constant instructions. */
export const get = (i: number): number[] => [0x20, ...uleb(i)];
export const set = (i: number): number[] => [0x21, ...uleb(i)];
export const tee = (i: number): number[] => [0x22, ...uleb(i)];
export const i32 = (x: number): number[] => [0x41, ...sleb(x)];
/** An f64 constant: its eight little-endian IEEE bytes. */
export const f64 = (x: number): number[] => [0x44, ...new Uint8Array(Float64Array.of(x).buffer)];

/** i32 arithmetic and comparisons. */
export const ADD = [0x6a];
export const SUB = [0x6b];
export const MUL = [0x6c];
export const SHL = [0x74];
export const LT_U = [0x49];
export const GE_U = [0x4f];
export const SELECT = [0x1b];
/** f64 scalar arithmetic. */
export const F64_ABS = [0x99];
export const F64_ADD = [0xa0];
export const F64_SUB = [0xa1];
export const F64_MUL = [0xa2];

/** Memory access, each with its natural alignment (log2 bytes) and a constant byte offset. */
export const loadU8 = (offset = 0): number[] => [0x2d, 0, ...uleb(offset)];
export const loadI32 = (offset = 0): number[] => [0x28, 2, ...uleb(offset)];
export const loadF64 = (offset = 0): number[] => [0x2b, 3, ...uleb(offset)];
export const storeF64 = (offset = 0): number[] => [0x39, 3, ...uleb(offset)];

/** 128-bit SIMD (0xfd prefix); f64x2 lanes are rounded exactly as the scalar f64 operation (no fused multiply-add). */
const simd = (op: number, ...rest: number[]): number[] => [0xfd, ...uleb(op), ...rest];
export const vload = (offset = 0): number[] => simd(0x00, 4, ...uleb(offset));
export const vstore = (offset = 0): number[] => simd(0x0b, 4, ...uleb(offset));
/** v128.load64_zero: one f64 into lane 0, lane 1 set to +0. */
export const vload64Zero = (offset = 0): number[] => simd(0x5d, 3, ...uleb(offset));
/** v128.load64_lane: [address, vector] -> the vector with lane `lane` replaced by the f64 at the address. */
export const vload64Lane = (lane: number, offset = 0): number[] => [...simd(0x57, 3, ...uleb(offset)), lane];
export const VZERO = simd(0x0c, ...new Array<number>(16).fill(0));
export const F64X2_SPLAT = simd(0x14);
export const f64x2Extract = (lane: number): number[] => simd(0x21, lane);
export const F64X2_ABS = simd(0xec);
export const F64X2_ADD = simd(0xf0);
export const F64X2_SUB = simd(0xf1);
export const F64X2_MUL = simd(0xf2);

/** Control: `BLOCK LOOP … END END` with BREAK_IF (leave the block) and CONTINUE (restart the loop) inside. */
export const BLOCK = [0x02, 0x40];
export const LOOP = [0x03, 0x40];
export const END = [0x0b];
export const BREAK_IF = [0x0d, 1];
export const CONTINUE = [0x0c, 0];

/** One function of a module: its exported name, signature, extra locals (after the parameters) and body. */
export interface WasmFunction {
  readonly name: string;
  readonly params: readonly ValType[];
  readonly results: readonly ValType[];
  readonly locals: readonly ValType[];
  /** Instructions, without the final `end` (the builder adds it). */
  readonly body: readonly number[];
}

const name = (s: string): number[] => [...uleb(s.length), ...Array.from(new TextEncoder().encode(s))];
const vector = (items: readonly (readonly number[])[]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, content: readonly number[]): number[] => [id, ...uleb(content.length), ...content];

/** Locals as run-length groups (spec 5.5.13: a vector of (count, type)). */
function localGroups(locals: readonly ValType[]): number[][] {
  const groups: number[][] = [];
  let k = 0;
  while (k < locals.length) {
    let run = 1;
    while (k + run < locals.length && locals[k + run] === locals[k]) run++;
    groups.push([...uleb(run), locals[k] as number]);
    k += run;
  }
  return groups;
}

/**
 * A module (spec 5.5) importing `env.memory` (at least one page) and exporting each function under its name:
 * type section with one signature per function, import, function, export and code sections.
 */
export function assembleModule(functions: readonly WasmFunction[]): Uint8Array {
  const types = functions.map((f) => [0x60, ...vector(f.params.map((t) => [t])), ...vector(f.results.map((t) => [t]))]);
  const codes = functions.map((f) => {
    const code = [...vector(localGroups(f.locals)), ...f.body, ...END];
    return [...uleb(code.length), ...code];
  });
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector(types)),
    ...section(2, vector([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])),
    ...section(3, vector(functions.map((_, k) => uleb(k)))),
    ...section(7, vector(functions.map((f, k) => [...name(f.name), 0x00, ...uleb(k)]))),
    ...section(10, vector(codes)),
  ]);
}

/** The slice of the WebAssembly JS API the kernels use (the project's type libraries do not declare it). */
declare const WebAssembly:
  | {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
      Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
    }
  | undefined;

/** One page of WebAssembly memory. */
export const PAGE_BYTES = 65536;
/** Kernels address memory with 32-bit offsets, which JavaScript passes as signed integers. */
export const MAX_MEMORY_BYTES = 2 ** 31;

/** A compiled module, instantiated over fresh memories. */
export class Kernel {
  private readonly module: object;

  constructor(functions: readonly WasmFunction[]) {
    if (WebAssembly === undefined) {
      throw new HarnessError('WebAssembly is unavailable in this runtime; the harness needs it for its SIMD kernels', {
        hint: 'run Node 20 or later without --jitless',
      });
    }
    this.module = new WebAssembly.Module(assembleModule(functions));
  }

  /** An instance over a new memory of at least `bytes` bytes (at most {@link MAX_MEMORY_BYTES}; the caller checks). */
  instantiate(bytes: number): { readonly exports: Record<string, unknown>; readonly buffer: ArrayBuffer } {
    const wasm = WebAssembly as NonNullable<typeof WebAssembly>;
    const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE_BYTES)) });
    const { exports } = new wasm.Instance(this.module, { env: { memory } });
    return { exports, buffer: memory.buffer };
  }
}
