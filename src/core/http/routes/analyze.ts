/**
 * POST /analyze (docs/API.md §2). The upload is streamed through busboy's limits: an image over
 * 10 MiB is refused the moment its 10,485,761st byte arrives, so at most 10 MiB of it is
 * ever held. What the bytes are (415/422) is decided by the scan service, by content.
 */
import type { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../errors.js';
import { VEHICLE_MAX, checkPosition, checkVehicle } from '../../services/analyze.js';
import { meteringAddress } from '../../services/client-ip.js';
import { rateLimitHeaders } from '../../services/metering.js';
import { checkIdempotencyKey } from '../../services/idempotency.js';
import type { Caller } from '../../types.js';
import { TIRE_POSITIONS, type TirePosition } from '../../types.js';
import type { ScanService } from '../../services/ports.js';
import { anyCaller, timesSent } from '../auth.js';
import { multipartError, toErrorReply } from '../errors.js';
import { MAX_IMAGE_BYTES, MULTIPART_LIMITS, TEXT_FIELDS, registerMultipart } from '../plugins/multipart.js';
import { guardForm } from '../form-guard.js';
import { AnalyzeData, analyzeReplies } from '../schemas.js';
import { isThisComputer, plainAddress } from '../security.js';

/** The image plus ten short fields and multipart framing. */
const MAX_BODY_BYTES = MAX_IMAGE_BYTES + 64 * 1024;
/**
 * An upload that sends no byte for this long is answered 408 and its connection closed, so a
 * stalled or trickling-to-nothing client gives its admission slot back long before
 * REQUEST_TIMEOUT_MS (app.ts). Generous for a Wi-Fi hiccup; a live upload never pauses this long.
 */
export const UPLOAD_IDLE_TIMEOUT_MS = 10_000;

const tooLarge = () =>
  new AppError('FILE_TOO_LARGE', 'The image is larger than 10 MiB (10,485,760 bytes)', {
    headers: { connection: 'close' },
  });

interface Upload {
  image: Buffer;
  verbose: boolean;
  vehicle: string | null;
  position: TirePosition | null;
}

/** Refuse before any body parser runs: a query string, not a form, or announced as too large. */
function screenRequest(request: FastifyRequest): void {
  const [name] = Object.keys(request.query ?? {});
  if (name !== undefined) {
    const instead = TEXT_FIELDS.has(name) ? `send "${name}" as a form field` : 'the form fields are image, verbose, vehicle, position';
    throw new AppError('VALIDATION_ERROR', `Query parameter "${name}" is not accepted (this endpoint takes none); ${instead}`);
  }
  if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) {
    throw new AppError('VALIDATION_ERROR', 'Send the image as multipart/form-data with the file in the field "image"');
  }
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge();
}

export interface AdmissionOptions {
  concurrency: number;
  queueLimit: number;
  /** A hub: this computer's addresses are callers like any other (a proxy on it may forward everyone). */
  hub: boolean;
}

/** Who holds upload slots: an account (its keys and sessions together), else the address (as admission groups it). */
export function uploaderOf(caller: Caller): string {
  return caller.kind === 'account' ? `account ${caller.account.id}` : `anonymous ${caller.ip}`;
}

/**
 * Uploads held at once (being received, validated, queued or analysed) are bounded: twice what
 * the analysis queue runs and holds, since many uploads in a burst end in 4xx or 429 without
 * queueing. Beyond that SERVER_BUSY is answered before the body is read, so a burst of
 * full-size photos costs a bounded number of buffers, not one per request (Node drains the
 * unread body without keeping it). The queue's own SERVER_BUSY guards in-process callers.
 *
 * The slots are shared out so that idle, stalled or hung uploads from one place cannot take them
 * all (SERVER_BUSY for everyone else). A quarter of them is the share:
 * - one caller (an account, whichever key or session it uses; an anonymous caller by address, all
 *   of this computer's loopback as one) holding its share takes another slot only while more than
 *   a quarter are free, so three quarters at most, and other callers always find a quarter;
 * - a client address other than this computer's (as metered: IPv4, or the IPv6 /64 on a hub)
 *   holds at most its share, and on a desk the LAN callers together leave this computer a quarter.
 * On a hub loopback is an address like any other (a proxy on it may forward everyone).
 *
 * `admit(ip, uploader)` throws SERVER_BUSY or returns the release of the slot (call it once, when
 * the exchange ends); `uploader` is uploaderOf(caller).
 */
