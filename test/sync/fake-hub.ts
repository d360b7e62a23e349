/**
 * A stand-in between a desktop and its hub whose answers can be switched while they talk,
 * as the things that really sit there answer: it forwards to the real hub, or answers as a
 * captive portal (200 HTML to everything), a WAF (403 HTML page), a proxy's body limit
 * (nginx's 413 page), a hub behind a proxy that passes a Host it does not know, or holds
 * uploads unanswered (a hub that hangs), or refuses each upload for good as a hub refuses a
 * scan it cannot take (its envelope with the scan-refusal header).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SCAN_REFUSAL_HEADER } from '../../src/core/sync/wire.js';

export type FakeMode = 'forward' | 'portal' | 'waf' | 'proxy413' | 'wrongHost' | 'hold' | 'htmlImage' | 'refuseScan';

export interface FakeHub {
  url: string;
  mode: FakeMode;
  /** In 'forward': every upload after this many (counted from now on: set `forwarded` = 0) is held. */
  holdAfter: number;
  /** Uploads (PUT /api/v1/sync/scans/…) that came in, whatever was answered. */
  uploads: number;
  /** Uploads passed on to the hub. */
  forwarded: number;
  /** Resolves when the next upload is held. */
  nextHeld(): Promise<void>;
  close(): Promise<void>;
}

const PAGE = (title: string) => `<html><head><title>${title}</title></head><body><h1>${title}</h1><script>alert(1)</script></body></html>`;

export async function fakeHub(target: string): Promise<FakeHub> {
  const stalled: http.ServerResponse[] = [];
  let waiters: Array<() => void> = [];

  const hub: FakeHub = {
    url: '',
    mode: 'forward',
    holdAfter: Infinity,
    uploads: 0,
    forwarded: 0,
    nextHeld: () => new Promise<void>((resolve) => waiters.push(resolve)),
    close: async () => undefined,
  };

  function forward(request: http.IncomingMessage, response: http.ServerResponse, host?: string): void {
    const headers = { ...request.headers, ...(host ? { host } : {}) };
    const onward = http.request(`${target}${request.url}`, { method: request.method, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    onward.on('error', () => response.destroy());
    request.pipe(onward);
  }

  /** Reads the whole request first, as a proxy answering after the body would. */
  function answer(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    status: number,
    type: string,
    body: string,
    headers: http.OutgoingHttpHeaders = {},
  ): void {
    request.resume();
    request.on('end', () => {
      response.writeHead(status, { 'content-type': type, ...headers });
      response.end(body);
    });
  }
  const refusal = JSON.stringify({ success: false, error: { code: 'IMAGE_UNREADABLE', message: 'The hub could not read the photo of this scan.' } });

  const server = http.createServer((request, response) => {
    const upload = request.method === 'PUT' && (request.url ?? '').startsWith('/api/v1/sync/scans/');
    const image = /^\/api\/v1\/scans\/[^/]+\/image/.test(request.url ?? '');
    if (upload) hub.uploads++;
    const hold = () => {
      stalled.push(response);
      const waiting = waiters;
      waiters = [];
      for (const resolve of waiting) resolve();
    };
    switch (hub.mode) {
      case 'portal':
        return answer(request, response, 200, 'text/html', PAGE('Welcome to Hotel WiFi'));
      case 'waf':
        return upload ? answer(request, response, 403, 'text/html', PAGE('403 Forbidden')) : forward(request, response);
      case 'proxy413':
        return upload ? answer(request, response, 413, 'text/html', PAGE('413 Request Entity Too Large')) : forward(request, response);
      case 'wrongHost':
        return forward(request, response, 'vm.shop.lan:8911');
      case 'hold':
        return upload ? hold() : forward(request, response);
      case 'refuseScan':
        return upload ? answer(request, response, 422, 'application/json; charset=utf-8', refusal, { [SCAN_REFUSAL_HEADER]: '1' }) : forward(request, response);
      case 'htmlImage':
        return image ? answer(request, response, 200, 'text/html', PAGE('not an image')) : forward(request, response);
      case 'forward':
        if (upload && hub.forwarded >= hub.holdAfter) return hold();
        if (upload) hub.forwarded++;
        return forward(request, response);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hub.close = async () => {
    for (const response of stalled) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return hub;
}
