/**
 * Upload slots of POST /analyze and a hub's PUT /sync/scans: how many uploads are held at once, and
 * how they are shared out between callers and addresses (docs/API.md §7.4).
 */
import { AppError } from '../errors.js';
import { meteringAddress } from '../services/support/client-ip.js';
import type { Caller } from '../types.js';
import { isThisComputer, plainAddress } from './security.js';

export interface AdmissionOptions {
  concurrency: number;
  queueLimit: number;
  /** A hub: this computer's addresses are callers like any other (a proxy on it may forward everyone). */
  hub: boolean;
}

/** Who holds upload slots: an account (its keys and sessions together), else the address (as admission groups it). */
export function uploaderOf(caller: Caller): string {
  return caller.kind === 'account' ? `account ${caller.account.id}` : `anonymous ${caller.ip}`;
}

/**
 * Uploads held at once (being received, validated, queued or analysed) are bounded: twice what
 * the analysis queue runs and holds, since many uploads in a burst end in 4xx or 429 without
 * queueing. Beyond that SERVER_BUSY is answered before the body is read, so a burst of
 * full-size photos costs a bounded number of buffers, not one per request (Node drains the
 * unread body without keeping it). The queue's own SERVER_BUSY guards in-process callers.
 *
 * The slots are shared out so that idle, stalled or hung uploads from one place cannot take them
 * all (SERVER_BUSY for everyone else). A quarter of them is the share:
 * - one caller (an account, whichever key or session it uses; an anonymous caller by address, all
 *   of this computer's loopback as one) holding its share takes another slot only while more than
 *   a quarter are free, so three quarters at most, and other callers always find a quarter;
 * - a client address other than this computer's (as metered: IPv4, or the IPv6 /64 on a hub)
 *   holds at most its share, and on a desk the LAN callers together leave this computer a quarter.
 * On a hub loopback is an address like any other (a proxy on it may forward everyone).
 *
 * `admit(ip, uploader)` throws SERVER_BUSY or returns the release of the slot (call it once, when
 * the exchange ends); `uploader` is uploaderOf(caller).
 */
export function admission({ concurrency, queueLimit, hub }: AdmissionOptions): (ip: string, uploader: string) => () => void {
  const max = 2 * (concurrency + queueLimit);
  const share = Math.max(1, Math.floor(max / 4));
  const byAddress = new Map<string, number>();
  const byUploader = new Map<string, number>();
  let held = 0;
  /** Held by addresses other than this computer's (desk only). */
  let remote = 0;
  // Smoothed time an admitted upload stays (upload to answer): by then, on average, a slot is free.
  let averageMs = 1000;
  const busy = (message: string) => new AppError('SERVER_BUSY', message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(averageMs / 1000))) } });
  const count = (map: Map<string, number>, key: string, by: number) => {
    const next = (map.get(key) ?? 0) + by;
    if (next > 0) map.set(key, next);
    else map.delete(key);
  };
  return (ip, uploader) => {
    const desk = !hub && isThisComputer(ip, { databaseUrl: null });
    // a hub groups an IPv6 /64 as metering does (one client can take a whole /64); a desk's LAN
    // shares one /64, so there each shop PC counts on its own
    const address = hub ? meteringAddress(ip) : plainAddress(ip);
    // this computer's anonymous callers are one (127.0.0.2 is this computer as much as 127.0.0.1)
    const who = desk && uploader.startsWith('anonymous ') ? 'anonymous, this computer' : uploader;
    if (held >= max || (!desk && !hub && remote >= max - share)) {
      throw busy('The server is busy analysing other images; please retry shortly.');
    }
    if (!desk && (byAddress.get(address) ?? 0) >= share) {
      throw busy(`${share} uploads from your address are already in progress; retry when one has finished.`);
    }
    if ((byUploader.get(who) ?? 0) >= share && held >= max - share) {
      throw busy(`${byUploader.get(who)} of your uploads are already in progress and the rest are kept for others; retry when one has finished.`);
    }
    held++;
    count(byUploader, who, 1);
    if (!desk) {
      count(byAddress, address, 1);
      if (!hub) remote++;
    }
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held--;
      count(byUploader, who, -1);
      if (!desk) {
        count(byAddress, address, -1);
        if (!hub) remote--;
      }
      averageMs = averageMs * 0.8 + (performance.now() - started) * 0.2;
    };
  };
}
