/**
 * How a desk finds out that its hub lost scans it had acknowledged (a hub restored from a backup
 * older than the desk's last push, a hub database replaced): with each upload the desk names
 * itself and the change it sends (X-Desk-Id, X-Desk-Seq); the hub keeps, per shop key and desk,
 * the highest change it handled (stored, or refused for good) in its own database, and answers
 * every upload with that mark as it was before this one (X-Hub-Desk-Seq). A restore takes the
 * mark back with the scans it lost, so a mark below what the hub had already answered for tells
 * the desk to send everything after it again (pusher.ts). The mark is written after the scan is
 * stored: a crash between leaves it behind, which costs a few changes sent again, never one lost.
 */
import { AppError } from '../errors.js';
import type { MetaStore } from '../storage/store.js';
import { isScanRefusal } from './wire.js';

export const DESK_ID_HEADER = 'X-Desk-Id';
export const DESK_SEQ_HEADER = 'X-Desk-Seq';
/** The hub's mark for this shop key and desk before the upload it answers; 0 when it has none. */
export const HUB_DESK_SEQ_HEADER = 'X-Hub-Desk-Seq';

const DESK_ID = /^[A-Za-z0-9_-]{8,64}$/;

export interface DeskPosition {
  deskId: string;
  seq: number;
}

function single(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw new AppError('VALIDATION_ERROR', `Send ${name} once`);
  return value;
}

/**
 * The desk and change an upload names, or null for a desk that names none (older versions).
 * Both headers or neither; a malformed one is refused (400, not a refusal about the scan).
 */
export function readDeskPosition(headers: Record<string, string | string[] | undefined>): DeskPosition | null {
  const id = single(headers[DESK_ID_HEADER.toLowerCase()], DESK_ID_HEADER);
  const seq = single(headers[DESK_SEQ_HEADER.toLowerCase()], DESK_SEQ_HEADER);
  if (id === undefined && seq === undefined) return null;
  if (id === undefined || seq === undefined) {
    throw new AppError('VALIDATION_ERROR', `${DESK_ID_HEADER} and ${DESK_SEQ_HEADER} go together: send both or neither`);
  }
  if (!DESK_ID.test(id)) throw new AppError('VALIDATION_ERROR', `${DESK_ID_HEADER} must be 8–64 letters, digits, "-" or "_"`);
  const parsed = /^[1-9]\d{0,15}$/.test(seq) ? Number(seq) : Number.NaN;
  if (!Number.isSafeInteger(parsed)) throw new AppError('VALIDATION_ERROR', `${DESK_SEQ_HEADER} must be a whole number from 1`);
  return { deskId: id, seq: parsed };
}

/** The parsed X-Hub-Desk-Seq of a hub's answer, or null when the hub keeps no marks (an older hub) or sent no number. */
export function readHubDeskSeq(value: string | null): number | null {
  if (value === null || !/^(0|[1-9]\d{0,15})$/.test(value.trim())) return null;
  const parsed = Number(value.trim());
  return Number.isSafeInteger(parsed) ? parsed : null;
}

function markKey(apiKeyId: string, deskId: string): string {
  return `sync.desk.${apiKeyId}.${deskId}`;
}

/** The hub's mark for one shop key and desk: the highest change handled, 0 when none is recorded. */
export async function deskMark(meta: MetaStore, apiKeyId: string, deskId: string): Promise<number> {
  const value = Number(await meta.get(markKey(apiKeyId, deskId)));
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * Raise the mark to `seq` when above it (a re-sent older change leaves it). Read again here, not
 * taken from before the upload: a re-sent change answered late must not lower what a later one
 * wrote meanwhile (the window left only makes the desk send one change again).
 */
export async function raiseDeskMark(meta: MetaStore, apiKeyId: string, position: DeskPosition): Promise<void> {
  if (position.seq > (await deskMark(meta, apiKeyId, position.deskId))) {
    await meta.set(markKey(apiKeyId, position.deskId), String(position.seq));
  }
}

/**
 * Runs the handling of one upload and then raises the desk's mark: after the scan is stored, and
 * after a refusal about the scan itself too (the desk moves past it); any other failure leaves the
 * mark where it was (the desk sends the change again). Without a position: just `work`.
 */
export async function markingHandled<T>(meta: MetaStore, apiKeyId: string, position: DeskPosition | null, work: () => Promise<T>): Promise<T> {
  if (!position) return work();
  try {
    const result = await work();
    await raiseDeskMark(meta, apiKeyId, position);
    return result;
  } catch (error) {
    if (isScanRefusal(error)) await raiseDeskMark(meta, apiKeyId, position);
    throw error;
  }
}
