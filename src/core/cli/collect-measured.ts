/**
 * The shop's own labelled photos: every scan that has a gauge reading (PUT
 * /scans/:id/measurement), fetched over the public API into a folder that `npm run eval` reads
 * (labels.csv + the uploaded originals). That is how the model is measured on real photos: the
 * shop's counter staff photograph, the gauge gives the truth.
 *
 * Only what measuring needs leaves the server: the photo, the reading, the scan id, the estimate
 * and model version of the time. Vehicles and positions are left out (a plate is personal data).
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ErrorEnvelope, ScanList, SuccessEnvelope } from '../../shared/api.js';
import { csvCell } from '../services/support/csv.js';
import { MAX_PAGE } from '../../shared/contract/limits.js';
import { renameRetrying } from '../storage/files.js';

export interface CollectOptions {
  /** Origin of a TireWear server, e.g. http://127.0.0.1:8787. */
  server: string;
  apiKey: string;
  out: string;
  from?: string;
  to?: string;
  fetch?: typeof fetch;
  log?: (line: string) => void;
}

export interface CollectReport {
  /** Measured scans listed in labels.csv. */
  measured: number;
  /** Photos downloaded this run (the others were in the folder from an earlier run). */
  downloaded: number;
  /** Scans seen without a gauge reading. */
  unmeasured: number;
  /** Measured scans whose photo could not be fetched (deleted meanwhile), left out. */
  missing: string[];
}

/** A failure the user can act on (server unreachable, key refused, folder not writable). */
export class CollectError extends Error {
  override name = 'CollectError';
  /** 2: the folder or the arguments need changing; 1: the server or the disk failed. */
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

/** Writes `data` to `file` through `file.partial`; a failure is a CollectError naming the file, and leaves no partial file. */
async function writeWhole(file: string, data: string | Buffer): Promise<void> {
  const partial = `${file}.partial`;
  try {
    await writeFile(partial, data);
    await renameRetrying(partial, file);
  } catch (error) {
    await rm(partial, { force: true, recursive: false }).catch(() => undefined);
    throw new CollectError(`Cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
}

/**
 * collect rewrites its own labels.csv on every run; one it did not write (a shop's hand-made
 * list, other columns) would be lost, so it is refused before anything is fetched.
 */
async function checkOwnLabels(labels: string): Promise<void> {
  const info = await stat(labels).catch(() => null);
  if (!info) return;
  const text = info.isFile() ? await readFile(labels, 'utf8').catch(() => null) : null;
  const header = text
    ?.replace(/^\uFEFF/, '')
    .split(/\r?\n/, 1)[0]
    ?.trim(); // Excel saves a BOM in front
  if (header === LABELS_HEADER.join(',')) return;
  throw new CollectError(
    `${labels} exists and was not written by collect (its columns differ); collect rewrites labels.csv, so it stops ` +
      'rather than lose it: collect into a new folder, or move that labels.csv away.',
    2,
  );
}

const EXT: Record<string, string> = { 'image/jpeg': '.jpg', 'image/png': '.png', 'image/webp': '.webp' };
export const LABELS_HEADER = ['file', 'depthMm', 'wear', 'scanId', 'estimatedDepthMm', 'modelVersion', 'measuredAt'] as const;

async function exists(file: string): Promise<boolean> {
  const s = await stat(file).catch(() => null);
  return !!s?.isFile() && s.size > 0;
}

/** The origin of an http(s) server URL; CollectError for anything else (`localhost:8787` is not one). */
export function serverOrigin(server: string): string {
  let url: URL | null = null;
  try {
    url = new URL(server);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new CollectError(`--server must be a URL such as http://127.0.0.1:8787, not "${server}".`);
  }
  return url.origin;
}

export async function collectMeasured(options: CollectOptions): Promise<CollectReport> {
  const doFetch = options.fetch ?? fetch;
  const log = options.log ?? (() => undefined);
  const origin = serverOrigin(options.server);
  const headers = { 'x-api-key': options.apiKey };

  async function get(pathAndQuery: string): Promise<Response> {
    let res: Response;
    try {
      res = await doFetch(`${origin}${pathAndQuery}`, { headers });
    } catch (error) {
      throw new CollectError(`Cannot reach ${origin}: ${(error as Error).message}. Is TireWear running (npm run serve)?`);
    }
    return res;
  }

  async function envelopeError(res: Response): Promise<CollectError> {
    const body = (await res.json().catch(() => null)) as Partial<ErrorEnvelope> | null;
    const what = body?.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${res.status}`;
    return new CollectError(`${origin} answered ${what}`);
  }

  try {
    await mkdir(options.out, { recursive: true });
  } catch (error) {
    throw new CollectError(`Cannot create ${options.out}: ${(error as Error).message}`);
  }

  const labels = path.join(options.out, 'labels.csv');
  await checkOwnLabels(labels);

  const report: CollectReport = { measured: 0, downloaded: 0, unmeasured: 0, missing: [] };
  const rows: string[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: String(MAX_PAGE) });
    if (options.from) q.set('from', options.from);
    if (options.to) q.set('to', options.to);
    if (cursor) q.set('cursor', cursor);
    const res = await get(`/api/v1/scans?${q}`);
    if (!res.ok) throw await envelopeError(res);
    const body = (await res.json().catch(() => null)) as Partial<SuccessEnvelope<ScanList>> | null;
    const page = body?.data;
    if (!page || !Array.isArray(page.items)) throw new CollectError(`${origin} did not answer like a TireWear server (GET /api/v1/scans).`);
    for (const scan of page.items) {
      if (scan.measurementMm === null) {
        report.unmeasured++;
        continue;
      }
      const file = `${scan.scanId.replace(/[^A-Za-z0-9_-]/g, '_')}${EXT[scan.image.mime] ?? '.img'}`;
      const target = path.join(options.out, file);
      if (!(await exists(target))) {
        const img = await get(scan.image.url);
        if (!img.ok) {
          report.missing.push(scan.scanId);
          log(`skipped ${scan.scanId}: its photo could not be fetched (${(await envelopeError(img)).message})`);
          continue;
        }
        await writeWhole(target, Buffer.from(await img.arrayBuffer()));
        report.downloaded++;
      }
      report.measured++;
      rows.push(
        [file, scan.measurementMm, '', scan.scanId, scan.result.estimatedDepthMm, scan.result.modelVersion, scan.measuredAt].map((v) => csvCell(v)).join(','),
      );
    }
    cursor = page.nextCursor ?? null;
  } while (cursor);

  // oldest first (the list comes newest first): the order the photos were taken, which a shop's
  // reader keeps consecutive photos together by and takes its latest from (analysis/shop-reader.ts)
  await writeWhole(labels, [LABELS_HEADER.join(','), ...rows.reverse()].join('\n') + '\n');
  return report;
}
