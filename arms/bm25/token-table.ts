/**
 * An open-addressing hash table from a range of UTF-16 code units to an int, looked up without cutting the range
 * out as a substring. Indexing looks up every token of the corpus; with a `Map<string, number>` each lookup first
 * allocates the substring and hashes it, which made the lookup the largest single cost of indexing. Here the
 * hash (32-bit FNV-1a over UTF-16 code units) is computed over the text in place; each slot is one record of
 * eight int32s (hash, value, key offset, key length, then the key's first 8 code units packed two to an int), so
 * a probe for a key of at most 8 units (most words) reads one cache line, half of one in fact; longer keys are
 * compared against their copy in one flat pool of code units. Inlining the key halved the cache misses of a
 * probe, the largest part of the lookup's time once the table outgrows the L2 cache (35,000 surface forms on
 * NFCorpus: ADR 0012, 2026-11-23 evening).
 */
export class TokenTable {
  /**
   * Per slot ({@link SLOT} int32s): hash, value, key start in the pool (keys of more than {@link INLINE_UNITS} units only), key length (0: empty slot; keys are
   * never empty), then {@link INLINE_UNITS} code units of the key packed `unit[2i] | unit[2i + 1] << 16`, zero
   * past its end.
   */
  private slots = new Int32Array(SLOT << 12);
  private pool = new Uint16Array(1 << 14);
  private poolLen = 0;
  private entries = 0;

  get size(): number {
    return this.entries;
  }

  /**
   * The value stored for the non-empty range `units[start, end)`, or undefined. `h` is the range's
   * {@link hashRange}, which a caller that scanned the range already may pass.
   */
  get(units: Uint16Array, start: number, end: number, h = hashRange(units, start, end)): number | undefined {
    const { slots } = this;
    const mask = slots.length / SLOT - 1;
    const len = end - start;
    for (let s = (h & mask) * SLOT; ; s = (s + SLOT) & (slots.length - 1)) {
      const keyLen = slots[s + 3]!;
      if (keyLen === 0) return undefined;
      if (slots[s] !== h || keyLen !== len) continue;
      if (len <= INLINE_UNITS ? inlineEquals(slots, s, units, start, len) : this.poolEquals(slots[s + 2]!, units, start, len)) return slots[s + 1]!;
    }
  }

  /** Stores `value` for the non-empty range `units[start, end)`, which must not be in the table yet; `h` as in {@link get}. */
  set(units: Uint16Array, start: number, end: number, value: number, h = hashRange(units, start, end)): void {
    const len = end - start;
    const k = this.poolLen;
    if (len > INLINE_UNITS) {
      // Only keys too long for their slot need the pool. Loops rather than `set(subarray)`: a subarray is an
      // object allocated per call.
      if (k + len > this.pool.length) {
        const grown = new Uint16Array(Math.max(2 * this.pool.length, k + len));
        grown.set(this.pool);
        this.pool = grown;
      }
      const pool = this.pool;
      for (let i = 0; i < len; i++) pool[k + i] = units[start + i]!;
      this.poolLen += len;
    }
    const s = freeSlot(this.slots, h);
    const slots = this.slots;
    slots[s] = h;
    slots[s + 1] = value;
    slots[s + 2] = k;
    slots[s + 3] = len;
    for (let i = 0; 2 * i < len && i < INLINE_UNITS / 2; i++) slots[s + 4 + i] = pair(units, start + 2 * i, end);
    // Load factor at most 1/2 keeps probe runs short.
    if (2 * ++this.entries > this.slots.length / SLOT) {
      const old = this.slots;
      this.slots = new Int32Array(old.length * 2);
      const grown = this.slots;
      for (let o = 0; o < old.length; o += SLOT) {
        if (old[o + 3] === 0) continue;
        const to = freeSlot(grown, old[o]!);
        for (let i = 0; i < SLOT; i++) grown[to + i] = old[o + i]!;
      }
    }
  }

  private poolEquals(k: number, units: Uint16Array, start: number, len: number): boolean {
    const pool = this.pool;
    let i = 0;
    while (i < len && pool[k + i] === units[start + i]) i++;
    return i === len;
  }
}

/** Int32s per slot, a power of two. */
const SLOT = 8;
/** Code units of a key kept in its slot. */
const INLINE_UNITS = 8;

/** Code units `units[i]` and `units[i + 1]` (0 when `i + 1 >= end`) packed in one int32. */
function pair(units: Uint16Array, i: number, end: number): number {
  return units[i]! | (i + 1 < end ? units[i + 1]! << 16 : 0);
}

function inlineEquals(slots: Int32Array, s: number, units: Uint16Array, start: number, len: number): boolean {
  const end = start + len;
  for (let i = 0; 2 * i < len; i++) if (slots[s + 4 + i] !== pair(units, start + 2 * i, end)) return false;
  return true;
}

/** The first empty slot of `h`'s probe run. */
function freeSlot(slots: Int32Array, h: number): number {
  const mask = slots.length / SLOT - 1;
  let s = (h & mask) * SLOT;
  while (slots[s + 3] !== 0) s = (s + SLOT) & (slots.length - 1);
  return s;
}

/** FNV-1a's 32-bit offset basis and prime: a scanner hashing a token as it reads it starts from the basis. */
export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a over the UTF-16 code units `units[start, end)`: `h = (h ^ unit) * FNV_PRIME` from {@link FNV_OFFSET}. */
export function hashRange(units: Uint16Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ units[i]!, FNV_PRIME);
  return h;
}
