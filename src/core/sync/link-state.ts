/**
 * What store.meta keeps per hub link: its cursor, skipped changes, replay bound and marks, under
 * keys named by the hub and key (linking elsewhere pushes everything again; re-linking the same
 * resumes), and the replay of the skipped changes when a link is made again.
 */
import type { Logger } from '../logger.js';
import { sha256Hex } from '../services/support/ids.js';
import type { Store } from '../storage/store.js';
import type { HubLink } from './hub-client.js';
import { readSkipped } from './push/skipped.js';

function linkId(link: HubLink): string {
  return sha256Hex(`${link.hubUrl}\n${link.hubApiKey}`).slice(0, 16);
}

/** Per hub and key: linking elsewhere pushes everything again; re-linking the same resumes. */
export function cursorKeyOf(link: HubLink): string {
  return `sync.cursor.${linkId(link)}`;
}

/** The link's skipped changes (push/skipped.ts SkippedState). */
export function skippedKeyOf(link: HubLink): string {
  return `sync.skipped.${linkId(link)}`;
}

/** Up to which seq a replay of skipped changes goes over changes already handled once. */
export function replayKeyOf(link: HubLink): string {
  return `sync.replay.${linkId(link)}`;
}

/** The highest change of this link the hub answered for with its mark (PusherDeps.ackedKey). */
export function ackedKeyOf(link: HubLink): string {
  return `sync.acked.${linkId(link)}`;
}

/** Per hub address, whatever the key: the highest seq that hub acknowledged (PusherDeps.reachedKey). */
export function reachedKeyOf(link: HubLink): string {
  return `sync.reached.${sha256Hex(link.hubUrl).slice(0, 16)}`;
}

/**
 * Linking again with the same hub and key: send the changes that link skipped again, by
 * going back to the first of them. The changes after it that the hub already acknowledged
 * go again too, without their photo (the hub absorbs them; replayKeyOf).
 */
export async function replaySkipped(meta: Store['meta'], logger: Logger, link: HubLink): Promise<void> {
  const skipped = readSkipped(await meta.get(skippedKeyOf(link)));
  if (skipped.count === 0) return;
  const cursor = Number((await meta.get(cursorKeyOf(link))) ?? 0);
  const replayUntil = Number((await meta.get(replayKeyOf(link))) || 0);
  await meta.set(replayKeyOf(link), String(Math.max(replayUntil, cursor)));
  await meta.set(cursorKeyOf(link), String(Math.max(0, Math.min(cursor, skipped.fromSeq - 1))));
  await meta.set(skippedKeyOf(link), '');
  logger.info({ skipped: skipped.count }, 'sending the changes skipped by sync again');
}
