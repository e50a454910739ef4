/**
 * The one source of randomness in `harness/stats`: xoshiro128** 1.1 (Blackman & Vigna, "Scrambled linear
 * pseudorandom number generators", ACM TOMS 47(4), 2021, doi:10.1145/3460772), seeded through splitmix64 as
 * its authors recommend. It uses only 32-bit integer arithmetic (`Math.imul`, shifts), so the same seed gives
 * the same stream on every machine and Node version. Nothing in this package calls `Math.random`.
 */

const MASK64 = (1n << 64n) - 1n;
const TWO_POW_32 = 4294967296;

/** splitmix64 (Steele, Lea & Flood 2014), only to spread a user seed over the 128-bit state. */
function splitmix64(state: bigint): [next: bigint, output: bigint] {
  const next = (state + 0x9e3779b97f4a7c15n) & MASK64;
  let z = next;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return [next, z ^ (z >> 31n)];
}

/** A seeded xoshiro128** stream. Mutable: every call advances it. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /**
   * @param seed a non-negative safe integer. Two splitmix64 outputs give the four 32-bit state words, so
   * seeds 0, 1, 2, … start well-separated streams (and the all-zero state cannot occur in practice).
   * @param stream an integer in [0, 2048) naming an independent stream for the same seed (bits 53-63 of the
   * splitmix64 start), so one user seed can drive several procedures without sharing their draws.
   */
  constructor(seed: number, stream = 0) {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new RangeError(`Rng seed must be a non-negative safe integer, got ${seed}`);
    }
    if (!Number.isInteger(stream) || stream < 0 || stream >= 2048) {
      throw new RangeError(`Rng stream must be an integer in [0, 2048), got ${stream}`);
    }
    const [st, a] = splitmix64(BigInt(seed) | (BigInt(stream) << 53n));
    const [, b] = splitmix64(st);
    this.s0 = Number(a & 0xffffffffn) | 0;
    this.s1 = Number(a >> 32n) | 0;
    this.s2 = Number(b & 0xffffffffn) | 0;
    this.s3 = Number(b >> 32n) | 0;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Build from an explicit 128-bit state (four 32-bit words), as the reference C code is seeded. */
  static fromState(s0: number, s1: number, s2: number, s3: number): Rng {
    const r = new Rng(0);
    r.s0 = s0 | 0;
    r.s1 = s1 | 0;
    r.s2 = s2 | 0;
    r.s3 = s3 | 0;
    return r;
  }

  /** Next 32 random bits as an unsigned integer in [0, 2^32). */
  nextU32(): number {
    const s1 = this.s1;
    const m = Math.imul(s1, 5);
    const result = Math.imul((m << 7) | (m >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  nextFloat(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /**
   * Uniform integer in [0, n) for 1 <= n <= 2^32, without bias: Lemire's multiply-and-reject
   * (doi:10.1145/3230636), exact in doubles while x·n < 2^53 (n <= 2^21); larger n reject by modulo.
   */
  nextInt(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > TWO_POW_32) throw new RangeError(`nextInt: n must be an integer in [1, 2^32], got ${n}`);
    if (n <= 2097152) {
      let m = this.nextU32() * n;
      let hi = Math.floor(m / TWO_POW_32);
      let lo = m - hi * TWO_POW_32;
      if (lo < n) {
        const threshold = TWO_POW_32 % n;
        while (lo < threshold) {
          m = this.nextU32() * n;
          hi = Math.floor(m / TWO_POW_32);
          lo = m - hi * TWO_POW_32;
        }
      }
      return hi;
    }
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }
}

/** A fresh stream for `seed` (and optional `stream`); see {@link Rng}. */
export function createRng(seed: number, stream = 0): Rng {
  return new Rng(seed, stream);
}
