/**
 * Every request gets its answer (issue 41), over real sockets: a form part that is not form-data
 * (busboy never finished on one of 16 KiB or more) is 400 naming it, and 68 of them lock nobody
 * out; a parser that never finishes is answered all the same; one caller cannot take every upload
 * slot; a 413 or another refusal sent before the body arrived reaches clients that keep sending
 * (Node fetch + FormData, node:http, Python urllib); a duplicate Host is 400; a handler that never
 * answers is answered by the server's last bound.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { servePerTest } from '../support/serve.js';
import { apiKeyFor, proApiKey, signedIn } from '../reliability/accounts.js';
import { imageForm } from './helpers.js';

const run = promisify(execFile);
const serve = servePerTest();

interface Exchange {
  /** Everything the server sent. */
  text: string;
  status: number;
  body: { success?: boolean; error?: { code: string; message: string } } | null;
  /** The connection was closed by the server (or reset) before `within` ran out. */
  closed: boolean;
}

/** Writes `head` and `body` on a raw socket, reads until the server closes or `within` ms pass. */
function exchange(url: string, head: string, body: Buffer = Buffer.alloc(0), within = 15_000): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      let parsed: Exchange['body'] = null;
      try {
        parsed = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
      } catch {
        parsed = null;
      }
      resolve({ text, status, body: parsed, closed });
    };
    const timer = setTimeout(() => done(false), within);
    socket.on('data', (data) => (text += data.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => done(true));
    socket.write(head);
    socket.write(body);
  });
}

