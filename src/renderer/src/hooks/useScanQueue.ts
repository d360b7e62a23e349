/**
 * Photos waiting for analysis, one upload at a time so the counter sees results in the
 * order the photos were added and a burst never trips the server's busy limit.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { WirePosition } from '../../../shared/api';
import { ApiError, MAX_UPLOAD_BYTES, analyze, type RateLimitInfo } from '../api/client';
import { fromAnalysis, type ScanView } from '../lib/scanView';

export type QueueStatus = 'queued' | 'uploading' | 'analyzing' | 'done' | 'failed';

export interface QueueItem {
  id: number;
  name: string;
  file: File;
  localUrl: string;
  vehicle: string;
  position: WirePosition | '';
  idempotencyKey: string;
  status: QueueStatus;
  progress: number;
  view: ScanView | null;
  error: unknown;
}

function randomKey(): string {
  // getRandomValues works on plain-http LAN addresses too, where randomUUID is unavailable.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function tooLarge(file: File): ApiError | null {
  if (file.size <= MAX_UPLOAD_BYTES) return null;
  const mb = (file.size / 1024 / 1024).toFixed(1);
  return new ApiError('FILE_TOO_LARGE', `${file.name || 'This photo'} is ${mb} MB; photos can be at most 10 MB.`, 413);
}

export function useScanQueue(onAnalysed: () => void) {
  const [items, setItems] = useState<QueueItem[]>([]);
  const [rateLimit, setRateLimit] = useState<RateLimitInfo | null>(null);
  const nextId = useRef(1);
  const running = useRef(false);

  const update = useCallback((id: number, patch: Partial<QueueItem>) => {
    setItems((all) => all.map((item) => (item.id === id ? { ...item, ...patch } : item)));
  }, []);

  const add = useCallback((files: File[], vehicle: string, position: WirePosition | '') => {
    const added = files.map<QueueItem>((file) => {
      const error = tooLarge(file);
      return {
        id: nextId.current++,
        name: file.name || 'photo',
        file,
        localUrl: URL.createObjectURL(file),
        vehicle: vehicle.trim(),
        position,
        idempotencyKey: randomKey(),
        status: error ? 'failed' : 'queued',
        progress: 0,
        view: null,
        error,
      };
    });
    // Newest first, like the history.
    setItems((all) => [...added.reverse(), ...all]);
  }, []);

  useEffect(() => {
    if (running.current) return;
    const next = [...items].reverse().find((item) => item.status === 'queued');
    if (!next) return;
    running.current = true;
    update(next.id, { status: 'uploading' });
    analyze(next.file, next.name, {
      vehicle: next.vehicle,
      position: next.position,
      verbose: true,
      idempotencyKey: next.idempotencyKey,
      onProgress: (fraction) => update(next.id, fraction >= 1 ? { progress: 1, status: 'analyzing' } : { progress: fraction }),
    })
      .then(({ data, rateLimit: limit }) => {
        update(next.id, { status: 'done', progress: 1, view: fromAnalysis(data, next.localUrl, next.vehicle, next.position) });
        if (limit) setRateLimit(limit);
        onAnalysed();
      })
      .catch((error: unknown) => update(next.id, { status: 'failed', error }))
      .finally(() => {
        running.current = false;
        // Re-render so the effect picks up the next queued photo.
        setItems((all) => [...all]);
      });
  }, [items, update, onAnalysed]);

  const remove = useCallback((id: number) => {
    setItems((all) => {
      const gone = all.find((item) => item.id === id);
      if (gone) URL.revokeObjectURL(gone.localUrl);
      return all.filter((item) => item.id !== id);
    });
  }, []);

  const retry = useCallback((id: number) => update(id, { status: 'queued', progress: 0, error: null }), [update]);

  const setMeasurement = useCallback((id: number, measurementMm: number | null) => {
    setItems((all) => all.map((item) => (item.id === id && item.view ? { ...item, view: { ...item.view, measurementMm } } : item)));
  }, []);

  return { items, rateLimit, add, remove, retry, setMeasurement };
}
