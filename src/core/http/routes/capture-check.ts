/**
 * POST /analyze/check (issue 42): the live capture check behind the webcam view. The photo is
 * checked as analyze checks it (415/422), then the scene reader of the models, sharpness and
 * light; no depth is read, nothing is stored and nothing is charged (no X-RateLimit-*: the
 * allowance is not touched). A caller may check CHECKS_PER_MINUTE frames a minute (429 TOO_MANY_ATTEMPTS).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { MAX_IMAGE_BYTES } from '../../../shared/contract/limits.js';
import { AppError } from '../../errors.js';
import { CHECKS_PER_MINUTE } from '../../services/capture-check.js';
import { limitSubject } from '../../services/support/caller-limit.js';
import { anyCaller } from '../auth.js';
import { multipartError } from '../errors.js';
import { imageTooLarge, MULTIPART_LIMITS, registerMultipart, readUploadedFile } from '../plugins/multipart.js';
import { guardForm } from '../form-guard.js';
import { CaptureCheck, CaptureCheckForm, replies } from '../schemas.js';

const MAX_BODY_BYTES = MAX_IMAGE_BYTES + 16 * 1024;
/** Checks held at once (bodies being received or checked): a live view sends one frame at a time. */
const MAX_IN_FLIGHT = 8;
const MAX_IN_FLIGHT_PER_CALLER = 2;

/**
 * Bounds the uploads held at once, in all and per caller (account, else address), so a burst of
 * full-size frames costs a bounded number of buffers; beyond, SERVER_BUSY before the body is read.
 * Returns the release (idempotent).
 */
function inFlight(): (who: string) => () => void {
  let held = 0;
  const byCaller = new Map<string, number>();
  return (who) => {
    const mine = byCaller.get(who) ?? 0;
    if (held >= MAX_IN_FLIGHT || mine >= MAX_IN_FLIGHT_PER_CALLER) {
      throw new AppError('SERVER_BUSY', 'Too many capture checks at once; send the next frame when this one is answered.', {
        headers: { 'Retry-After': '1' },
      });
    }
    held++;
    byCaller.set(who, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held--;
      const left = (byCaller.get(who) ?? 1) - 1;
      if (left > 0) byCaller.set(who, left);
      else byCaller.delete(who);
    };
  };
}

function screenRequest(request: FastifyRequest): void {
  const [name] = Object.keys(request.query ?? {});
  if (name !== undefined) {
    throw new AppError('VALIDATION_ERROR', `Query parameter "${name.slice(0, 40)}" is not accepted; send only the image, as a form`);
  }
  if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) {
    throw new AppError('VALIDATION_ERROR', 'Send the image as multipart/form-data with the file in the field "image"');
  }
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw imageTooLarge();
}

/** The one `image` file; any other part (a field, another file) is refused by name. */
async function readImage(request: FastifyRequest): Promise<Buffer> {
  let image: Buffer | null = null;
  for await (const part of request.parts()) {
    if (part.type === 'file' && part.fieldname === 'image' && image === null) {
      image = await readUploadedFile(part.file);
      continue;
    }
    if (part.type === 'file') part.file.resume();
    const name = String(part.fieldname ?? '').slice(0, 40);
    throw new AppError('VALIDATION_ERROR', `Unexpected form field "${name}": the check takes one file, in the field "image"`);
  }
  if (!image) throw new AppError('VALIDATION_ERROR', 'The field "image" is required: one JPEG, PNG or WebP file');
  if (image.length === 0) throw new AppError('VALIDATION_ERROR', 'The image is empty (0 bytes)');
  return image;
}

export const captureCheckRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await registerMultipart(app);
  const { captureCheck } = app.core.services;
  const admit = inFlight();

  app.post(
    '/analyze/check',
    {
      config: { auth: 'optional' },
      onRequest: async (request, reply) => {
        screenRequest(request);
        const caller = anyCaller(request);
        captureCheck.admit(caller);
        const release = admit(limitSubject(caller));
        reply.raw.once('close', release);
        if (request.raw.socket?.destroyed) release();
      },
      validatorCompiler: () => (value: unknown) => ({ value }),
      schema: {
        tags: ['analysis'],
        summary: 'Live capture check: is the tread in view, sharp and lit? (free: no depth, nothing stored or charged)',
        description:
          'For a live camera view, about once a second: the photo is checked as on analyze (415 UNSUPPORTED_MEDIA_TYPE, ' +
          "422 IMAGE_TOO_SMALL / IMAGE_TOO_LARGE / IMAGE_UNREADABLE, 413 FILE_TOO_LARGE), then the models' scene reader " +
          '(scene unknown when the models have none), the sharpness and the light. ' +
          `At most ${CHECKS_PER_MINUTE} checks a minute per account (or client address without one): beyond, 429 ` +
          'TOO_MANY_ATTEMPTS with Retry-After. Nothing is stored and the allowance is not touched.',
        consumes: ['multipart/form-data'],
        body: CaptureCheckForm,
        response: replies(CaptureCheck),
      },
    },
    async (request) => {
      // a form its parser never finishes is answered all the same (form-guard.ts)
      const guard = guardForm(request, app.parseGraceMs, MULTIPART_LIMITS.headerPairs);
      const image = await Promise.race([readImage(request), guard.failure])
        .catch((error: unknown) => {
          throw multipartError(error);
        })
        .finally(guard.stop);
      return { success: true as const, data: await captureCheck.check(image) };
    },
  );
};
