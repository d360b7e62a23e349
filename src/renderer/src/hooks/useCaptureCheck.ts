/**
 * The webcam's live check: about once a second a frame of the preview goes to POST /analyze/check
 * (free, nothing stored), which says whether a tread is in view, sharp and lit. Capture is offered
 * once it is; where the check cannot be had (an older server, no models) Capture is offered without
 * it, and the analysis itself still refuses a photo it cannot read.
 */
import { useEffect, useState, type RefObject } from 'react';
import type { CaptureCheck } from '../../../shared/api';
import { ApiError, api } from '../api/client';

export type CheckState =
  | { kind: 'waiting' }
  | { kind: 'checked'; check: CaptureCheck }
  /** No check to be had: Capture is offered without it. */
  | { kind: 'unavailable' };

/** The frame sent: at most 640 px on the long side, as the check reads it (and ≥ 256 on the short one from a webcam). */
const LONG_SIDE = 640;
const EVERY_MS = 1000;

function grab(video: HTMLVideoElement): Promise<Blob | null> {
  const scale = Math.min(1, LONG_SIDE / Math.max(video.videoWidth, video.videoHeight));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(video.videoWidth * scale);
  canvas.height = Math.round(video.videoHeight * scale);
  canvas.getContext('2d')?.drawImage(video, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.85));
}

/** Seconds to wait after a refusal, or null when the check cannot be had at all. */
function backOff(error: unknown): number | null {
  if (!(error instanceof ApiError)) return 3;
  if (error.code === 'TOO_MANY_ATTEMPTS' || error.code === 'SERVER_BUSY') return Number(error.headers?.get('retry-after')) || 3;
  if (error.code === 'NETWORK_ERROR') return 3;
  return null;
}

/** `active`: a live preview with frames (not while a shot is shown). */
export function useCaptureCheck(video: RefObject<HTMLVideoElement | null>, active: boolean): CheckState {
  const [state, setState] = useState<CheckState>({ kind: 'waiting' });
  useEffect(() => {
    if (!active) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const later = (ms: number) => {
      if (!stopped) timer = setTimeout(() => void round(), ms);
    };
    const round = async () => {
      const v = video.current;
      if (!v || !v.videoWidth) return later(300);
      const frame = await grab(v);
      if (stopped) return;
      if (!frame) return later(EVERY_MS);
      try {
        const check = await api.checkFrame(frame);
        if (stopped) return;
        setState({ kind: 'checked', check });
        later(EVERY_MS);
      } catch (error) {
        if (stopped) return;
        const wait = backOff(error);
        if (wait === null) return setState({ kind: 'unavailable' });
        later(wait * 1000);
      }
    };
    void round();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active, video]);
  return state;
}
