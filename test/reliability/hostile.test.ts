/**
 * Slow and hostile clients over real sockets: a trickled upload or trickled headers are cut
 * off with 408 while other scans keep being served (an upload never holds an analysis slot);
 * oversized headers, too many form parts and forged Host or Origin headers are refused in the
 * envelope; through all of it the shop's own POS is served and nothing is charged for abuse.
 */
import net from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildServer } from '../../src/core/http/app.js';
import { SQLITE_FILE_NAME } from '../../src/core/storage/index.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { testCore, type TestCore } from '../support/core.js';
import { apiKeyFor, redeem, signedIn } from './accounts.js';
import { BOUNDARY, multipart } from './corpus.js';
import { analyze, call } from './http.js';
import { readLedger } from './ledger.js';

const REQUEST_TIMEOUT_MS = 1000;

let t: TestCore;
let app: FastifyInstance;
let url: string;
let port: number;
let jpeg: Buffer;
let posKey: string;
let cookie: string;

beforeAll(async () => {
  t = await testCore({ config: { analysisConcurrency: 1, analysisQueueLimit: 2 } });
  app = await buildServer(t.core, { logger: false, requestTimeoutMs: REQUEST_TIMEOUT_MS });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
  port = Number(new URL(url).port);
  jpeg = await makeJpeg({ width: 320, height: 256 });
  cookie = await signedIn(app);
  await redeem(app, cookie, t.issueCode({ kind: 'pro', expiresAt: '2099-01-01T00:00:00Z' }));
  posKey = await apiKeyFor(app, cookie);
});

afterAll(async () => {
  await app.close();
  await t.cleanup();
});

interface Trickle {
  /** Everything the server sent before closing. */
  response: Promise<string>;
  /** Milliseconds from the first byte sent to the socket closing. */
  closedAfter: Promise<number>;
}

/** Sends `data` a few bytes every `everyMs`, like a stalled phone on bad Wi-Fi, until the server closes. */
function trickle(data: Buffer, everyMs = 50, bytes = 16): Trickle {
  let response = '';
  const started = performance.now();
  const socket = net.connect(port, '127.0.0.1');
  let sent = 0;
  const timer = setInterval(() => {
    if (sent < data.length && socket.writable) socket.write(data.subarray(sent, (sent += bytes)));
  }, everyMs);
  socket.on('data', (chunk) => (response += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(performance.now() - started);
    }),
  );
  return { response: closed.then(() => response), closedAfter: closed };
}

function uploadRequest(body: Buffer, extraHeaders = '', key: string | null = posKey): Buffer {
  const head =
    `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\n${key ? `X-API-Key: ${key}\r\n` : ''}${extraHeaders}` +
    `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), body]);
}

describe('slow clients', () => {
  test('trickled uploads, more of them than the queue holds, are cut off with 408 while the POS is served', async () => {
    // with the POS's key and anonymous by turns: of the six upload slots, the last is kept for a third caller
    const slow = Array.from({ length: 5 }, (_, i) => trickle(uploadRequest(multipart(jpeg), '', i % 2 === 0 ? posKey : null)));
    await new Promise((r) => setTimeout(r, 100));

    // Five uploads in progress, a queue of one running and two waiting: uploads hold no slot.
    const pos = await analyze(url, jpeg, { 'x-api-key': posKey });
    expect(pos.status).toBe(200);
    expect(t.analyzer.active).toBe(0);

    for (const s of slow) {
      const response = await s.response;
      expect(response, response).toMatch(/^HTTP\/1\.1 408 [\s\S]*"success":false/);
      // Cut off near the timeout (the server checks connections every quarter of it), not at the end of the body.
      expect(await s.closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS * 3);
    }
  });

  test('trickled headers (slowloris) are cut off too', async () => {
    const head = Buffer.from(`GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n${'X-Padding: a\r\n'.repeat(200)}\r\n`);
    const s = trickle(head, 50, 4);
    expect(await s.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(await s.closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS * 3);
    expect((await call(url, 'GET', '/api/v1/health')).status).toBe(200);
  });
});

describe('hostile requests', () => {
  const raw = (request: Buffer): Promise<string> =>
    new Promise((resolve) => {
      let response = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
      socket.on('data', (chunk) => {
        response += chunk.toString('latin1');
        // One answer is all we wait for; the server may keep the connection open after it.
        if (/\r\n\r\n[\s\S]*\}$/.test(response)) socket.destroy();
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(response));
    });

  test('oversized headers, floods of form fields, an overlong field and forged Host or Origin are refused; the POS is served; nothing is charged', async () => {
    const usedBefore = (await readLedger(path.join(t.dataDir, SQLITE_FILE_NAME), t.config.imagesDir)).charged;
    const manyParts = Buffer.concat([
      ...Array.from({ length: 500 }, (_, i) => Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`)),
      multipart(jpeg),
    ]);
    const longField = Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="vehicle"\r\n\r\n${'A'.repeat(100_000)}\r\n`),
      multipart(jpeg),
    ]);

    const [bigHeaders, parts, field, rebinding, crossSite, posDuring] = await Promise.all([
      raw(uploadRequest(multipart(jpeg), `Cookie: ${'a=b; '.repeat(8000)}\r\n`)),
      raw(uploadRequest(manyParts)),
      raw(uploadRequest(longField)),
      analyze(url, jpeg, { host: 'tirewear.attacker.example', 'x-api-key': posKey }),
      analyze(url, jpeg, { origin: 'https://attacker.example', cookie }),
      analyze(url, jpeg, { 'x-api-key': posKey }),
    ]);

    expect(bigHeaders).toMatch(/^HTTP\/1\.1 431 [\s\S]*"success":false/);
    for (const answer of [parts, field]) expect(answer).toMatch(/^HTTP\/1\.1 400 [\s\S]*"code":"VALIDATION_ERROR"/);
    expect(rebinding).toMatchObject({ status: 403, body: { success: false, error: { code: 'FORBIDDEN' } } });
    expect(crossSite).toMatchObject({ status: 403, body: { success: false, error: { code: 'FORBIDDEN' } } });
    expect(posDuring.status).toBe(200);

    const ledger = await readLedger(path.join(t.dataDir, SQLITE_FILE_NAME), t.config.imagesDir);
    expect(ledger.charged - usedBefore).toBe(1);
    expect(ledger).toMatchObject({ integrity: 'ok', reservations: 0, orphanFiles: [], tempFiles: [] });
  });
});
