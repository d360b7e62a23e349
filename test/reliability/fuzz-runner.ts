/**
 * Sends fuzz cases to a listening server over real HTTP (keep-alive, `parallel` at once) and
 * judges every answer: a documented status and the envelope, or it is listed as bad. Shared
 * by the suite (test/reliability/fuzz.test.ts) and the long run (scripts/fuzz.ts).
 */
import http from 'node:http';
import { BOUNDARY, multipart, type FuzzCase } from './corpus.js';

/** Statuses a hostile upload may get (SPEC §3); a 500 is a bug, a 503 means the run was too hot. */
export const ALLOWED_STATUSES = new Set([200, 400, 413, 415, 422]);

export interface FuzzOutcome {
  statuses: Map<number, number>;
  bad: string[];
  /** Server RSS samples taken along the run by `sampleRss`, oldest first. */
  rss: number[];
}

function send(agent: http.Agent, url: URL, apiKey: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': String(body.length),
          'x-api-key': apiKey,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export function judge(status: number, text: string): string | null {
  let body: { success?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    return `${status}, not JSON: ${text.slice(0, 120)}`;
  }
  const envelope =
    status === 200
      ? body.success === true && typeof body.data === 'object'
      : body.success === false && typeof body.error?.code === 'string' && typeof body.error.message === 'string';
  if (!envelope || !ALLOWED_STATUSES.has(status)) return `${status} ${text.slice(0, 200)}`;
  return null;
}

export async function runFuzz(options: {
  baseUrl: string;
  apiKey: string;
  cases: Iterable<FuzzCase>;
  parallel: number;
  /** Called every `sampleEvery` cases; its value is kept in `rss`. */
  sampleRss?: () => number;
  sampleEvery?: number;
  onProgress?: (done: number) => void;
}): Promise<FuzzOutcome> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.parallel });
  const url = new URL('/api/v1/analyze', options.baseUrl);
  const outcome: FuzzOutcome = { statuses: new Map(), bad: [], rss: [] };
  const cases = options.cases[Symbol.iterator]();
  let done = 0;
  const worker = async () => {
    for (let next = cases.next(); !next.done; next = cases.next()) {
      const c = next.value;
      let answer: { status: number; text: string };
      try {
        answer = await send(agent, url, options.apiKey, c.body ?? multipart(c.image));
      } catch (error) {
        outcome.bad.push(`${c.label}: connection failed: ${(error as Error).message}`);
        continue;
      }
      outcome.statuses.set(answer.status, (outcome.statuses.get(answer.status) ?? 0) + 1);
      const verdict = judge(answer.status, answer.text);
      if (verdict) outcome.bad.push(`${c.label}: ${verdict}`);
      done++;
      if (options.sampleRss && done % (options.sampleEvery ?? 100) === 0) outcome.rss.push(options.sampleRss());
      options.onProgress?.(done);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.parallel }, worker));
  } finally {
    agent.destroy();
  }
  return outcome;
}
