/**
 * The last bound on every request. Node bounds a request only until its body has arrived
 * (requestTimeout); after that nothing did, so a handler, parser or store that never settled held
 * its connection (and an upload slot) for good. Once a request's body has fully arrived, its
 * answer must begin within ANSWER_TIMEOUT_MS; otherwise it is answered 503 SERVER_BUSY with
 * `Connection: close` and the failure is logged as the bug it is. Far above any wait the server
 * means to make (a full analysis queue on a slow PC, a sync run's 15 s), so it never cuts a
 * request that would have been answered.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

export const ANSWER_TIMEOUT_MS = 120_000;

export function registerAnswerDeadline(app: FastifyInstance, timeoutMs: number): void {
  /** Requests not yet answered, with when their body was first seen complete. */
  const open = new Map<FastifyRequest, { reply: FastifyReply; completeSince: number | null }>();
  const check = () => {
    const now = performance.now();
    for (const [request, entry] of open) {
      if (entry.reply.sent || entry.reply.raw.headersSent) {
        open.delete(request);
        continue;
      }
      if (!request.raw.complete) continue;
      entry.completeSince ??= now;
      if (now - entry.completeSince < timeoutMs) continue;
      open.delete(request);
      request.log.error({ url: request.url, timeoutMs }, 'no answer began within the bound after the request arrived: answered 503');
      void entry.reply.send(
        new AppError('SERVER_BUSY', `The server did not answer within ${timeoutMs / 1000} s; please retry`, {
          headers: { 'retry-after': '5', connection: 'close' },
        }),
      );
    }
  };
  const timer = setInterval(check, Math.max(10, Math.min(1000, Math.round(timeoutMs / 10))));
  timer.unref();
  app.addHook('onRequest', (request, reply, done) => {
    open.set(request, { reply, completeSince: null });
    reply.raw.once('close', () => open.delete(request));
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(timer);
    done();
  });
}
