import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../harness/errors.js';
import { memoryLogger } from '../../harness/log.js';
import { datasetsCommand } from '../../harness/cli/datasets.command.js';
import type { CliIo } from '../../harness/cli/io.js';
import { datasetCatalog, findDataset } from './catalog.js';
import { downloadVerified } from './download.js';
import { extractZip } from './extract.js';
import { describeVerification, getDatasetEntry } from './get.js';
import { tempDir } from '../../harness/testing/temp.js';
import { readLongMemEval } from '../adapters/longmemeval.js';
import { longMemEvalOptions } from '../adapters/longmemeval.js';
import { writeSyntheticLongMemEval } from '../adapters/longmemeval-synthetic.js';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');

/** 100 KB of deterministic, non-repeating-looking bytes. */
const BODY = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7919 + (i >> 8)) & 0xff));

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server | undefined;
const seen: { url: string; range: string | undefined }[] = [];

async function serve(handler: Handler): Promise<string> {
  seen.length = 0;
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', range: req.headers.range });
    handler(req, res);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  if (server !== undefined) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
    server = undefined;
  }
});

/** Serves BODY, honouring `Range: bytes=N-` with 206. */
function rangeServer(body: Uint8Array): Handler {
  return (req, res) => {
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m !== null) {
      const from = Number(m[1]);
      res.writeHead(206, { 'content-length': body.length - from, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` });
      res.end(body.subarray(from));
      return;
    }
    res.writeHead(200, { 'content-length': body.length });
    res.end(body);
  };
}

const tmp = () => tempDir('datasets');

describe('downloadVerified (loopback HTTP)', () => {
  it('downloads, verifies sha256 and renames atomically', async () => {
    const base = await serve(rangeServer(BODY));
    const dir = await tmp();
    const dest = join(dir, 'f.bin');
    const r = await downloadVerified(`${base}/f.bin`, dest, { sha256: sha256(BODY), md5: null }, { log: memoryLogger() });
    expect(r.verification).toEqual({ status: 'verified', by: 'sha256' });
    expect(Buffer.compare(await readFile(dest), BODY)).toBe(0);
    expect(existsSync(`${dest}.part`)).toBe(false);
  });

  it('resumes with a Range request after the server drops the connection mid-body', async () => {
    let calls = 0;
    const base = await serve((req, res) => {
      calls += 1;
      if (calls === 1) {
        // Promise the full length, send 40,000 bytes, then cut the connection.
        res.writeHead(200, { 'content-length': BODY.length });
        res.write(BODY.subarray(0, 40_000), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      rangeServer(BODY)(req, res);
    });
    const dir = await tmp();
    const dest = join(dir, 'f.bin');
    const log = memoryLogger();
    const r = await downloadVerified(`${base}/f.bin`, dest, { sha256: null, md5: md5(BODY) }, { log });
    expect(seen.map((s) => s.range)).toEqual([undefined, 'bytes=40000-']);
    expect(r.verification).toEqual({ status: 'verified', by: 'md5' });
    expect(Buffer.compare(await readFile(dest), BODY)).toBe(0);
    expect(log.lines.some((l) => l.includes('attempt 1 of 3 failed') && l.includes('resuming'))).toBe(true);
  });

  it('resumes a .part left by an earlier run, and restarts when the server ignores Range', async () => {
    const dir = await tmp();
    const dest = join(dir, 'f.bin');
    await writeFile(`${dest}.part`, BODY.subarray(0, 12_345));
    const base = await serve(rangeServer(BODY));
    await downloadVerified(`${base}/f.bin`, dest, { sha256: sha256(BODY), md5: null }, { log: memoryLogger() });
    expect(seen.map((s) => s.range)).toEqual(['bytes=12345-']);

    const dest2 = join(dir, 'g.bin');
    await writeFile(`${dest2}.part`, Buffer.from('stale bytes from another file'));
    server!.closeAllConnections();
    await new Promise((r) => server!.close(r));
    const base2 = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': BODY.length });
      res.end(BODY);
    });
    await downloadVerified(`${base2}/g.bin`, dest2, { sha256: sha256(BODY), md5: null }, { log: memoryLogger() });
    expect(Buffer.compare(await readFile(dest2), BODY)).toBe(0);
  });

  it('a checksum mismatch throws, deletes the .part and leaves no file', async () => {
    const base = await serve(rangeServer(BODY));
    const dir = await tmp();
    const dest = join(dir, 'f.bin');
    const wrong = '0'.repeat(64);
    const err = await downloadVerified(`${base}/f.bin`, dest, { sha256: wrong, md5: null }, { log: memoryLogger() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarnessError);
    expect((err as Error).message).toContain(`sha256 mismatch: expected ${wrong}, got ${sha256(BODY)}`);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.part`)).toBe(false);
  });

  it('an HTTP error is not retried and names the status', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    const dir = await tmp();
    await expect(downloadVerified(`${base}/x`, join(dir, 'x'), { sha256: null, md5: null }, { log: memoryLogger() })).rejects.toThrow(/HTTP 404/);
    expect(seen).toHaveLength(1);
  });
});

