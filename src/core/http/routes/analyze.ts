/**
 * POST /analyze (docs/API.md §2). The upload is streamed through busboy's limits: an image over
 * 10 MiB is refused the moment its 10,485,761st byte arrives, so at most 10 MiB of it is
 * ever held. What the bytes are (415/422) is decided by the scan service, by content.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_IMAGE_BYTES } from '../../../shared/contract/limits.js';
import { AppError } from '../../errors.js';
import { checkPosition, checkVehicle } from '../../services/analyze.js';
import { IdempotencyKey } from '../../services/idempotency.js';
import type { Caller, TirePosition } from '../../types.js';
import { anyCaller, timesSent } from '../auth.js';
import { multipartError, toErrorReply } from '../errors.js';
import { imageTooLarge, MULTIPART_LIMITS, TEXT_FIELDS, registerMultipart, readUploadedFile } from '../plugins/multipart.js';
import { guardForm } from '../form-guard.js';
import { AnalyzeData, AnalyzeForm, AnalyzeHeaders, analyzeReplies } from '../schemas.js';
import { withRateLimitHeaders } from '../rate-limit-headers.js';
import { admission, uploaderOf } from '../upload-admission.js';
import { watchUpload } from '../upload-watch.js';

/** The image plus ten short fields and multipart framing. */
const MAX_BODY_BYTES = MAX_IMAGE_BYTES + 64 * 1024;

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
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw imageTooLarge();
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
      image = await readUploadedFile(part.file);
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

/** Read once, in the onRequest hook; the handler takes it from `keys`. */
function idempotencyKey(request: FastifyRequest): IdempotencyKey | null {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return null;
  if (timesSent(request, 'idempotency-key') > 1) throw new AppError('VALIDATION_ERROR', 'Send the Idempotency-Key header once (it was sent more than once)');
  return IdempotencyKey.parse(raw);
}

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
  /** Each request's Idempotency-Key as the onRequest hook read it (the handler runs only when the hook passed). */
  const keys = new WeakMap<FastifyRequest, IdempotencyKey | null>();
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
          const key = idempotencyKey(request);
          keys.set(request, key);
          if (key === null) {
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
        body: AnalyzeForm,
        headers: AnalyzeHeaders,
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
        const key = keys.get(request) ?? null;
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