export function admission({ concurrency, queueLimit, hub }: AdmissionOptions): (ip: string, uploader: string) => () => void {
  const max = 2 * (concurrency + queueLimit);
  const share = Math.max(1, Math.floor(max / 4));
  const byAddress = new Map<string, number>();
  const byUploader = new Map<string, number>();
  let held = 0;
  /** Held by addresses other than this computer's (desk only). */
  let remote = 0;
  // Smoothed time an admitted upload stays (upload to answer): by then, on average, a slot is free.
  let averageMs = 1000;
  const busy = (message: string) => new AppError('SERVER_BUSY', message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(averageMs / 1000))) } });
  const count = (map: Map<string, number>, key: string, by: number) => {
    const next = (map.get(key) ?? 0) + by;
    if (next > 0) map.set(key, next);
    else map.delete(key);
  };
  return (ip, uploader) => {
    const desk = !hub && isThisComputer(ip, { databaseUrl: null });
    // a hub groups an IPv6 /64 as metering does (one client can take a whole /64); a desk's LAN
    // shares one /64, so there each shop PC counts on its own
    const address = hub ? meteringAddress(ip) : plainAddress(ip);
    // this computer's anonymous callers are one (127.0.0.2 is this computer as much as 127.0.0.1)
    const who = desk && uploader.startsWith('anonymous ') ? 'anonymous, this computer' : uploader;
    if (held >= max || (!desk && !hub && remote >= max - share)) {
      throw busy('The server is busy analysing other images; please retry shortly.');
    }
    if (!desk && (byAddress.get(address) ?? 0) >= share) {
      throw busy(`${share} uploads from your address are already in progress; retry when one has finished.`);
    }
    if ((byUploader.get(who) ?? 0) >= share && held >= max - share) {
      throw busy(`${byUploader.get(who)} of your uploads are already in progress and the rest are kept for others; retry when one has finished.`);
    }
    held++;
    count(byUploader, who, 1);
    if (!desk) {
      count(byAddress, address, 1);
      if (!hub) remote++;
    }
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held--;
      count(byUploader, who, -1);
      if (!desk) {
        count(byAddress, address, -1);
        if (!hub) remote--;
      }
      averageMs = averageMs * 0.8 + (performance.now() - started) * 0.2;
    };
  };
}

/**
 * Calls `onStall` when the upload has sent nothing for `idleMs` before its body ended. Returns
 * the stop (also run when the body ends or the exchange closes).
 */
function watchUpload(request: FastifyRequest, reply: FastifyReply, idleMs: number, onStall: () => void): () => void {
  const raw = request.raw;
  const timer = setTimeout(onStall, idleMs);
  timer.unref();
  const touch = () => timer.refresh();
  // A 'data' listener added before the multipart parser pipes the body would start the flow
  // early and lose chunks; once the body flows ('resume'), listening takes nothing from it.
  const listen = () => raw.on('data', touch);
  raw.once('resume', listen);
  const stop = () => {
    clearTimeout(timer);
    raw.off('resume', listen);
    raw.off('data', touch);
  };
  raw.once('end', stop);
  reply.raw.once('close', stop);
  return stop;
}

/** Collects the file, failing as soon as busboy reports the size limit. */
function readImage(file: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    file.on('data', (chunk: Buffer) => chunks.push(chunk));
    file.once('limit', () => {
      chunks.length = 0;
      reject(tooLarge());
      file.destroy();
    });
    file.once('end', () => resolve(Buffer.concat(chunks)));
    file.once('error', reject);
  });
}

