/**
 * Sends fuzz cases to a listening server over real HTTP (keep-alive, `parallel` at once) and
 * judges every answer: a documented status and the envelope, within `answerWithinMs` of the
 * request being sent, or it is listed as bad (an unanswered one as unanswered). Shared by the
 * suite (test/reliability/fuzz.test.ts) and the long run (scripts/fuzz.ts).
 */
import http from 'node:http';
import { BOUNDARY, multipart, type FuzzCase } from './corpus.js';

/** Statuses a hostile upload may get (docs/API.md §3); a 500 is a bug, a 503 means the run was too hot. */
export const ALLOWED_STATUSES = new Set([200, 400, 413, 415, 422]);

/** PARSE_GRACE_MS (5 s) after the last byte, with room for the analysis queue of a busy run. */
export const ANSWER_WITHIN_MS = 30_000;

export interface FuzzOutcome {
  statuses: Map<number, number>;
  bad: string[];
  /** Requests that got no answer (nor a closed connection) within the bound. */
  unanswered: number;
  /** The longest wait for an answer, in ms. */
  slowestMs: number;
  /** Server RSS samples taken along the run by `sampleRss`, oldest first. */
  rss: number[];
}

class Unanswered extends Error {}

function send(agent: http.Agent, url: URL, apiKey: string, body: Buffer, withinMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => request.destroy(new Unanswered(`no answer within ${withinMs / 1000} s`)), withinMs);
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
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
        });
      },
    );
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
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
  /** ANSWER_WITHIN_MS unless given. */
  answerWithinMs?: number;
}): Promise<FuzzOutcome> {
  const withinMs = options.answerWithinMs ?? ANSWER_WITHIN_MS;
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.parallel });
  const url = new URL('/api/v1/analyze', options.baseUrl);
  const outcome: FuzzOutcome = { statuses: new Map(), bad: [], unanswered: 0, slowestMs: 0, rss: [] };
  const cases = options.cases[Symbol.iterator]();
  let done = 0;
  const worker = async () => {
    for (let next = cases.next(); !next.done; next = cases.next()) {
      const c = next.value;
      let answer: { status: number; text: string };
      const started = performance.now();
      try {
        answer = await send(agent, url, options.apiKey, c.body ?? multipart(c.image), withinMs);
      } catch (error) {
        if (error instanceof Unanswered) outcome.unanswered++;
        outcome.bad.push(`${c.label}: ${error instanceof Unanswered ? error.message : `connection failed: ${(error as Error).message}`}`);
        continue;
      } finally {
        outcome.slowestMs = Math.max(outcome.slowestMs, performance.now() - started);
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
