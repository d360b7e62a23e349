/**
 * Photos waiting for analysis, one upload at a time so the counter sees results in the
 * order the photos were added and a burst never trips the server's busy limit.
 *
 * For a signed-in shop each upload first confirms the session: if it has ended, the photo
 * is held (not sent, so it cannot become an anonymous scan outside the history) and the
 * queue waits until the shop has signed in again.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { WirePosition, WireScan } from '../../../shared/api';
import { reportPendingWork } from '../lib/pendingWork';
import { answeredForDeletedScan } from '../lib/retry';
import { ApiError, MAX_UPLOAD_BYTES, analyze, api, rateLimitFrom, type RateLimitInfo, type ScanCorrection } from '../api/client';
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
  /** The vehicle at the counter it was taken for (the Scan page's visit number). */
  visit: number;
  /** The corner it stands for; a done scan whose server position differs is corrected (PATCH) to it. */
  position: WirePosition | '';
  idempotencyKey: string;
  status: QueueStatus;
  progress: number;
  view: ScanView | null;
  error: unknown;
  /** The upload that failed was sent signed in (false: as the demo, e.g. at the demo's daily limit). */
  failedSignedIn: boolean;
  /** A move to another corner (or a new plate) is being saved on the server. */
  moving: boolean;
  /** Why the last move or plate change could not be saved (the photo is back as the server has it). */
  moveError: unknown;
}

export interface NewPhoto {
  file: File;
  position: WirePosition | '';
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

export function canRetry(item: Pick<QueueItem, 'error'>): boolean {
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
export function refusedLocally(file: File): ApiError | null {
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

/** The newest photo of its vehicle on its corner: the one that stands for it (an older one was retaken). */
function holdsCorner(all: QueueItem[], item: QueueItem): boolean {
  return !all.some((other) => other.id > item.id && other.visit === item.visit && other.position === item.position && canRetry(other));
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
  const add = useCallback(
    (photos: NewPhoto[], vehicle: string, visit: number): number[] => {
      const added = photos.map<QueueItem>(({ file, position }) => {
        const error = refusedLocally(file);
        return {
          id: nextId.current++,
          name: file.name || 'photo',
          file,
          localUrl: notAnImage(file) ? '' : URL.createObjectURL(file),
          vehicle: vehicle.trim(),
          visit,
          position: error ? '' : position,
          idempotencyKey: randomKey(),
          status: error ? 'failed' : 'queued',
          progress: 0,
          view: null,
          error,
          failedSignedIn: signedIn,
          moving: false,
          moveError: null,
        };
      });
      setItems((all) => [...[...added].reverse(), ...all]);
      return added.map((item) => item.id);
    },
    [signedIn],
  );

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

  // A photo moved to another corner, or its vehicle's plate changed, after its upload started: the
  // scan is corrected on the server (free), one request at a time per photo; a refusal puts it back
  // as the server has it.
  useEffect(() => {
    for (const item of items) {
      if (item.status !== 'done' || !item.view || item.moving) continue;
      const { id, view } = item;
      const patch: ScanCorrection = {};
      if ((item.position || null) !== view.position) patch.position = item.position || null;
      if ((item.vehicle || null) !== view.vehicle) patch.vehicle = item.vehicle || null;
      if (Object.keys(patch).length === 0) continue;
      update(id, { moving: true, moveError: null });
      api.correctScan(view.scanId, patch).then(
        (scan) =>
          // as the server keeps them (it may trim a plate): nothing left to correct
          setItems((all) =>
            all.map((i) =>
              i.id === id && i.view
                ? {
                    ...i,
                    moving: false,
                    position: scan.position ?? '',
                    vehicle: scan.vehicle ?? '',
                    view: { ...i.view, position: scan.position, vehicle: scan.vehicle },
                  }
                : i,
            ),
          ),
        (error: unknown) =>
          setItems((all) =>
            all.map((i) =>
              i.id === id && i.view ? { ...i, moving: false, moveError: error, position: i.view.position ?? '', vehicle: i.view.vehicle ?? '' } : i,
            ),
          ),
      );
    }
  }, [items, update]);

  /** The plate of a vehicle's photos, all of them: those not sent yet go with it, analysed ones are corrected. */
  const renameVisit = useCallback((visit: number, vehicle: string) => {
    const plate = vehicle.trim();
    setItems((all) =>
      all.map((item) => (item.visit === visit && !(item.status === 'failed' && !canRetry(item)) ? { ...item, vehicle: plate, moveError: null } : item)),
    );
  }, []);

  /**
   * Puts a photo on a corner ('' for none). A photo already there, of the same vehicle, takes the
   * moved photo's old corner: the two swap, before or after analysis.
   */
  const assign = useCallback((id: number, position: WirePosition | '') => {
    setItems((all) => {
      const moved = all.find((item) => item.id === id);
      if (!moved || moved.position === position) return all;
      const holder =
        position === ''
          ? undefined
          : all.find((item) => item.id !== id && item.visit === moved.visit && item.position === position && canRetry(item) && holdsCorner(all, item));
      return all.map((item) => {
        if (item.id === id) return { ...item, position, moveError: null };
        if (holder && item.id === holder.id) return { ...item, position: moved.position, moveError: null };
        return item;
      });
    });
  }, []);

  /** A card's correction (PATCH answered): the plate and position as the server has them now. */
  const corrected = useCallback((id: number, scan: WireScan) => {
    setItems((all) => {
      const fixed = all.find((item) => item.id === id);
      if (!fixed?.view) return all;
      const position = scan.position ?? '';
      const holder =
        position === ''
          ? undefined
          : all.find((item) => item.id !== id && item.visit === fixed.visit && item.position === position && canRetry(item) && holdsCorner(all, item));
      return all.map((item) => {
        if (item.id === id && item.view) {
          return {
            ...item,
            vehicle: scan.vehicle ?? '',
            position,
            view: { ...item.view, vehicle: scan.vehicle, position: scan.position, measurementMm: scan.measurementMm },
          };
        }
        if (holder && item.id === holder.id) return { ...item, position: fixed.position };
        return item;
      });
    });
  }, []);

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

  return { items, rateLimit, add, remove, retry, setMeasurement, assign, corrected, renameVisit };
}
