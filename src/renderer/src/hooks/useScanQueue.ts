/**
 * Photos waiting for analysis, one upload at a time so the counter sees results in the
 * order the photos were added and a burst never trips the server's busy limit.
 *
 * For a signed-in shop each upload first confirms the session: if it has ended, the photo
 * is held (not sent, so it cannot become an anonymous scan outside the history) and the
 * queue waits until the shop has signed in again.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { WirePosition } from '../../../shared/api';
import { reportPendingWork } from '../lib/pendingWork';
import { answeredForDeletedScan } from '../lib/retry';
import { ApiError, MAX_UPLOAD_BYTES, analyze, rateLimitFrom, type RateLimitInfo } from '../api/client';
import { fromAnalysis, type ScanView } from '../lib/scanView';

/** `held`: waits for the shop to sign in again. */
export type QueueStatus = 'queued' | 'held' | 'uploading' | 'analyzing' | 'done' | 'failed';

/** Statuses of a photo not yet analysed: closing the window would lose it. */
const WAITING: ReadonlySet<QueueStatus> = new Set(['queued', 'held', 'uploading', 'analyzing']);

export interface QueueItem {
  id: number;
  name: string;
  file: File;
  /** Object URL of the photo; empty for a file that is not an image (nothing to show). */
  localUrl: string;
  vehicle: string;
  position: WirePosition | '';
  idempotencyKey: string;
  status: QueueStatus;
  progress: number;
  view: ScanView | null;
  error: unknown;
  /** The upload that failed was sent signed in (false: as the demo, e.g. at the demo's daily limit). */
  failedSignedIn: boolean;
}

/** Failures a second upload of the same file cannot mend: the card offers only "Remove". */
const PERMANENT = new Set([
  'FILE_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'IMAGE_UNREADABLE',
  'IMAGE_TOO_SMALL',
  'IMAGE_TOO_LARGE',
  'NO_TIRE_DETECTED',
  'TREAD_NOT_VISIBLE',
  'VALIDATION_ERROR',
  'IDEMPOTENCY_KEY_REUSED',
]);

export function canRetry(item: QueueItem): boolean {
  // a 408 (the upload stalled on the network) carries VALIDATION_ERROR but a second try can work
  return !(item.error instanceof ApiError && PERMANENT.has(item.error.code) && item.error.status !== 408);
}

