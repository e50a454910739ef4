import { existsSync, symlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../harness/errors.js';
import { memoryLogger } from '../../harness/log.js';
import { datasetsCommand } from '../../harness/cli/datasets.command.js';
import type { CliIo } from '../../harness/cli/io.js';
import { DEFAULT_TIMEOUTS, downloadVerified, redactUrl } from './download.js';
import { tempDir } from '../../harness/testing/temp.js';

const BODY = Buffer.from('0123456789'.repeat(1000));
const tmp = () => tempDir('network');
const caught = <T>(p: Promise<T>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
const noChecksum = { sha256: null, md5: null };

let server: Server | undefined;
let tcp: TcpServer | undefined;
const sockets: Socket[] = [];
const seen: { url: string; auth: string | undefined }[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<string> {
  seen.length = 0;
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    handler(req, res, seen.length);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A TCP server that accepts every connection and never sends a byte. */
async function silent(): Promise<string> {
  tcp = createTcpServer((s) => void sockets.push(s));
  await new Promise<void>((r) => tcp!.listen(0, '127.0.0.1', () => r()));
  return `127.0.0.1:${(tcp.address() as AddressInfo).port}`;
}

afterEach(async () => {
  if (server !== undefined) {
    server.closeAllConnections();
    await new Promise((r) => server!.close(r));
    server = undefined;
  }
  for (const s of sockets.splice(0)) s.destroy();
  if (tcp !== undefined) {
    await new Promise((r) => tcp!.close(r));
    tcp = undefined;
  }
});

describe('redactUrl', () => {
  it('hides user:password and credential-like query values, keeps the rest', () => {
    expect(redactUrl('https://alex:hunter2@mirror.example/data/?access_token=abc&X-Amz-Signature=def&api_key=ghi&sig=jkl&page=2')).toBe(
      'https://***@mirror.example/data/?access_token=***&X-Amz-Signature=***&api_key=***&sig=***&page=2',
    );
    expect(redactUrl('http://127.0.0.1:8080/a.json')).toBe('http://127.0.0.1:8080/a.json');
    expect(redactUrl('not a url //u:p@host')).toBe('not a url //***@host');
  });
});

describe('download timeouts, retries and credentials', () => {
  it('defaults stay well under a minute', () => {
    expect(DEFAULT_TIMEOUTS.connectTimeoutMs + DEFAULT_TIMEOUTS.idleTimeoutMs).toBeLessThanOrEqual(30_000);
  });

  it('a server that accepts and never answers fails within the idle timeout, once, naming the URL without credentials', async () => {
    const host = await silent();
    const dir = await tmp();
    const log = memoryLogger();
    const t0 = Date.now();
    const err = await caught(
      downloadVerified(`http://alex:hunter2@${host}/f.bin?token=tok-secret-1`, join(dir, 'f.bin'), noChecksum, {
        log,
        timeouts: { idleTimeoutMs: 400 },
        backoffMs: () => 0,
      }),
    );
    const took = Date.now() - t0;
    expect(err).toBeInstanceOf(HarnessError);
    expect((err as Error).message).toBe(`http://***@${host}/f.bin?token=***: no data for 0.4 s (idle timeout)`);
    expect(took).toBeGreaterThanOrEqual(400);
    expect(took).toBeLessThan(3000);
    expect(sockets).toHaveLength(1); // not retried
    expect(log.lines.join('\n')).not.toMatch(/hunter2|tok-secret-1/);
  });

  it('harness datasets get against a silent server fails within --idle-timeout, naming the URL', async () => {
    const host = await silent();
    const dir = await tmp();
    const log = memoryLogger();
    const cli: CliIo = { out: () => undefined, log, env: { HARNESS_DATASETS_BASE_URL: `http://${host}/mirror` }, cwd: dir };
    const t0 = Date.now();
    const err = await caught(datasetsCommand.run({ _: [], $0: 'harness', action: 'get', name: 'locomo', dir, idleTimeout: 0.5 } as never, cli));
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((err as HarnessError).exitCode).toBe(1);
    expect((err as Error).message).toBe(`http://${host}/mirror/locomo10.json: no data for 0.5 s (idle timeout)`);
  });

  it('harness datasets get refuses a base URL with user:password or a credential parameter (exit 2), before any request, never echoing it', async () => {
    const host = await serve((_req, res) => void res.writeHead(200, { 'content-length': BODY.length }).end(BODY));
    const dir = await tmp();
    const cases = [
      { env: { HARNESS_DATASETS_BASE_URL: `http://alex:hunter2@${host}/mirror` }, flag: undefined, named: 'HARNESS_DATASETS_BASE_URL' },
      { env: {}, flag: `http://alex:hunter2@${host}/mirror`, named: '--base-url' },
      { env: {}, flag: `http://${host}/mirror?token=hunter2`, named: '--base-url' },
    ];
    for (const c of cases) {
      const log = memoryLogger();
      const cli: CliIo = { out: () => undefined, log, env: c.env, cwd: dir };
      const argv = { _: [], $0: 'harness', action: 'get', name: 'locomo', dir, ...(c.flag === undefined ? {} : { baseUrl: c.flag }) };
      const err = await caught(datasetsCommand.run(argv as never, cli));
      expect((err as HarnessError).exitCode).toBe(2);
      expect((err as Error).message).toMatch(new RegExp(`^${c.named} holds (a user:password|a credential in its query)`));
      expect(`${(err as Error).message} ${(err as HarnessError).hint} ${log.lines.join('\n')}`).not.toContain('hunter2');
    }
    expect(seen).toHaveLength(0);
  });

  it('retries 5xx and 429 (resuming), sends credentials as a header and prints them nowhere', async () => {
    const host = await serve((_req, res, n) => {
      if (n === 1) res.writeHead(503).end();
      else if (n === 2) res.writeHead(429).end();
      else res.writeHead(200, { 'content-length': BODY.length }).end(BODY);
    });
    const dir = await tmp();
    const log = memoryLogger();
    await downloadVerified(`http://alex:hunter2@${host}/f.bin?access_token=tok-secret-2`, join(dir, 'f.bin'), noChecksum, { log, backoffMs: () => 0 });
    expect(seen).toHaveLength(3);
    expect(seen[0]).toEqual({ url: '/f.bin?access_token=tok-secret-2', auth: `Basic ${Buffer.from('alex:hunter2').toString('base64')}` });
    expect(log.lines.filter((l) => l.startsWith('warning:'))).toEqual([
      `warning: http://***@${host}/f.bin?access_token=***: attempt 1 of 3 failed (HTTP 503 Service Unavailable); resuming`,
      `warning: http://***@${host}/f.bin?access_token=***: attempt 2 of 3 failed (HTTP 429 Too Many Requests); resuming`,
    ]);
  });

  it('does not retry a 4xx, and the error carries no credential', async () => {
    const host = await serve((_req, res) => void res.writeHead(403).end());
    const dir = await tmp();
    const log = memoryLogger();
    const err = await caught(downloadVerified(`http://alex:hunter2@${host}/f.bin`, join(dir, 'f.bin'), noChecksum, { log, backoffMs: () => 0 }));
    expect((err as Error).message).toBe(`http://***@${host}/f.bin: HTTP 403 Forbidden`);
    expect(seen).toHaveLength(1);
    expect(log.lines.filter((l) => l.startsWith('warning:'))).toEqual([]);
  });

  it('a refused connection is retried, and fails after the attempts with a clear message', async () => {
    const host = await silent();
    await new Promise((r) => tcp!.close(r)); // nothing listens on that port any more
    tcp = undefined;
    const dir = await tmp();
    const log = memoryLogger();
    const err = await caught(downloadVerified(`http://${host}/f.bin`, join(dir, 'f.bin'), noChecksum, { log, backoffMs: () => 0 }));
    expect((err as Error).message).toMatch(new RegExp(`^http://${host}/f.bin: download failed after 3 attempts: cannot connect: connect ECONNREFUSED`));
    expect(log.lines.filter((l) => l.includes('attempt'))).toHaveLength(3);
  });
});

describe('local failures name the file', () => {
  const full = existsSync('/dev/full');
  if (!full) process.stderr.write('[skip] full-disk download test: /dev/full is not here\n');
  it.skipIf(!full)('a full disk names the file being written and is not retried', async () => {
    const host = await serve((_req, res) => void res.writeHead(200, { 'content-length': BODY.length }).end(BODY));
    const dir = await tmp();
    const dest = join(dir, 'f.bin');
    // Writes to /dev/full fail with ENOSPC, as on a full disk.
    symlinkSync('/dev/full', `${dest}.part`);
    const err = await caught(downloadVerified(`http://${host}/f.bin`, dest, noChecksum, { log: memoryLogger(), backoffMs: () => 0 }));
    expect(err).toBeInstanceOf(HarnessError);
    expect((err as Error).message).toBe(`cannot write ${dest}.part: no space left on the device (ENOSPC)`);
    expect(seen).toHaveLength(1);
  });

  it('a corrupt file already present is deleted (and said so), then fetched again', async () => {
    const host = await serve((_req, res) => void res.writeHead(200, { 'content-length': 5 }).end('wrong'));
    const dir = await tmp();
    const file = join(dir, 'locomo10.json');
    await writeFile(file, 'corrupt');
    const log = memoryLogger();
    const cli: CliIo = { out: () => undefined, log, env: {}, cwd: dir };
    const err = await caught(datasetsCommand.run({ _: [], $0: 'harness', action: 'get', name: 'locomo', dir, baseUrl: `http://${host}` } as never, cli));
    expect(log.lines[0]).toMatch(
      new RegExp(`^warning: ${file} \\(already present\\): sha256 mismatch: expected 79fa87e9\\w+, got \\w+; deleted it, downloading it again$`),
    );
    expect(seen).toHaveLength(1);
    expect((err as Error).message).toMatch(/^locomo: sha256 mismatch: .*; the downloaded file was deleted$/);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.part`)).toBe(false);
  });
});
