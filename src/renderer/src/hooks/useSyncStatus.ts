/**
 * GET /sync/status, read again every few seconds while `poll` is on and the window is
 * visible (a hidden window, or another page, costs the server nothing).
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { SyncStatus } from '../../../shared/api';
import { ApiError, api } from '../api/client';

export const SYNC_POLL_MS = 3000;

export interface SyncStatusState {
  status: SyncStatus | null;
  /** The server has no sync routes (404): the sync UI stays out of the way. */
  unavailable: boolean;
  /** Why the last read failed; null again after the next good one. */
  error: unknown;
  /** Runs a sync action and shows the status it answers; a read started earlier cannot overwrite it. */
  apply(action: () => Promise<SyncStatus>): Promise<SyncStatus>;
}

export function useSyncStatus(poll: boolean): SyncStatusState {
  const [status, setStatus] = useState<SyncStatus | null>(null);
  const [unavailable, setUnavailable] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const started = useRef(0);
  const shown = useRef(0);

  const apply = useCallback(async (action: () => Promise<SyncStatus>) => {
    const ticket = ++started.current;
    const next = await action();
    if (ticket > shown.current) {
      shown.current = ticket;
      setStatus(next);
      setError(null);
    }
    return next;
  }, []);

  useEffect(() => {
    let stopped = false;
    let reading = false;
    let timer: number | undefined;
    const read = async () => {
      reading = true;
      try {
        await apply(api.syncStatus);
      } catch (err) {
        if (stopped) return;
        if (err instanceof ApiError && err.status === 404) {
          setUnavailable(true);
          return;
        }
        setError(err);
      } finally {
        reading = false;
      }
      if (!stopped && poll && !document.hidden) timer = window.setTimeout(() => void read(), SYNC_POLL_MS);
    };
    const onVisibility = () => {
      window.clearTimeout(timer);
      if (!document.hidden && !reading) void read();
    };
    void read();
    if (poll) document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [poll, apply]);

  return { status, unavailable, error, apply };
}