async function readParts(request: FastifyRequest): Promise<{ image: Buffer | null; fields: Map<string, string> }> {
  let image: Buffer | null = null;
  const fields = new Map<string, string>();
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'image') {
        part.file.resume();
        const name = part.fieldname as string | undefined;
        throw new AppError(
          'VALIDATION_ERROR',
          name === undefined || name === ''
            ? 'A file was sent in a part without a name; send the image in the field "image"'
            : TEXT_FIELDS.has(name)
              ? `Field "${name}" was sent as a file (it has a filename); send it as a plain text field`
              : `Unexpected file in field "${name}"; send the image in "image"`,
        );
      }
      image = await readImage(part.file);
      continue;
    }
    const name = part.fieldname;
    if (!TEXT_FIELDS.has(name)) {
      throw new AppError('VALIDATION_ERROR', `Unknown field "${name}"; the fields are image, verbose, vehicle, position`);
    }
    if (part.valueTruncated) throw new AppError('VALIDATION_ERROR', `Field "${name}" is too long`);
    if (fields.has(name)) throw new AppError('VALIDATION_ERROR', `Field "${name}" was sent more than once`);
    fields.set(name, String(part.value));
  }
  return { image, fields };
}

/** Vehicle and position rules are the scan service's (checkVehicle, checkPosition); HTTP only reads them. */
function parseFields(image: Buffer | null, fields: Map<string, string>): Upload {
  if (!image) throw new AppError('VALIDATION_ERROR', 'The field "image" is required: one JPEG, PNG or WebP file');
  if (image.length === 0) throw new AppError('VALIDATION_ERROR', 'The image is empty (0 bytes)');
  const verbose = fields.get('verbose') ?? '0';
  if (verbose !== '0' && verbose !== '1') {
    throw new AppError('VALIDATION_ERROR', 'Field "verbose" must be "0" or "1"');
  }
  return {
    image,
    verbose: verbose === '1',
    vehicle: checkVehicle(fields.get('vehicle') ?? null),
    position: checkPosition(fields.get('position')?.trim().toUpperCase() ?? null),
  };
}

function idempotencyKey(request: FastifyRequest): string | null {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return null;
  if (timesSent(request, 'idempotency-key') > 1) throw new AppError('VALIDATION_ERROR', 'Send the Idempotency-Key header once (it was sent more than once)');
  return checkIdempotencyKey(raw);
}

/**
 * Every analyze answer carries X-RateLimit-* (docs/API.md §4), also when the upload itself was refused; not a
 * refusal of the auth or security hooks (a bad key, a foreign Host), made before the caller is known.
 */
async function withRateLimitHeaders(scans: ScanService, error: unknown, caller: Caller): Promise<unknown> {
  if (!isAppError(error) || 'X-RateLimit-Limit' in error.headers) return error;
  const state = await scans.rateLimit(caller).catch(() => null);
  if (state) Object.assign(error.headers, rateLimitHeaders(state));
  return error;
}

const Form = Type.Object({
  image: Type.String({ format: 'binary', description: 'JPEG, PNG or WebP, at most 10 MiB' }),
  verbose: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')], { description: '"1" adds overlays and points' })),
  vehicle: Type.Optional(Type.String({ maxLength: VEHICLE_MAX })),
  position: Type.Optional(Type.Union(TIRE_POSITIONS.map((p) => Type.Literal(p)))),
});

