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
import { ApiError, analyze, api, rateLimitFrom, type RateLimitInfo, type ScanCorrection } from '../api/client';
import { canRetry, cornerHolder, notAnImage, randomKey, refusedLocally, WAITING, type NewPhoto, type QueueItem } from '../lib/queueItems';
import { fromAnalysis } from '../lib/scanView';

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
      const holder = cornerHolder(all, moved, position);
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
      const holder = cornerHolder(all, fixed, position);
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