const uploadHead = (boundary: string, length: number, extra = '') =>
  `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
  `Content-Length: ${length}\r\n${extra}\r\n`;

/** The issue's repro: one part with the given header lines (no form-data disposition) and `size` bytes. */
function oddPart(headers: string, size: number): Buffer {
  return Buffer.concat([Buffer.from(`--XYZ\r\n${headers}\r\n`, 'latin1'), Buffer.alloc(size), Buffer.from('\r\n--XYZ--\r\n')]);
}

describe('a form part that is not form-data', () => {
  it.each([
    ['no Content-Disposition', 'Content-Type: image/jpeg\r\n', /Part 1 of the form has no Content-Disposition header/],
    [
      'Content-Disposition: attachment',
      'Content-Disposition: attachment; filename="tire.jpg"\r\nContent-Type: image/jpeg\r\n',
      /Part 1 of the form is Content-Disposition "attachment", not form-data/,
    ],
    [
      'a folded first header line',
      ' Content-Disposition: form-data; name="image"\r\nContent-Type: image/jpeg\r\n',
      /no Content-Disposition header \(its "content-disposition" line starts with a space or tab/,
    ],
    ['form-data folded onto a second line', 'Content-Disposition:\r\n form-data\r\n', /is Content-Disposition " form-data" \(folded onto a second line\)/],
  ])('%s: 400 VALIDATION_ERROR naming it, at 16 KiB, 20,000 bytes, 64 KiB and 5 MB', async (_name, headers, message) => {
    const { url } = await serve();
    for (const size of [16 * 1024, 20_000, 64 * 1024, 5_000_000]) {
      const body = oddPart(headers, size);
      const answer = await exchange(url, uploadHead('XYZ', body.length), body);
      expect({ size, status: answer.status, code: answer.body?.error?.code }).toEqual({ size, status: 400, code: 'VALIDATION_ERROR' });
      expect(answer.body!.error!.message).toMatch(message);
      expect(answer.closed).toBe(true);
    }
  });

  it('the repro sent with curl is answered (not the 75 s time-out with 0 bytes)', async () => {
    const { url } = await serve();
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'tirewear-repro-')), 'h.bin');
    await writeFile(file, oddPart('Content-Type: image/jpeg\r\n', 20_000));
    try {
      const curl = ['-sS', '-m', '20', '-H', 'Content-Type: multipart/form-data; boundary=XYZ', '--data-binary', `@${file}`, '-w', '\n%{http_code}'];
      const { stdout } = await run('curl', [...curl, `${url}/api/v1/analyze`], { encoding: 'utf8' });
      expect(stdout).toMatch(/"code":"VALIDATION_ERROR"[\s\S]*\n400$/);
    } finally {
      await rm(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('68 of them sent at once by an anonymous local caller are all answered 400, and a Pro key is served meanwhile', async () => {
    const { t, app, url } = await serve();
    const key = await proApiKey(app, t.issueCode({ kind: 'pro', expiresAt: '2027-12-31T00:00:00Z' }));
    const body = oddPart('Content-Type: image/jpeg\r\n', 20_000);
    const odd = Array.from({ length: 68 }, () => exchange(url, uploadHead('XYZ', body.length), body));
    const form = imageForm(await makeJpeg({ width: 320, height: 256 }));
    const pro = await fetch(`${url}/api/v1/analyze`, { method: 'POST', body: form.payload, headers: { ...form.headers, 'x-api-key': key } });
    expect(pro.status).toBe(200);
    const answers = await Promise.all(odd);
    expect(answers.map((a) => a.status)).toEqual(Array(68).fill(400));
  });

  it("a hub's push (PUT /sync/scans/:id) with such a part is refused the same way", async () => {
    const { app, url } = await serve();
    const key = await apiKeyFor(app, await signedIn(app));
    const body = oddPart('Content-Disposition: attachment\r\n', 20_000);
    const head =
      `PUT /api/v1/sync/scans/${'a'.repeat(32)} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\n` +
      `Content-Type: multipart/form-data; boundary=XYZ\r\nContent-Length: ${body.length}\r\n\r\n`;
    const answer = await exchange(url, head, body);
    expect(answer.status).toBe(400);
    expect(answer.body!.error!.message).toMatch(/Part 1 of the form is Content-Disposition "attachment"/);
  });

  it('the live capture check (POST /analyze/check) with such a part is refused the same way', async () => {
    const { url } = await serve();
    const body = oddPart('Content-Type: image/jpeg\r\n', 20_000);
    const answer = await exchange(url, uploadHead('XYZ', body.length).replace('/api/v1/analyze', '/api/v1/analyze/check'), body);
    expect(answer.status).toBe(400);
    expect(answer.body!.error!.message).toMatch(/Part 1 of the form has no Content-Disposition header/);
  });

  it('a part busboy skips for another reason (an encoded line break in its name) is answered once the parse grace has passed', async () => {
    const { url } = await serve({}, { parseGraceMs: 300 });
    const body = oddPart(`Content-Disposition: form-data; name*=utf-8''im%0Dage\r\nContent-Type: image/jpeg\r\n`, 20_000);
    const answer = await exchange(url, uploadHead('XYZ', body.length), body);
    expect(answer.status).toBe(400);
    expect(answer.body!.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/not complete multipart\/form-data 0\.3 s after its last byte/),
    });
    expect(answer.closed).toBe(true);
  });

  it('a well-formed form whose parts fold a header line is still read (busboy joins the line)', async () => {
    const { url } = await serve();
    const jpeg = await makeJpeg({ width: 320, height: 256 });
    const body = Buffer.concat([
      Buffer.from('--XYZ\r\nContent-Disposition: form-data;\r\n\tname="image"; filename="tire.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'),
      jpeg,
      Buffer.from('\r\n--XYZ--\r\n'),
    ]);
    expect((await exchange(url, uploadHead('XYZ', body.length, 'Connection: close\r\n'), body)).status).toBe(200);
  });
});

describe('upload slots are shared out', () => {
  it("one caller's stalled uploads, this computer's too, leave a quarter of the slots to other callers", async () => {
    // 2 × (1 running + 3 waiting) = 8 slots: this computer's anonymous caller gets 6
    const { app, url } = await serve({ analysisConcurrency: 1, analysisQueueLimit: 3 }, { uploadIdleTimeoutMs: 60_000 });
    const key = await apiKeyFor(app, await signedIn(app));
    const { port } = new URL(url);
    const answers: string[] = [];
    const held = Array.from({ length: 8 }, () => {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.once('data', (data) => answers.push(data.toString('latin1')));
      socket.write(uploadHead('XYZ', 20_000));
      return socket;
    });
    try {
      await vi.waitFor(() => expect(answers).toHaveLength(2), { timeout: 5000 });
      for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 503 [\s\S]*"SERVER_BUSY","message":"6 of your uploads are already in progress/);
      const form = imageForm(await makeJpeg({ width: 320, height: 256 }));
      const res = await fetch(`${url}/api/v1/analyze`, { method: 'POST', body: form.payload, headers: { ...form.headers, 'x-api-key': key } });
      expect(res.status).toBe(200);
      expect(answers).toHaveLength(2);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

describe('a refusal sent before the body arrived reaches the client', () => {
  const ELEVEN_MIB = 11 * 1024 * 1024;

  // The clients run in processes of their own: in this process they would read the answer before
  // the server's reset arrived (they share its event loop), and pass even against an early close.
  const node = async (script: string, url: string) =>
    (await run(process.execPath, ['--input-type=module', '-e', script, `${url}/api/v1/analyze`], { encoding: 'utf8' })).stdout.trim().split('\n');

  it('Node fetch with FormData, 11 MiB: 413 FILE_TOO_LARGE in the envelope, every time', async () => {
    const { url } = await serve();
    const script = `
      for (let i = 0; i < 10; i++) {
        const body = new FormData();
        body.append('image', new Blob([Buffer.alloc(${ELEVEN_MIB}, 0xff)], { type: 'image/jpeg' }), 'tire.jpg');
        try {
          const res = await fetch(process.argv[1], { method: 'POST', body });
          console.log(res.status, res.headers.get('connection'), (await res.json()).error.code);
        } catch (error) {
          console.log('failed', error.cause?.code ?? error.message);
        }
      }`;
    expect(await node(script, url)).toEqual(Array(10).fill('413 close FILE_TOO_LARGE'));
  });

  it('node:http with a Content-Length, 11 MiB: 413 every time', async () => {
    const { url } = await serve();
    const script = `
            const body = Buffer.concat([Buffer.from('--XYZ\\r\\nContent-Disposition: form-data; name="image"; filename="tire.jpg"\\r\\n\\r\\n'), Buffer.alloc(${ELEVEN_MIB}, 0xff), Buffer.from('\\r\\n--XYZ--\\r\\n')]);
      for (let i = 0; i < 20; i++) {
        console.log(await new Promise((resolve) => {
          const headers = { 'content-type': 'multipart/form-data; boundary=XYZ', 'content-length': body.length };
          const request = http.request(process.argv[1], { method: 'POST', headers }, (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve(res.statusCode + ' ' + JSON.parse(text).error.code));
            res.on('error', (error) => resolve('failed ' + error.code));
          });
          request.on('error', (error) => resolve('failed ' + error.code));
          request.end(body);
        }));
      }`;
    expect(await node(script, url)).toEqual(Array(20).fill('413 FILE_TOO_LARGE'));
  });

  it('Python urllib.request, 11 MiB: 413 FILE_TOO_LARGE in the envelope', async () => {
    const { url } = await serve();
    const script = `
