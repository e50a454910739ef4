import { describe, expect, it } from 'vitest';
import {
  ADD,
  assembleModule,
  F64,
  F64_ABS,
  F64_ADD,
  F64_SUB,
  F64X2_ADD,
  F64X2_MUL,
  F64X2_SPLAT,
  f64,
  f64x2Extract,
  get,
  I32,
  i32,
  Kernel,
  loadF64,
  loadI32,
  loadU8,
  SHL,
  set,
  storeF64,
  V128,
  vload,
  vload64Lane,
  vload64Zero,
  vstore,
  sleb,
  uleb,
} from './assemble.js';

describe('LEB128', () => {
  it('encodes the specification examples and the one-byte boundaries', () => {
    // 624485 = 0b1_0011000_0111011_1100101 -> groups 0x65, 0x0e, 0x26, high bits set on all but the last.
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(uleb(0)).toEqual([0x00]);
    expect(uleb(127)).toEqual([0x7f]);
    expect(uleb(128)).toEqual([0x80, 0x01]);
    expect(uleb(2 ** 32 - 1)).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    // -123456 in two's complement, 7 bits at a time: 0x40, 0x3b, 0x78 (sign bit 0x40 set in the last group).
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(63)).toEqual([0x3f]);
    // 64 has bit 6 set, which would read as negative in one byte.
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(sleb(-64)).toEqual([0x40]);
    expect(sleb(-65)).toEqual([0xbf, 0x7f]);
  });
});

describe('assembleModule', () => {
  const add = { name: 'add', params: [I32, I32], results: [I32], locals: [], body: [...get(0), ...get(1), ...ADD] } as const;

  it('lays out the sections of a module that adds two numbers, byte for byte', () => {
    const text = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
    expect([...assembleModule([add])]).toEqual([
      ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
      // type: one (i32, i32) -> i32
      ...[0x01, 0x07, 0x01, 0x60, 0x02, I32, I32, 0x01, I32],
      // import env.memory, at least 1 page: 1 + (1 + 3) + (1 + 6) + 3 bytes
      ...[0x02, 1 + 4 + 7 + 3, 0x01, 0x03, ...text('env'), 0x06, ...text('memory'), 0x02, 0x00, 0x01],
      // function 0 has type 0
      ...[0x03, 0x02, 0x01, 0x00],
      // export "add" = function 0
      ...[0x07, 0x07, 0x01, 0x03, ...text('add'), 0x00, 0x00],
      // code: one body of 7 bytes, no locals, local.get 0, local.get 1, i32.add, end
      ...[0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b],
    ]);
    const { exports } = new Kernel([add]).instantiate(1);
    expect((exports.add as (a: number, b: number) => number)(2, 40)).toBe(42);
    expect((exports.add as (a: number, b: number) => number)(2 ** 31 - 1, 1)).toBe(-(2 ** 31));
  });

  it('runs f64 and SIMD instructions over the imported memory, rounding each lane as the scalar operation', () => {
    // gather(x, i, j, scale, out): out[0..2) = splat(scale) * (x[i], x[j]) + (x[i], x[j]); returns |out[0] - out[1]|.
    const gather = {
      name: 'gather',
      params: [I32, I32, I32, F64, I32],
      results: [F64],
      locals: [V128, V128, I32],
      body: [
        ...[...get(0), ...get(2), ...i32(3), ...SHL, ...ADD, ...set(7)],
        ...[...get(7), ...get(0), ...get(1), ...i32(3), ...SHL, ...ADD, ...vload64Zero(), ...vload64Lane(1), ...set(5)],
        ...[...get(3), ...F64X2_SPLAT, ...get(5), ...F64X2_MUL, ...get(5), ...F64X2_ADD, ...set(6)],
        ...[...get(4), ...get(6), ...vstore()],
        ...[...get(6), ...f64x2Extract(0), ...get(6), ...f64x2Extract(1), ...F64_SUB, ...F64_ABS],
      ],
    } as const;
    // copy(from, to): 16 bytes through a vector, then from[2] + 0.1 at to + 16.
    const copy = {
      name: 'copy',
      params: [I32, I32],
      results: [],
      locals: [],
      body: [...get(1), ...get(0), ...vload(), ...vstore(), ...get(1), ...get(0), ...loadF64(16), ...f64(0.1), ...F64_ADD, ...storeF64(16)],
    } as const;
    const { exports, buffer } = new Kernel([gather, copy]).instantiate(1);
    const mem = new Float64Array(buffer);
    expect(mem.length).toBe(65536 / 8);
    mem.set([0.1, 0.2, 0.3, 1e16], 0);
    const out = 64;
    const r = (exports.gather as (...a: number[]) => number)(0, 3, 0, 1 / 3, out);
    // Lane by lane, the scalar expression (scale * v) + v with its two roundings.
    expect(mem[8]).toBe((1 / 3) * 1e16 + 1e16);
    expect(mem[9]).toBe((1 / 3) * 0.1 + 0.1);
    expect(r).toBe(Math.abs((1 / 3) * 1e16 + 1e16 - ((1 / 3) * 0.1 + 0.1)));
    (exports.copy as (a: number, b: number) => void)(8, 128);
    expect([mem[16], mem[17], mem[18]]).toEqual([0.2, 0.3, 1e16 + 0.1]);
  });

  it('reads a byte unsigned and an i32 little-endian at a constant offset (the loads of the statistics kernels)', () => {
    // peek(p): mem8[p] + mem32[p + 4], the byte zero-extended (0xff reads 255, not -1).
    const peek = { name: 'peek', params: [I32], results: [I32], locals: [], body: [...get(0), ...loadU8(), ...get(0), ...loadI32(4), ...ADD] } as const;
    expect(peek.body).toEqual([0x20, 0, 0x2d, 0, 0, 0x20, 0, 0x28, 2, 4, 0x6a]);
    const { exports, buffer } = new Kernel([peek]).instantiate(1);
    const bytes = new Uint8Array(buffer);
    bytes.set([0xff, 0, 0, 0, 0x01, 0x02, 0x00, 0x00], 8);
    expect((exports.peek as (p: number) => number)(8)).toBe(255 + (0x01 + 0x02 * 256));
  });
});
