/**
 * The four corners (and the spare) of the vehicle at the counter: which photo stands for each, and
 * where the next photos go. Pure functions over the scan queue, so the layout, the batch filling
 * and the report agree.
 */
import type { WirePosition } from '../../../shared/api';
import { POSITIONS } from './format';

/** What the corners need to know of a queued photo. */
export interface CornerPhoto {
  id: number;
  visit: number;
  position: WirePosition | '';
  /** Refused for good (not a tire, unreadable…): it no longer holds its corner, another photo is wanted. */
  refused: boolean;
}

/**
 * The photo standing for each corner of a visit: the newest one put there that was not refused
 * (a retake replaces the earlier photo). Ids grow with time, so the highest id is the newest.
 */
export function cornerPhotos<T extends CornerPhoto>(items: readonly T[], visit: number): Partial<Record<WirePosition, T>> {
  const corners: Partial<Record<WirePosition, T>> = {};
  for (const item of items) {
    if (item.visit !== visit || item.refused || item.position === '') continue;
    const held = corners[item.position];
    if (!held || held.id < item.id) corners[item.position] = item;
  }
  return corners;
}

/** The newest photo of a corner refused since its last good one: the corner asks for another. */
export function refusedAt<T extends CornerPhoto>(items: readonly T[], visit: number, position: WirePosition): T | undefined {
  const standing = cornerPhotos(items, visit)[position];
  return items
    .filter((item) => item.visit === visit && item.refused && item.position === position && (!standing || item.id > standing.id))
    .sort((a, b) => b.id - a.id)[0];
}

/** Empty corners in the layout's order, starting at `from` and wrapping round. */
function emptyFrom(occupied: ReadonlySet<WirePosition>, from: WirePosition | null): WirePosition[] {
  const start = from ? POSITIONS.indexOf(from) : 0;
  const order = [...POSITIONS.slice(start), ...POSITIONS.slice(0, start)];
  return order.filter((p) => !occupied.has(p));
}

/**
 * Corners for `count` new photos: the first goes to the chosen corner (even a full one: a retake),
 * the rest fill the empty corners after it in order; photos beyond the last empty corner get none.
 * `next` is where the photo after them would go: the next empty corner, or null when all are full.
 */
export function placePhotos(
  count: number,
  target: WirePosition | null,
  occupied: ReadonlySet<WirePosition>,
): { positions: Array<WirePosition | ''>; next: WirePosition | null } {
  const taken = new Set(occupied);
  const positions: Array<WirePosition | ''> = [];
  let from = target;
  for (let i = 0; i < count; i++) {
    const corner = i === 0 && target ? target : (emptyFrom(taken, from)[0] ?? null);
    positions.push(corner ?? '');
    if (corner) {
      taken.add(corner);
      from = corner;
    }
  }
  return { positions, next: emptyFrom(taken, from)[0] ?? null };
}