function randomKey(): string {
  // getRandomValues works on plain-http LAN addresses too, where randomUUID is unavailable.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** A file that is declared as something other than an image (a PDF, a document). Undeclared types go to the server, which reads the bytes. */
function notAnImage(file: File): boolean {
  return file.type !== '' && !file.type.startsWith('image/');
}

/** What the app can tell before uploading: not a photo at all, or too big. */
function refusedLocally(file: File): ApiError | null {
  const name = file.name || 'This file';
  if (notAnImage(file)) return new ApiError('UNSUPPORTED_MEDIA_TYPE', `${name} is not a photo.`, 415);
  if (file.size <= MAX_UPLOAD_BYTES) return null;
  const mb = (file.size / 1024 / 1024).toFixed(1);
  return new ApiError('FILE_TOO_LARGE', `${file.name || 'This photo'} is ${mb} MB; photos can be at most 10 MB.`, 413);
}

export interface ScanQueueOptions {
  /** After each successful analysis (e.g. re-read the account's allowance). */
  onAnalysed: () => void;
  /** Signed in: the queue confirms the session before each upload and holds the photos while it has ended. */
  signedIn: boolean;
  /** Asks whether the session is still valid (and, if not, the window to sign in again). */
  confirmSession: () => Promise<boolean>;
  /** The server refused the session during an upload. */
  onSessionEnded: () => void;
}

export function useScanQueue({ onAnalysed, signedIn, confirmSession, onSessionEnded }: ScanQueueOptions) {
  const [items, setItems] = useState<QueueItem[]>([]);
  const [rateLimit, setRateLimit] = useState<RateLimitInfo | null>(null);
  const nextId = useRef(1);
  const running = useRef(false);
  /** The session was found ended: nothing is sent until the window is signed in again. */
  const [waitingForSignIn, setWaitingForSignIn] = useState(false);

  const update = useCallback((id: number, patch: Partial<QueueItem>) => {
    setItems((all) => all.map((item) => (item.id === id ? { ...item, ...patch } : item)));
  }, []);

  /** Adds photos (newest first, like the history) and returns their ids, oldest first. */
  const add = useCallback((files: File[], vehicle: string, position: WirePosition | ''): number[] => {
    const added = files.map<QueueItem>((file) => {
      const error = refusedLocally(file);
      return {
        id: nextId.current++,
        name: file.name || 'photo',
        file,
        localUrl: notAnImage(file) ? '' : URL.createObjectURL(file),
        vehicle: vehicle.trim(),
        position,
        idempotencyKey: randomKey(),
        status: error ? 'failed' : 'queued',
        progress: 0,
        view: null,
        error,
        failedSignedIn: signedIn,
      };
    });
    setItems((all) => [...[...added].reverse(), ...all]);
    return added.map((item) => item.id);
  }, [signedIn]);

  // Signed in (again): the held photos go first, in their order.
  const wasSignedIn = useRef(signedIn);
  useEffect(() => {
    const before = wasSignedIn.current;
    wasSignedIn.current = signedIn;
    if (!signedIn || before) return;
    setWaitingForSignIn(false);
    setItems((all) => all.map((item) => (item.status === 'held' ? { ...item, status: 'queued' } : item)));
  }, [signedIn]);

  useEffect(() => {
    if (running.current || waitingForSignIn) return;
    const next = [...items].reverse().find((item) => item.status === 'queued');
    if (!next) return;
    running.current = true;
    const hold = () => {
      setWaitingForSignIn(true);
      setItems((all) => all.map((item) => (item.status === 'queued' || item.id === next.id ? { ...item, status: 'held', progress: 0 } : item)));
    };
    const upload = async () => {
      if (signedIn && !(await confirmSession())) return hold();
      update(next.id, { status: 'uploading' });
      try {
        const { data, rateLimit: limit } = await analyze(next.file, next.name, {
          vehicle: next.vehicle,
          position: next.position,
          verbose: true,
          idempotencyKey: next.idempotencyKey,
          onProgress: (fraction) => update(next.id, fraction >= 1 ? { progress: 1, status: 'analyzing' } : { progress: fraction }),
        });
        update(next.id, { status: 'done', progress: 1, view: fromAnalysis(data, next.localUrl, next.vehicle, next.position) });
        if (limit) setRateLimit(limit);
        onAnalysed();
      } catch (error) {
        if (signedIn && error instanceof ApiError && error.code === 'INVALID_SESSION') {
          hold();
          onSessionEnded();
          return;
        }
        // A refusal at the limit carries the allowance too (the demo's count after a reload).
        const limit = error instanceof ApiError ? rateLimitFrom(error.headers) : null;
        if (limit) setRateLimit(limit);
        update(next.id, { status: 'failed', error, failedSignedIn: signedIn });
      }
    };
    void upload().finally(() => {
      running.current = false;
      // Re-render so the effect picks up the next queued photo.
      setItems((all) => [...all]);
    });
  }, [items, update, onAnalysed, signedIn, confirmSession, onSessionEnded, waitingForSignIn]);

  const remove = useCallback((id: number) => {
    setItems((all) => {
      const gone = all.find((item) => item.id === id);
      if (gone?.localUrl) URL.revokeObjectURL(gone.localUrl);
      return all.filter((item) => item.id !== id);
    });
  }, []);

  const retry = useCallback((id: number) => {
    setItems((all) =>
      all.map((item) =>
        item.id !== id
          ? item
          : {
              ...item,
              status: 'queued',
              progress: 0,
              error: null,
              // the scan the first key made was deleted since: the same key would be refused again
              ...(answeredForDeletedScan(item.error) ? { idempotencyKey: randomKey() } : {}),
            },
      ),
    );
  }, []);

  const setMeasurement = useCallback((id: number, measurementMm: number | null) => {
    setItems((all) => all.map((item) => (item.id === id && item.view ? { ...item, view: { ...item.view, measurementMm } } : item)));
  }, []);

  // photos still to send are asked about before the window or page goes (lib/pendingWork.ts)
  const waiting = items.filter((item) => WAITING.has(item.status)).length;
  useEffect(() => reportPendingWork(waiting), [waiting]);
  // the queue goes with the scan page (a sign-out): nothing waits any more
  useEffect(() => () => reportPendingWork(0), []);

  return { items, rateLimit, add, remove, retry, setMeasurement };
}