export const analyzeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await registerMultipart(app);
  const { scans } = app.core.services;
  const { config } = app.core;
  const admit = admission({
    concurrency: config.analysisConcurrency,
    queueLimit: config.analysisQueueLimit,
    hub: config.databaseUrl !== null,
  });
  const idleMs = app.uploadIdleTimeoutMs;
  const parseGraceMs = app.parseGraceMs;

  /**
   * 408 in the envelope, with the caller's X-RateLimit-*, and the connection closed (its body
   * never came), unless the body got read after all (`reading` false) while the headers were fetched.
   */
  const answerStalled = async (request: FastifyRequest, reply: FastifyReply, caller: Caller, reading: () => boolean) => {
    const stalled = new AppError('VALIDATION_ERROR', `The upload stopped: nothing arrived for ${idleMs / 1000} s; send the whole request without pausing`);
    const { headers, body } = toErrorReply(await withRateLimitHeaders(scans, stalled, caller));
    if (reply.sent || !reading()) return;
    request.log.info({ code: body.error.code, reason: 'upload stalled' }, 'request refused');
    void reply
      .code(408)
      .headers({ ...headers, connection: 'close' })
      .send(body);
  };

  app.post(
    '/analyze',
    {
      config: { auth: 'optional' },
      // Runs after the auth hook, so the caller is known and refusals carry its allowance.
      onRequest: async (request, reply) => {
        try {
          screenRequest(request);
          // The slot first, before anything is awaited: a connection that closes while this hook
          // waits must still give it back ('close' would be gone by the time a listener came).
          const release = admit(request.ip, uploaderOf(anyCaller(request)));
          reply.raw.once('close', release);
          // closed already while the caller was identified (the auth hook reads the store)
          if (request.raw.socket?.destroyed) release();
          // A caller with nothing left is told before sending the photo (with Expect: 100-continue
          // it never sends it). Not with an Idempotency-Key: a retry of a scan already made gets
          // its stored answer whatever is left. A failed check leaves it to the analysis.
          if (idempotencyKey(request) === null) {
            const refusal = await scans.refusalBeforeUpload(anyCaller(request)).catch(() => null);
            if (refusal) throw refusal;
          }
        } catch (error) {
          throw await withRateLimitHeaders(scans, error, anyCaller(request));
        }
      },
      // The form is read and checked by hand while it streams; the schema documents it.
      validatorCompiler: () => (value: unknown) => ({ value }),
      schema: {
        tags: ['analysis'],
        summary: 'Estimate tread depth from a tire photo',
        description:
          'The photo is checked before any model runs: 415 UNSUPPORTED_MEDIA_TYPE for anything but JPEG, PNG or WebP by ' +
          'content (the message names HEIC, AVIF, GIF, TIFF, BMP, PDF and SVG files); 422 IMAGE_TOO_SMALL under 256 px on the ' +
          'short side; 422 IMAGE_TOO_LARGE over 40 megapixels, or a progressive JPEG or interlaced PNG needing more than ' +
          '160 MB to decode (from the header); 422 IMAGE_UNREADABLE for an undecodable or truncated file, a JPEG cut short ' +
          'with an end marker added, or one encoded in more than 100 progressive passes (JPEG scan segments); 422 NO_TIRE_DETECTED when no tread is found. ' +
          'Failed analyses are not charged. A form part without "Content-Disposition: form-data" is 400 naming the part. ' +
          'An answer sent before the whole upload arrived (413, 401, 403, 429, 503) closes the connection once the rest has been read.',
        consumes: ['multipart/form-data'],
        body: Form,
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              pattern: '^[\\x21-\\x7e]+$',
              description:
                'Makes a retry safe: visible ASCII, no spaces (e.g. the repair order and wheel); the same key within 24 h gets the stored answer, charged once',
            }),
          ),
        }),
        response: analyzeReplies(AnalyzeData),
      },
    },
    async (request, reply: FastifyReply) => {
      // Wall clock, like the service's processingTimeMs: a duration, not a business time.
      const receivedAt = Date.now() - Math.round(reply.elapsedTime);
      const caller = anyCaller(request);
      let reading = true;
      const stillReading = () => reading && !request.raw.complete;
      const stopWatch = watchUpload(request, reply, idleMs, () => {
        if (!reply.sent && stillReading()) void answerStalled(request, reply, caller, stillReading);
      });
      const guard = guardForm(request, parseGraceMs, MULTIPART_LIMITS.headerPairs);
      try {
        const key = idempotencyKey(request);
        const { image, fields } = await Promise.race([readParts(request), guard.failure])
          .catch((error: unknown) => {
            throw multipartError(error);
          })
          .finally(() => {
            reading = false;
            stopWatch();
            guard.stop();
          });
        if (reply.sent) return reply; // answered 408 just as the body ended: nothing is analysed or charged
        const upload = parseFields(image, fields);
        const response = await scans.analyze({ caller, ...upload, idempotencyKey: key, receivedAt });
        if (reply.sent) return reply; // answered by the server's last bound (answer-deadline.ts) meanwhile
        return reply.code(response.status).headers(response.headers).send(response.body);
      } catch (error) {
        // A stalled upload was answered 408 already; its body's end is just the connection closing.
        if (reply.sent) return reply;
        throw await withRateLimitHeaders(scans, error, caller);
      }
    },
  );
};
