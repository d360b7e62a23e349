/**
 * A bound on reading a multipart form, whatever its parser does (POST /analyze, a hub's pushes).
 * Once the whole body has arrived the parser has PARSE_GRACE_MS to finish, or the request is
 * answered 400 and its upload slot given back; a part busboy would skip (and may never finish on:
 * part-headers.ts) is refused by name as soon as its headers have gone past.
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { PartHeaderCheck, boundaryOf } from './part-headers.js';

/** Reading what has arrived takes milliseconds; this is for a parser that never finishes. */
export const PARSE_GRACE_MS = 5_000;

/**
 * Rejects with 400 as soon as the body shows a part busboy would skip (it may never finish on
 * one: part-headers.ts), or when the parser has not finished `graceMs` after the body's last
 * byte, whatever the reason. `stop` ends the watch (call it when the parts are read).
 */
export function guardForm(request: FastifyRequest, graceMs: number, maxHeaderPairs: number): { failure: Promise<never>; stop: () => void } {
  const raw = request.raw;
  const boundary = boundaryOf(request.headers['content-type'] ?? '');
  const check = boundary === null ? null : new PartHeaderCheck(boundary, maxHeaderPairs);
  let fail: (error: AppError) => void = () => undefined;
  const failure = new Promise<never>((_resolve, reject) => (fail = reject));
  let quietSince = performance.now();
  const onData = (chunk: Buffer) => {
    quietSince = performance.now();
    const problem = check?.push(chunk);
    if (!problem) return;
    stop();
    fail(new AppError('VALIDATION_ERROR', problem, { headers: { connection: 'close' } }));
  };
  // listen once the body flows: a 'data' listener added before the parser pipes the body would
  // start the flow early and lose chunks; once it flows, listening takes nothing from it
  const listen = () => raw.on('data', onData);
  raw.once('resume', listen);
  const tick = setInterval(
    () => {
      if (!raw.complete) quietSince = performance.now();
      if (performance.now() - quietSince < graceMs) return;
      stop();
      request.log.warn({ graceMs }, 'the form parser had not finished after the whole body arrived');
      fail(
        new AppError(
          'VALIDATION_ERROR',
          `The form could not be read: it was not complete multipart/form-data ${graceMs / 1000} s after its last byte arrived; ` +
            'send each part with "Content-Disposition: form-data; name=…" and end the form with its closing boundary',
          // the parser still holds the body: the connection cannot carry another request
          { headers: { connection: 'close' } },
        ),
      );
    },
    Math.max(10, Math.round(graceMs / 5)),
  );
  tick.unref();
  const stop = () => {
    clearInterval(tick);
    raw.off('resume', listen);
    raw.off('data', onData);
  };
  return { failure, stop };
}
