/**
 * Closed-loop load: `concurrency` workers, each sending its next request as soon as the
 * last one answered, until `requests` have completed. Latency is measured per request
 * (upload sent → whole response read); throughput is completions over the wall time.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export interface Sample {
  ms: number;
  status: number;
}

export interface CellStats {
  requests: number;
  ok: number;
  /** Answers by status other than 200, e.g. {"503": 2}. */
  refused: Record<string, number>;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  scansPerSecond: number;
  wallMs: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function summarise(samples: readonly Sample[], wallMs: number): CellStats {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  const refused: Record<string, number> = {};
  for (const s of samples) if (s.status !== 200) refused[s.status] = (refused[s.status] ?? 0) + 1;
  const ok = samples.length - Object.values(refused).reduce((a, b) => a + b, 0);
  return {
    requests: samples.length,
    ok,
    refused,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    scansPerSecond: (ok / wallMs) * 1000,
    wallMs,
  };
}

/** Runs `task` `requests` times with at most `concurrency` at once. */
export async function closedLoop(concurrency: number, requests: number, task: () => Promise<number>): Promise<{ samples: Sample[]; wallMs: number }> {
  const samples: Sample[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests) {
      next++;
      const t0 = performance.now();
      const status = await task();
      samples.push({ ms: performance.now() - t0, status });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { samples, wallMs: performance.now() - started };
}

/** A multipart body built once, so the load generator spends no CPU encoding it per request. */
export function multipartBody(image: Buffer, filename: string, mime: string): { body: Buffer; contentType: string } {
  const boundary = `----tirewear-bench-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="${filename}"\r\nContent-Type: ${mime}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, image, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** One POST over a keep-alive agent; resolves with the status once the whole answer is read. */
export function post(agent: http.Agent, url: URL, body: Buffer, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}