/** A minimal stored (uncompressed) zip, enough for yauzl: local headers, central directory, end record. */
function makeZip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const nameBuf = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBuf, data);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

describe('extractZip', () => {
  it('extracts a BEIR-shaped zip, lifting its single top folder into place', async () => {
    const dir = await tmp();
    const zip = join(dir, 'set.zip');
    await writeFile(zip, makeZip({ 'set/corpus.jsonl': '{"_id":"d1","text":"a"}\n', 'set/qrels/test.tsv': 'q\td1\t1\n' }));
    await extractZip(zip, join(dir, 'set'), memoryLogger());
    expect(await readFile(join(dir, 'set', 'qrels', 'test.tsv'), 'utf8')).toBe('q\td1\t1\n');
    expect(existsSync(join(dir, 'set.extracting'))).toBe(false);
  });

  it('refuses members that climb out of the target folder', async () => {
    const dir = await tmp();
    const zip = join(dir, 'bad.zip');
    await writeFile(zip, makeZip({ '../evil.txt': 'x' }));
    await expect(extractZip(zip, join(dir, 'bad'), memoryLogger())).rejects.toBeInstanceOf(HarnessError);
    expect(existsSync(join(dir, 'evil.txt'))).toBe(false);
    expect(existsSync(join(dir, 'bad'))).toBe(false);
  });
});

function io(env: Record<string, string> = {}): CliIo & { text: () => string } {
  let text = '';
  return { out: (t) => void (text += t), log: memoryLogger(), env, cwd: process.cwd(), text: () => text };
}

const run = (args: Record<string, unknown>, cli: CliIo) => datasetsCommand.run({ _: [], $0: 'harness', ...args } as never, cli);

describe('harness datasets', () => {
  it('list names every catalog entry with its format and checksum kind', async () => {
    const cli = io();
    await run({ action: 'list' }, cli);
    for (const d of datasetCatalog) expect(cli.text()).toMatch(new RegExp(`^${d.name}\\s+${d.format}\\s+(sha256|md5|none)`, 'm'));
  });

  it('get without a published checksum downloads from the base URL and says it was not verified', async () => {
    const body = Buffer.from('[{"question_id": "q"}]');
    const base = await serve(rangeServer(body));
    const dir = await tmp();
    const entry = { ...findDataset('longmemeval-oracle')!, name: 'unpinned', sha256: null, bytes: undefined };
    const first = await getDatasetEntry(entry, { dir, baseUrl: `${base}/mirror/`, log: memoryLogger() });
    expect(seen.map((s) => s.url)).toEqual(['/mirror/longmemeval_oracle.json']);
    expect(describeVerification(first)).toBe(
      `NOT verified: no published checksum is known for unpinned; computed sha256 ${sha256(body)} (record it to pin this copy)`,
    );
    // Second get: already present, re-hashed, no request.
    const again = await getDatasetEntry(entry, { dir, baseUrl: base, log: memoryLogger() });
    expect(seen).toHaveLength(1);
    expect(again.source).toBe('present');
  });

  it('get of a file whose bytes differ from the pinned checksum fails and keeps nothing', async () => {
    const base = await serve(rangeServer(Buffer.from('not the real locomo10.json')));
    const dir = await tmp();
    const err = await run({ action: 'get', name: 'locomo', dir, baseUrl: base }, io()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarnessError);
    expect((err as HarnessError).exitCode).toBe(1);
    expect((err as Error).message).toMatch(/locomo: sha256 mismatch: expected 79fa87e9/);
    expect(existsSync(join(dir, 'locomo10.json'))).toBe(false);
  });

  it('--from imports a local copy and still checks it (md5 for BEIR zips)', async () => {
    const dir = await tmp();
    const fake = join(dir, 'nfcorpus-copy.zip');
    await writeFile(fake, makeZip({ 'nfcorpus/corpus.jsonl': '{}' }));
    const err = await run({ action: 'get', name: 'nfcorpus', dir: join(dir, 'ds'), from: fake }, io()).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/nfcorpus: md5 mismatch: expected a89dba18a62ef92f7d323ec890a0d38d/);
  });

  it('unknown names and a missing NAME are usage errors listing the catalog', async () => {
    const err = await run({ action: 'get', name: 'locomoo', dir: await tmp() }, io()).catch((e: unknown) => e);
    expect((err as HarnessError).exitCode).toBe(2);
    expect((err as HarnessError).hint).toMatch(/known: locomo, longmemeval-oracle/);
    await expect(run({ action: 'get' }, io())).rejects.toThrow(/needs a NAME/);
  });
});

