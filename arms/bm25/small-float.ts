/**
 * Lucene's one-byte document-length norm (`SmallFloat.intToByte4` / `byte4ToInt`, Lucene >= 7): lengths below
 * 24 are stored exactly; larger ones as a 4-bit-mantissa float (3 stored bits plus an implicit leading one),
 * offset by 24, so a length decodes to the largest representable value not above it. Lucene's BM25 computes
 * its length normalisation from the decoded length, so a faithful reproduction must round the same way.
 */

/** `longToInt4`: the 4-bit-mantissa code of a non-negative integer. */
function toInt4(i: number): number {
  const numBits = i === 0 ? 0 : 32 - Math.clz32(i);
  if (numBits < 4) return i;
  const shift = numBits - 4;
  return ((i >>> shift) & 0x07) | ((shift + 1) << 3);
}

function fromInt4(code: number): number {
  const bits = code & 0x07;
  const shift = (code >>> 3) - 1;
  return shift === -1 ? bits : (bits | 0x08) * 2 ** shift;
}

/** Codes below this are exact lengths: 255 minus the code of 2^31 - 1. */
const NUM_FREE_VALUES = 255 - toInt4(0x7fffffff);

/** Encodes a field length (number of indexed tokens, >= 0) to Lucene's norm byte (0..255). */
export function lengthToNormByte(length: number): number {
  if (length < NUM_FREE_VALUES) return length;
  return NUM_FREE_VALUES + toInt4(length - NUM_FREE_VALUES);
}

/** Decodes a norm byte to the (lower-bound) length Lucene scores with. */
export function normByteToLength(code: number): number {
  if (code < NUM_FREE_VALUES) return code;
  return NUM_FREE_VALUES + fromInt4(code - NUM_FREE_VALUES);
}
