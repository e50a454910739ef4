// The subset of yauzl 3.x (https://github.com/thejoshwolfe/yauzl) that evalset/datasets/extract.ts uses; the
// package ships no types and @types/yauzl would be a second dependency (docs/adr/0006-datasets.md).
declare module 'yauzl' {
  import type { Readable } from 'node:stream';
  export interface Entry {
    readonly fileName: string;
    readonly uncompressedSize: number;
  }
  export interface ZipFile {
    readonly entryCount: number;
    eachEntry(): AsyncIterable<Entry>;
    openReadStreamPromise(entry: Entry): Promise<Readable>;
    close(): void;
  }
  export function openPromise(path: string, options?: { autoClose?: boolean; strictFileNames?: boolean }): Promise<ZipFile>;
}
