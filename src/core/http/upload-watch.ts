/** The idle bound of an upload: 408 for one that stops sending before its body ends. */
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * An upload that sends no byte for this long is answered 408 and its connection closed, so a
 * stalled or trickling-to-nothing client gives its admission slot back long before
 * REQUEST_TIMEOUT_MS (app.ts). Generous for a Wi-Fi hiccup; a live upload never pauses this long.
 */
export const UPLOAD_IDLE_TIMEOUT_MS = 10_000;

/**
 * Calls `onStall` when the upload has sent nothing for `idleMs` before its body ended. Returns
 * the stop (also run when the body ends or the exchange closes).
 */
export function watchUpload(request: FastifyRequest, reply: FastifyReply, idleMs: number, onStall: () => void): () => void {
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
