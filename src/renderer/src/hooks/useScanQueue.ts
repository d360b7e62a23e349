/**
 * Photos waiting for analysis, one upload at a time so the counter sees results in the
 * order the photos were added and a burst never trips the server's busy limit.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { WirePosition } from '../../../shared/api';
import { analyze, type RateLimitInfo } from '../api/client';
import { fromAnalysis, type ScanView } from '../lib/scanView';

export type QueueStatus = 'queued' | 'uploading' | 'analyzing' | 'done' | 'failed';

export interface QueueItem {
  id: number;
  name: string;
  file: File;
  localUrl: string;
  vehicle: string;
  position: WirePosition | '';
  status: QueueStatus;
  progress: number;
  view: ScanView | null;
  error: unknown;
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
    const added = files.map<QueueItem>((file) => ({
      id: nextId.current++,
      name: file.name || 'photo',
      file,
      localUrl: URL.createObjectURL(file),
      vehicle: vehicle.trim(),
      position,
      status: 'queued',
      progress: 0,
      view: null,
      error: null,
    }));
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