import json, sys, urllib.request, urllib.error
body = b'--XYZ\\r\\nContent-Disposition: form-data; name="image"; filename="tire.jpg"\\r\\nContent-Type: image/jpeg\\r\\n\\r\\n' + b'\\xff' * (11 * 1024 * 1024) + b'\\r\\n--XYZ--\\r\\n'
for _ in range(5):
    request = urllib.request.Request(sys.argv[1], data=body, headers={'Content-Type': 'multipart/form-data; boundary=XYZ'})
    try:
        urllib.request.urlopen(request, timeout=30)
        print('200')
    except urllib.error.HTTPError as error:
        print(error.code, json.loads(error.read())['error']['code'])
    except Exception as error:
        print('failed', type(error).__name__, error)
`;
    const { stdout } = await run('python3', ['-c', script, `${url}/api/v1/analyze`], { encoding: 'utf8' });
    expect(stdout.trim().split('\n')).toEqual(Array(5).fill('413 FILE_TOO_LARGE'));
  });

  it('401, 403 and 429 on the headers, with a 5 MiB body behind them, reach fetch too', async () => {
    const { url } = await serve();
    const jpeg = imageForm(await makeJpeg({ width: 320, height: 256 }));
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${url}/api/v1/analyze`, { method: 'POST', body: jpeg.payload, headers: jpeg.headers })).status).toBe(200);
    }
    const script = `
      const send = async (headers) => {
        const body = new FormData();
        body.append('image', new Blob([Buffer.alloc(5 * 1024 * 1024, 0xff)], { type: 'image/jpeg' }), 'tire.jpg');
        try {
          const res = await fetch(process.argv[1], { method: 'POST', body, headers });
          console.log(res.status, (await res.json()).error.code);
        } catch (error) {
          console.log('failed', error.cause?.code ?? error.message);
        }
      };
      for (let i = 0; i < 5; i++) {
        await send({ 'x-api-key': 'tw_${'x'.repeat(32)}' });
        await send({ origin: 'https://evil.example' });
        await send({});
      }`;
    const answers = await node(script, url);
    expect(answers).toEqual(Array(5).fill(['401 INVALID_API_KEY', '403 FORBIDDEN', '429 RATE_LIMIT_EXCEEDED']).flat());
  });

  it('the lingering read is bounded: in bytes, and in time without a byte', async () => {
    const { url } = await serve({}, { linger: { maxBytes: 1024 * 1024, maxMs: 30_000, idleMs: 300 } });
    const { port } = new URL(url);
    // 100 MB announced and sent without pause: cut after the 1 MiB bound, far before the end
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (data) => (received += data.toString('latin1')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(uploadHead('XYZ', 100_000_000));
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    while (!socket.destroyed && sent < 100_000_000) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
    }
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 413 [\s\S]*"code":"FILE_TOO_LARGE"/);
    expect(sent).toBeLessThan(50_000_000);

    // 11 MiB announced, nothing sent: the 413, then the connection closes after the idle bound
    const idle = await exchange(url, uploadHead('XYZ', ELEVEN_MIB), Buffer.alloc(0), 10_000);
    expect(idle.status).toBe(413);
    expect(idle.closed).toBe(true);
  });
});

