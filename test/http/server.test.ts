/** Over a real socket, as a POS would call it: listen, limits on the wire, port clashes, graceful shutdown. */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config.js';
import { testConfig } from '../support/config.js';
import { createLogger } from '../../src/core/logger.js';
import { startServer, type RunningServer } from '../../src/core/server.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { makeTestLicenseKeys } from '../support/licenses.js';
import { form } from './helpers.js';

const dirs: string[] = [];
const keys = makeTestLicenseKeys();

async function configFor(port = 0): Promise<Config> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-server-'));
  dirs.push(dataDir);
  return testConfig(dataDir, keys.publicKeyPem, { port });
}

async function start(analyzer = new FakeAnalyzer(), port = 0): Promise<RunningServer & { analyzer: FakeAnalyzer }> {
  const server = await startServer(await configFor(port), {
    analyzer,
    clock: new ManualClock(),
    logger: createLogger({ level: 'silent' }),
  });
  return Object.assign(server, { analyzer });
}

/** Raw HTTP: write `head` then `body` chunks, resolve with the response text once the server answers or closes. */
function rawRequest(url: string, head: string, chunks: Buffer[] = []): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let response = '';
    const socket = net.connect(Number(port), hostname, async () => {
      socket.write(head);
      for (const chunk of chunks) {
        if (response || socket.destroyed) break;
        if (!socket.write(chunk)) await new Promise((r) => socket.once('drain', r));
      }
    });
    socket.on('data', (data) => {
      response += data.toString('latin1');
      if (/\r\n\r\n[\s\S]*\}$/.test(response)) {
        socket.destroy();
        resolve(response);
      }
    });
    socket.on('error', () => (response ? resolve(response) : reject(new Error('socket error before any response'))));
    socket.on('close', () => resolve(response));
  });
}

let server: RunningServer & { analyzer: FakeAnalyzer };
let jpeg: Buffer;
beforeAll(async () => {
  server = await start();
  jpeg = await makeJpeg({ width: 320, height: 256 });
});
afterAll(async () => {
  await server.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('startServer', () => {
  it('listens on loopback and answers a POS-style multipart POST with fetch', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const body = new FormData();
    body.append('image', new Blob([jpeg], { type: 'image/jpeg' }), 'tire.jpg');
    body.append('position', 'RR');
    const res = await fetch(`${server.url}/api/v1/analyze`, { method: 'POST', body, headers: { 'Idempotency-Key': 'order-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const json = (await res.json()) as { success: boolean; data: { result: { disclaimer: string } } };
    expect(json.success).toBe(true);
    expect(json.data.result.disclaimer).toMatch(/not a full safety inspection/);
  });

  it('a port in use is a clear error that keeps the EADDRINUSE code, found before the database is opened', async () => {
    const port = Number(new URL(server.url).port);
    const config = await configFor(port);
    const failure = await startServer(config, { analyzer: new FakeAnalyzer(), clock: new ManualClock(), logger: createLogger({ level: 'silent' }) }).then(
      () => null,
      (error: unknown) => error as Error & { code?: string },
    );
    expect(failure?.message).toMatch(new RegExp(`^port ${port} is already in use`));
    expect(failure?.code).toBe('EADDRINUSE');
    // nothing opened, upgraded or released (another TireWear may be serving this folder), the lock given back
    expect(await readdir(config.dataDir)).toEqual([]);
  });
});

describe('limits on the wire', () => {
  it('an 11 MiB image is refused with 413 before the upload has ended', async () => {
    const { payload, headers } = form([{ name: 'image', data: Buffer.alloc(0) }]);
    const preamble = payload.subarray(0, payload.indexOf('\r\n--', 10));
    const chunk = (data: Buffer) => Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const head = `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${headers['content-type']}\r\n` + 'Transfer-Encoding: chunked\r\n\r\n';
    // 11 MiB of file data and never the closing boundary nor the last chunk: only a server
    // that judges while streaming can answer at all.
    const body = [chunk(preamble), ...Array.from({ length: 176 }, () => chunk(Buffer.alloc(65536, 0xab)))];
    const response = await rawRequest(server.url, head, body);
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(response).toMatch(/"code":"FILE_TOO_LARGE"/);
    expect(response.toLowerCase()).toContain('connection: close');
  });

  it('a multipart body that ends mid-part is a 400, not a hang', async () => {
    const { payload, headers } = form([{ name: 'image', data: jpeg }], { close: false });
    const cut = payload.subarray(0, 3000);
    const head = `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${headers['content-type']}\r\n` + `Content-Length: ${cut.length}\r\n\r\n`;
    const response = await rawRequest(server.url, head, [cut]);
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toMatch(/"code":"VALIDATION_ERROR"/);
  });

  it('oversized request headers are a 431 in the envelope', async () => {
    const head = `GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`;
    const response = await rawRequest(server.url, head);
    expect(response).toMatch(/^HTTP\/1\.1 431 /);
    expect(response).toMatch(/\{"success":false,"error":\{"code":"VALIDATION_ERROR","message":"Request headers are larger/);
  });

  it('an HTTP/1.0 request without Host is refused', async () => {
    const response = await rawRequest(server.url, 'GET /api/v1/health HTTP/1.0\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.[01] 403 /);
  });
});

describe('graceful shutdown', () => {
  it('close() lets an analysis in flight finish, then closes the core', async () => {
    const own = await start();
    const release = own.analyzer.hold();
    const body = new FormData();
    body.append('image', new Blob([jpeg], { type: 'image/jpeg' }), 'tire.jpg');
    const inFlight = fetch(`${own.url}/api/v1/analyze`, { method: 'POST', body });
    await own.analyzer.started(1);

    let closed = false;
    const closing = own.close().then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    expect(own.analyzer.closed).toBe(false);

    release();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
    await closing;
    expect(own.analyzer.closed).toBe(true);
    await expect(fetch(`${own.url}/api/v1/health`)).rejects.toThrow();
  });
});

describe('npm run serve', () => {
  it('a bad setting exits 2 with the reason', async () => {
    const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/core/cli/serve.ts', '--port', 'abc'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { ...process.env, TIREWEAR_DATA_DIR: dirs[0] },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/TIREWEAR_PORT must be an integer/);
  });
});
