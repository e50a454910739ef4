/**
 * An open-addressing hash table from a range of UTF-16 code units to an int, looked up without cutting the range
 * out as a substring. Indexing looks up every token of the corpus; with a `Map<string, number>` each lookup first
 * allocates the substring and hashes it, which made the lookup the largest single cost of indexing. Here the
 * hash (32-bit FNV-1a over UTF-16 code units) is computed over the text in place; each slot is one record of
 * four int32s (hash, value, key offset, key length) and keys are UTF-16 code units in one flat pool, so a probe
 * reads one cache line and one contiguous key instead of chasing string objects across the heap.
 */
export class TokenTable {
  /** Per slot: hash, value, key start in the pool, key length (0: empty slot; keys are never empty). */
  private slots = new Int32Array(4 << 12);
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
    const { slots, pool } = this;
    const mask = (slots.length >> 2) - 1;
    const len = end - start;
    for (let s = (h & mask) << 2; ; s = (s + 4) & (slots.length - 1)) {
      const keyLen = slots[s + 3]!;
      if (keyLen === 0) return undefined;
      if (slots[s] !== h || keyLen !== len) continue;
      const k = slots[s + 2]!;
      let i = 0;
      while (i < len && pool[k + i] === units[start + i]) i++;
      if (i === len) return slots[s + 1]!;
    }
  }

  /** Stores `value` for the non-empty range `units[start, end)`, which must not be in the table yet; `h` as in {@link get}. */
  set(units: Uint16Array, start: number, end: number, value: number, h = hashRange(units, start, end)): void {
    const len = end - start;
    if (this.poolLen + len > this.pool.length) {
      const pool = new Uint16Array(Math.max(2 * this.pool.length, this.poolLen + len));
      pool.set(this.pool);
      this.pool = pool;
    }
    const k = this.poolLen;
    this.pool.set(units.subarray(start, end), k);
    this.poolLen += len;
    place(this.slots, h, value, k, len);
    // Load factor at most 1/2 keeps probe runs short.
    if (2 * ++this.entries > this.slots.length >> 2) {
      const old = this.slots;
      this.slots = new Int32Array(old.length * 2);
      for (let s = 0; s < old.length; s += 4) if (old[s + 3] !== 0) place(this.slots, old[s]!, old[s + 1]!, old[s + 2]!, old[s + 3]!);
    }
  }
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

function place(slots: Int32Array, h: number, value: number, keyStart: number, keyLen: number): void {
  const mask = (slots.length >> 2) - 1;
  let s = (h & mask) << 2;
  while (slots[s + 3] !== 0) s = (s + 4) & (slots.length - 1);
  slots[s] = h;
  slots[s + 1] = value;
  slots[s + 2] = keyStart;
  slots[s + 3] = keyLen;
}
