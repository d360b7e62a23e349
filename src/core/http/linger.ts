/**
 * An answer sent before the request's body has arrived (413 on its Content-Length, 401, 403,
 * 429 or 503 on its headers, 400 or 413 half-way through a form) must close the connection: the
 * rest of the body would be taken for the next request. Closed at once, though, a client still
 * sending gets a reset, and most clients then report a broken pipe instead of the answer already
 * waiting for them (undici's fetch, Python's urllib, node:http). So the connection lingers, like a
 * web server's lingering close: the rest of the body is read and thrown away, within LINGER's
 * bounds, and only then is the connection closed.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerLimits {
  /** Bytes read after the answer before the connection is cut. */
  maxBytes: number;
  /** How long the rest of the body may take in all. */
  maxMs: number;
  /** How long it may send nothing. */
  idleMs: number;
}

/** Enough for the 10 MiB photo, its form, and then some (a 30 MB photo still reads its 413). */
export const LINGER: LingerLimits = { maxBytes: 32 * 1024 * 1024, maxMs: 30_000, idleMs: 5_000 };

/** Whether the request announced a body that has not all arrived. */
export function bodyStillArriving(raw: IncomingMessage): boolean {
  if (raw.complete) return false;
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

type ClosingSocket = Socket & { destroySoon?: () => void };
/** Node's own marks: `_consuming` tells its server the body is being read, so it is not dropped unread. */
type ReadBody = IncomingMessage & { _consuming?: boolean };

/**
 * Call before an answer with `Connection: close` is sent while the body is still arriving. Node
 * closes such a connection with socket.destroySoon() once the answer is written: on this socket
 * only the sending half is closed then, and the connection is closed once the body has been
 * read to its end, or cut when a bound is reached.
 */
export function lingerBeforeClose(raw: IncomingMessage, limits: LingerLimits = LINGER): void {
  const socket = raw.socket as ClosingSocket | null;
  // light-my-request (app.inject) has no real socket, and nothing to linger on
  if (!socket || typeof socket.destroySoon !== 'function' || Object.hasOwn(socket, 'destroySoon')) return;
  // Unread, Node would "dump" the body after the answer: its bytes dropped inside the HTTP parser,
  // never seen here, so neither counted nor timed. Marked as read, it is handed over and thrown away below.
  (raw as ReadBody)._consuming = true;
  const closeSoon = socket.destroySoon;
  socket.destroySoon = () => {
    Reflect.deleteProperty(socket, 'destroySoon');
    if (raw.complete || socket.destroyed) return closeSoon.call(socket);
    // the answer, then our half of the connection closed (RFC 9112 §9.6); reading goes on
    socket.end();
    let bytes = 0;
    const end = (drained: boolean) => {
      clearTimeout(overall);
      clearTimeout(idle);
      raw.off('data', discard);
      raw.off('end', drainedAll);
      socket.off('close', gone);
      if (drained) closeSoon.call(socket);
      else socket.destroy();
    };
    const discard = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) end(false);
      else idle.refresh();
    };
    const drainedAll = () => end(true);
    const gone = () => end(false);
    const overall = setTimeout(() => end(false), limits.maxMs).unref();
    const idle = setTimeout(() => end(false), limits.idleMs).unref();
    // a form parser may still be piped from the body: it has been answered for
    raw.unpipe();
    raw.on('data', discard);
    raw.once('end', drainedAll);
    socket.once('close', gone);
    raw.resume();
  };
}
