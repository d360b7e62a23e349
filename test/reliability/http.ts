/** Real-socket HTTP for reliability tests: many requests truly at once, as a POS burst would be. */
import http from 'node:http';
import { BOUNDARY, multipart } from './corpus.js';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });

export function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; json?: unknown; body?: Buffer } = {},
): Promise<Answer> {
  const payload = options.json !== undefined ? Buffer.from(JSON.stringify(options.json)) : options.body;
  const headers: Record<string, string> = { ...options.headers };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  if (payload) headers['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, baseUrl), { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Left as text: the caller's assertion on the envelope will say what arrived.
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

export function analyze(baseUrl: string, image: Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  return call(baseUrl, 'POST', '/api/v1/analyze', {
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...headers },
    body: multipart(image),
  });
}

export function count(answers: readonly Answer[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}
