/**
 * A photo in the scan queue (useScanQueue.ts): its states, which failures a second try cannot
 * mend, what the app refuses before uploading, and which photo stands for a vehicle's corner.
 */
import type { WirePosition } from '../../../shared/api';
import { MAX_IMAGE_BYTES } from '../../../shared/contract/limits';
import { ApiError } from '../api/client';
import type { ScanView } from './scanView';

/** `held`: waits for the shop to sign in again. */
export type QueueStatus = 'queued' | 'held' | 'uploading' | 'analyzing' | 'done' | 'failed';

/** Statuses of a photo not yet analysed: closing the window would lose it. */
export const WAITING: ReadonlySet<QueueStatus> = new Set(['queued', 'held', 'uploading', 'analyzing']);

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

export function randomKey(): string {
  // getRandomValues works on plain-http LAN addresses too, where randomUUID is unavailable.
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** A file that is declared as something other than an image (a PDF, a document). Undeclared types go to the server, which reads the bytes. */
export function notAnImage(file: File): boolean {
  return file.type !== '' && !file.type.startsWith('image/');
}

/** What the app can tell before uploading: not a photo at all, or too big. */
export function refusedLocally(file: File): ApiError | null {
  const name = file.name || 'This file';
  if (notAnImage(file)) return new ApiError('UNSUPPORTED_MEDIA_TYPE', `${name} is not a photo.`, 415);
  if (file.size <= MAX_IMAGE_BYTES) return null;
  const mb = (file.size / 1024 / 1024).toFixed(1);
  return new ApiError('FILE_TOO_LARGE', `${file.name || 'This photo'} is ${mb} MB; photos can be at most 10 MB.`, 413);
}

/** The newest photo of its vehicle on its corner: the one that stands for it (an older one was retaken). */
export function holdsCorner(all: QueueItem[], item: QueueItem): boolean {
  return !all.some((other) => other.id > item.id && other.visit === item.visit && other.position === item.position && canRetry(other));
}

/**
 * The photo that stands for `position` of `moved`'s vehicle, other than `moved` itself: the one that
 * takes `moved`'s old corner when `moved` is put there. None for no corner ('').
 */
export function cornerHolder(all: QueueItem[], moved: QueueItem, position: WirePosition | ''): QueueItem | undefined {
  if (position === '') return undefined;
  return all.find((item) => item.id !== moved.id && item.visit === moved.visit && item.position === position && canRetry(item) && holdsCorner(all, item));
}
