/**
 * A forwarding proxy in front of a hub that lets a set number of sync uploads through
 * and holds every later one unanswered, as a line that dies in the middle of an upload.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Gate {
  url: string;
  /** Uploads that reached the hub. */
  passed: number;
  /** Resolves when an upload is being held. */
  holding: Promise<void>;
  /** From now on every upload goes through. */
  open(): void;
  close(): Promise<void>;
}

export async function uploadGate(target: string, allowed: number): Promise<Gate> {
  let limit = allowed;
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const stalled: http.ServerResponse[] = [];
  const gate = { passed: 0 } as Gate;

  const server = http.createServer((request, response) => {
    const upload = request.method === 'PUT' && request.url?.startsWith('/api/v1/sync/scans/');
    if (upload && gate.passed >= limit) {
      stalled.push(response);
      held();
      return;
    }
    if (upload) gate.passed++;
    const forward = http.request(`${target}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    forward.on('error', () => response.destroy());
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return Object.assign(gate, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holding,
    open() {
      limit = Infinity;
    },
    async close() {
      for (const response of stalled) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