describe('LongMemEval entries: pinned revision, sha256 and size, on a generated file served over loopback', () => {
  const M_SHA256 = '9d79e5524794a2e6900a3aa9cb7d9152c5a3e8319c9a87c25494ba1eacee495f';

  it('list shows longmemeval-s and -m verified by sha256 at a pinned Hugging Face revision', async () => {
    const cli = io();
    await run({ action: 'list' }, cli);
    expect(cli.text()).toMatch(/^longmemeval-m\s+longmemeval\s+sha256\s/m);
    expect(cli.text()).toMatch(/^longmemeval-s\s+longmemeval\s+sha256\s/m);
    for (const d of datasetCatalog.filter((e) => e.format === 'longmemeval')) {
      expect(d.url).toMatch(/^https:\/\/huggingface\.co\/datasets\/xiaowu0162\/longmemeval(-cleaned)?\/resolve\/[0-9a-f]{40}\//);
      expect(d.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(d.bytes).toBeGreaterThan(10_000_000);
    }
    expect(findDataset('longmemeval-m')?.sha256).toBe(M_SHA256);
  });

  it('get longmemeval-m of a file that is not the pinned one fails (exit 1), names the dataset and keeps nothing', async () => {
    const dir = await tmp();
    const gen = join(dir, 'generated.json');
    const wrote = await writeSyntheticLongMemEval(gen, { bytes: 300_000, seed: 5 });
    const base = await serve(rangeServer(await readFile(gen)));
    const ds = join(dir, 'ds');
    const cli = io({ HARNESS_DATASETS_BASE_URL: `${base}/mirror` });
    const err = await run({ action: 'get', name: 'longmemeval-m', dir: ds }, cli).catch((e: unknown) => e);
    expect(seen.map((s) => s.url)).toEqual(['/mirror/longmemeval_m_cleaned.json']);
    expect((err as HarnessError).exitCode).toBe(1);
    expect((err as Error).message).toBe(
      `longmemeval-m: size mismatch: expected 2,737,100,077 bytes, got ${wrote.bytes.toLocaleString('en-US')} bytes; the downloaded file was deleted`,
    );
    expect(existsSync(join(ds, 'longmemeval_m_cleaned.json'))).toBe(false);
    expect(existsSync(join(ds, 'longmemeval_m_cleaned.json.part'))).toBe(false);
    // The same size with other bytes: the sha256 says so.
    const sameSize = { ...findDataset('longmemeval-m')!, bytes: wrote.bytes };
    const err2 = await getDatasetEntry(sameSize, { dir: ds, baseUrl: base, log: memoryLogger() }).catch((e: unknown) => e);
    expect((err2 as HarnessError).exitCode).toBe(1);
    expect((err2 as Error).message).toMatch(new RegExp(`^longmemeval-m: sha256 mismatch: expected ${M_SHA256}, got ${sha256(await readFile(gen))}`));
    expect(existsSync(join(ds, 'longmemeval_m_cleaned.json'))).toBe(false);
  });

  it('a file matching its pin is verified, kept, and loads as a stream with the counts written', async () => {
    const dir = await tmp();
    const gen = join(dir, 'generated.json');
    const wrote = await writeSyntheticLongMemEval(gen, { bytes: 300_000, seed: 6 });
    const body = await readFile(gen);
    const base = await serve(rangeServer(body));
    const pinned = { ...findDataset('longmemeval-m')!, sha256: sha256(body), bytes: body.length };
    const r = await getDatasetEntry(pinned, { dir: join(dir, 'ds'), baseUrl: base, log: memoryLogger() });
    expect(r.verification).toEqual({ status: 'verified', by: 'sha256' });
    expect(describeVerification(r)).toBe(`verified: sha256 ${sha256(body)} matches the catalog`);
    const { stats } = await readLongMemEval(r.evalsetPath, longMemEvalOptions.parse({}));
    expect([stats.questions, stats.sessions, stats.turns]).toEqual([wrote.questions, wrote.haystackSessions, wrote.turns]);
  });
});

describe('the datasets directory is gitignored', () => {
  it('data/ is in .gitignore', async () => {
    const gi = await readFile(join(process.cwd(), '.gitignore'), 'utf8');
    expect(gi.split('\n')).toContain('data/');
  });
});
