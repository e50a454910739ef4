/** Bytes per chunk: growth by chunks never copies, and a chunk read back is released at once. */
const CHUNK = 1 << 20;

/** An ES2024 resizable ArrayBuffer (Node 20 has them; the project's lib is ES2023, hence the local type). */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const Resizable = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;
/** The most bytes one posting takes: two varints of at most 5 bytes. */
const MAX_BYTES = 10;

/**
 * The forward postings of an indexer, (term id, tf) per distinct term of each document in indexing order,
 * written once and read back once in the same order to lay out the inverted lists. Each posting is a varint of
 * `termId * 2 + (tf > 1)` followed, when tf > 1, by a varint of tf (Lucene's doc/freq trick): about 2 bytes for
 * a posting of English text, where an int32 pair takes 8 and a packed int32 4. A posting never straddles two
 * chunks (a chunk with fewer than 10 bytes left is closed), so reading needs no boundary checks per byte.
 *
 * Each chunk is a resizable ArrayBuffer that the reader shrinks to 0 bytes as soon as it has read past it,
 * which returns its memory to the system at once, where a dropped buffer waits for a major GC. The inverted
 * lists being filled meanwhile commit their pages as they are written, so the two do not peak together: at a
 * million documents this is the difference between the index's peak and its final size (ADR 0012).
 */
export class ForwardBuffer {
  /** Postings written. */
  length = 0;
  private readonly chunks: ResizableArrayBuffer[] = [];
  private chunk: Uint8Array = new Uint8Array(0);
  private offset = CHUNK;

  /** Appends one posting: `term` in [0, 2^31), `tf` >= 1. */
  push(term: number, tf: number): void {
    if (this.offset > CHUNK - MAX_BYTES) {
      const chunk = new Resizable(CHUNK, { maxByteLength: CHUNK });
      this.chunks.push(chunk);
      this.chunk = new Uint8Array(chunk);
      this.offset = 0;
    }
    const buf = this.chunk;
    let o = this.offset;
    // term < 2^31, so 2 term + 1 < 2^32 and `>>> 7` (unsigned) is exact.
    let v = term * 2 + (tf > 1 ? 1 : 0);
    while (v >= 0x80) {
      buf[o++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[o++] = v;
    if (tf > 1) {
      v = tf;
      while (v >= 0x80) {
        buf[o++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[o++] = v;
    }
    this.offset = o;
    this.length++;
  }

  /** A reader from the first posting; each chunk is released once read past, so the buffer is read once. */
  reader(): ForwardReader {
    return new ForwardReader(this.chunks);
  }
}

/** Reads a {@link ForwardBuffer} in order: each {@link next} sets `term` and `tf`. */
export class ForwardReader {
  term = 0;
  tf = 0;
  private index = -1;
  private chunk: Uint8Array = new Uint8Array(0);
  private offset = CHUNK;

  constructor(private readonly chunks: readonly ResizableArrayBuffer[]) {}

  next(): void {
    if (this.offset > CHUNK - MAX_BYTES) {
      if (this.index >= 0) this.chunks[this.index]!.resize(0);
      this.chunk = new Uint8Array(this.chunks[++this.index]!);
      this.offset = 0;
    }
    const buf = this.chunk;
    let o = this.offset;
    let b = buf[o++]!;
    let v = b & 0x7f;
    for (let shift = 7; b >= 0x80; shift += 7) {
      b = buf[o++]!;
      v += (b & 0x7f) * 2 ** shift;
    }
    this.term = Math.floor(v / 2);
    if ((v & 1) === 0) this.tf = 1;
    else {
      b = buf[o++]!;
      v = b & 0x7f;
      for (let shift = 7; b >= 0x80; shift += 7) {
        b = buf[o++]!;
        v += (b & 0x7f) * 2 ** shift;
      }
      this.tf = v;
    }
    this.offset = o;
  }

  /** Releases the chunk being read: call once every posting has been read. */
  close(): void {
    if (this.index >= 0) this.chunks[this.index]!.resize(0);
  }
}