describe('requests the server could not tell apart', () => {
  it('a duplicate Host header is 400, whichever comes first', async () => {
    const { url } = await serve();
    for (const hosts of ['Host: localhost\r\nHost: evil.example', 'Host: evil.example\r\nHost: localhost', 'Host: localhost\r\nHost: localhost']) {
      const answer = await exchange(url, `GET /api/v1/health HTTP/1.1\r\n${hosts}\r\nConnection: close\r\n\r\n`);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: 'Send the Host header once (it was sent more than once)' } });
    }
    expect((await exchange(url, 'GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')).status).toBe(200);
  });
});

describe("the server's last bound", () => {
  it('an analysis that never ends is answered 503 SERVER_BUSY once the bound has passed, and the connection closed', async () => {
    const { t, url } = await serve({}, { answerTimeoutMs: 400 });
    const release = t.analyzer.hold();
    try {
      const form = imageForm(await makeJpeg({ width: 320, height: 256 }));
      const answer = await exchange(
        url,
        `POST /api/v1/analyze HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.payload.length}\r\n\r\n`,
        form.payload,
      );
      expect(answer.status).toBe(503);
      expect(answer.body!.error).toMatchObject({ code: 'SERVER_BUSY', message: 'The server did not answer within 0.4 s; please retry' });
      expect(answer.text.toLowerCase()).toContain('connection: close');
      expect(answer.closed).toBe(true);
    } finally {
      release();
    }
  });
});
