/** The changes a link skipped (refused by the hub for the scan itself), kept in store.meta so that linking again can replay them. */
import type { Store } from '../../storage/store.js';

/**
 * The changes a link skipped since it was made (or last replayed): how many, the first one's seq,
 * and the last one's (a change sent again after a hub restore and refused again is not counted twice).
 */
export interface SkippedState {
  count: number;
  fromSeq: number;
  lastSeq: number;
}

export function readSkipped(value: string | null): SkippedState {
  try {
    const parsed = JSON.parse(value ?? '') as Partial<SkippedState>;
    if (Number.isSafeInteger(parsed.count) && Number.isSafeInteger(parsed.fromSeq) && parsed.count! > 0) {
      // a state written before lastSeq was kept: its last skip is unknown, so none is taken as counted
      const lastSeq = Number.isSafeInteger(parsed.lastSeq) ? parsed.lastSeq! : 0;
      return { count: parsed.count!, fromSeq: parsed.fromSeq!, lastSeq };
    }
  } catch {
    // nothing skipped yet
  }
  return { count: 0, fromSeq: 0, lastSeq: 0 };
}

/** Before the cursor moves past it: a crash cannot lose the record of a skipped change. */
export async function recordSkip(meta: Store['meta'], skippedKey: string, seq: number): Promise<void> {
  const state = readSkipped(await meta.get(skippedKey));
  if (state.count > 0 && seq <= state.lastSeq) {
    // at or below the last skip: counted already if it was skipped before, and whether or not,
    // a replay of the skipped changes must start at it (it may be one refused only since a rewind)
    if (seq < state.fromSeq) await meta.set(skippedKey, JSON.stringify({ ...state, fromSeq: seq }));
    return;
  }
  const next: SkippedState = {
    count: state.count + 1,
    fromSeq: state.count > 0 ? Math.min(state.fromSeq, seq) : seq,
    lastSeq: Math.max(state.lastSeq, seq),
  };
  await meta.set(skippedKey, JSON.stringify(next));
}
