/**
 * POST /analyze (SPEC §2). The upload is streamed through busboy's limits: an image over
 * 10 MiB is refused the moment its 10,485,761st byte arrives, so at most 10 MiB of it is
 * ever held. What the bytes are (415/422) is decided by the scan service, by content.
 */
import type { Readable } from 'node:stream';
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../errors.js';
import { VEHICLE_MAX, checkPosition, checkVehicle } from '../../services/analyze.js';
import { rateLimitHeaders } from '../../services/metering.js';
import type { Caller } from '../../types.js';
import { TIRE_POSITIONS, type TirePosition } from '../../types.js';
import type { ScanService } from '../../services/ports.js';
import { anyCaller } from '../auth.js';
import { multipartError } from '../errors.js';
import { MAX_IMAGE_BYTES, registerMultipart } from '../plugins/multipart.js';
import { AnalyzeData, replies } from '../schemas.js';

/** The image plus ten short fields and multipart framing. */
const MAX_BODY_BYTES = MAX_IMAGE_BYTES + 64 * 1024;
const FIELDS = new Set(['verbose', 'vehicle', 'position']);

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

/** Refuse before any body parser runs: not a form, or announced as too large. */
function screenRequest(request: FastifyRequest): void {
  if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) {
    throw new AppError('VALIDATION_ERROR', 'Send the image as multipart/form-data with the file in the field "image"');
  }
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw tooLarge();
}

/**
 * Uploads held at once (being received, validated, queued or analysed) are bounded: twice what
 * the analysis queue runs and holds, since many uploads in a burst end in 4xx or 429 without
 * queueing. Beyond that SERVER_BUSY is answered before the body is read, so a burst of
 * full-size photos costs a bounded number of buffers, not one per request (Node drains the
 * unread body without keeping it). The queue's own SERVER_BUSY guards in-process callers.
 */
function admission(concurrency: number, queueLimit: number): (reply: FastifyReply) => void {
  const max = 2 * (concurrency + queueLimit);
  let held = 0;
  // Smoothed time an admitted upload stays (upload to answer): by then, on average, a slot is free.
  let averageMs = 1000;
  return (reply) => {
    if (held >= max) {
      throw new AppError('SERVER_BUSY', 'The server is busy analysing other images; please retry shortly.', {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(averageMs / 1000))) },
      });
    }
    held++;
    const started = performance.now();
    reply.raw.once('close', () => {
      held--;
      averageMs = averageMs * 0.8 + (performance.now() - started) * 0.2;
    });
  };
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
        throw new AppError('VALIDATION_ERROR', `Unexpected file in field "${part.fieldname}"; send the image in "image"`);
      }
      image = await readImage(part.file);
      continue;
    }
    const name = part.fieldname;
    if (!FIELDS.has(name)) {
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
  if (typeof raw !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(raw)) {
    throw new AppError('VALIDATION_ERROR', 'Header Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  return raw;
}

/** Every analyze answer carries X-RateLimit-* (SPEC §4), also when the upload itself was refused. */
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
  const admit = admission(app.core.config.analysisConcurrency, app.core.config.analysisQueueLimit);

  app.post(
    '/analyze',
    {
      config: { auth: 'optional' },
      // Runs after the auth hook, so the caller is known and refusals carry its allowance.
      onRequest: async (request, reply) => {
        try {
          screenRequest(request);
          admit(reply);
        } catch (error) {
          throw await withRateLimitHeaders(scans, error, anyCaller(request));
        }
      },
      // The form is read and checked by hand while it streams; the schema documents it.
      validatorCompiler: () => (value) => ({ value }),
      schema: {
        tags: ['analysis'],
        summary: 'Estimate tread depth from a tire photo',
        consumes: ['multipart/form-data'],
        body: Form,
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ maxLength: 255 })) }),
        response: replies(AnalyzeData),
      },
    },
    async (request, reply: FastifyReply) => {
      // Wall clock, like the service's processingTimeMs: a duration, not a business time.
      const receivedAt = Date.now() - Math.round(reply.elapsedTime);
      const caller = anyCaller(request);
      try {
        const key = idempotencyKey(request);
        const { image, fields } = await readParts(request).catch((error: unknown) => {
          throw multipartError(error);
        });
        const upload = parseFields(image, fields);
        const response = await scans.analyze({ caller, ...upload, idempotencyKey: key, receivedAt });
        return reply.code(response.status).headers(response.headers).send(response.body);
      } catch (error) {
        throw await withRateLimitHeaders(scans, error, caller);
      }
    },
  );
};
