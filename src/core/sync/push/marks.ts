/**
 * Where one pass stands, read from store.meta when it starts and written back as it goes: the
 * cursor, the replay bound, the highest change this hub acknowledged (`reached`, per hub address)
 * and the highest the hub answered for with its mark (`acked`, desk-marks.ts).
 */
import type { Logger } from '../../logger.js';
import type { Store } from '../../storage/store.js';

/** The meta keys of one link (PusherDeps). */
export interface MarkKeys {
  cursorKey: string;
  replayKey: string;
  reachedKey?: string;
  ackedKey?: string;
}

const numberAt = async (meta: Store['meta'], key: string | undefined) => (key ? Number((await meta.get(key)) || 0) : 0);

export class PassMarks {
  /** Once a pass: a hub whose marks keep falling behind (it cannot write them) is not chased round. */
  rewound = false;
  private reachedSaved: number;
  private ackedSaved: number;

  private constructor(
    private readonly meta: Store['meta'],
    private readonly keys: MarkKeys,
    public cursor: number,
    public replayUntil: number,
    public reached: number,
    public acked: number,
  ) {
    this.reachedSaved = reached;
    this.ackedSaved = acked;
  }

  static async load(meta: Store['meta'], keys: MarkKeys): Promise<PassMarks> {
    const cursor = Number((await meta.get(keys.cursorKey)) ?? 0);
    let replayUntil = await numberAt(meta, keys.replayKey);
    const reached = await numberAt(meta, keys.reachedKey);
    if (cursor === 0 && reached > replayUntil) {
      // a link that has pushed nothing yet, to a hub this computer pushed to before: kept, so a
      // pass cut short resumes as a replay too
      replayUntil = reached;
      await meta.set(keys.replayKey, String(replayUntil));
    }
    return new PassMarks(meta, keys, cursor, replayUntil, reached, await numberAt(meta, keys.ackedKey));
  }

  /** A change handled (pushed or skipped): the cursor moves past it. */
  async moveTo(seq: number): Promise<void> {
    this.cursor = seq;
    await this.meta.set(this.keys.cursorKey, String(seq));
  }

  /**
   * Kept in memory and saved once a batch (and when the pass ends), not on every change: it only
   * spares a rotated key's photos, so one lost to a crash costs a few photos sent again.
   */
  async saveReached(): Promise<void> {
    if (!this.keys.reachedKey || this.reached <= this.reachedSaved) return;
    await this.meta.set(this.keys.reachedKey, String(this.reached));
    this.reachedSaved = this.reached;
  }

  /** Saved like reached: one lost to a crash only makes a later check less strict. */
  async saveAcked(): Promise<void> {
    if (!this.keys.ackedKey || this.acked <= this.ackedSaved) return;
    await this.meta.set(this.keys.ackedKey, String(this.acked));
    this.ackedSaved = this.acked;
  }

  /**
   * After the hub answered a push of change `seq` with its mark: true when the mark is below what
   * it had answered for before (`acked`), so it lost the changes between (a restore) and the
   * cursor now stands at its mark, everything after going again without photos first (it may
   * still have some), this change included. Only with an ackedKey.
   */
  async rewindIfLost(seq: number, hubSeq: number | null, logger: Logger): Promise<boolean> {
    if (!this.keys.ackedKey || hubSeq === null) return false;
    if (hubSeq >= this.acked || this.rewound) {
      this.acked = Math.max(this.acked, seq);
      return false;
    }
    logger.warn({ hubSeq, acked: this.acked }, 'the hub no longer has changes it had acknowledged (restored from a backup?); sending them again');
    this.rewound = true;
    this.replayUntil = Math.max(this.replayUntil, seq);
    await this.meta.set(this.keys.replayKey, String(this.replayUntil));
    this.acked = Math.max(hubSeq, seq); // the hub's mark now that it stored this one
    await this.meta.set(this.keys.ackedKey, String(this.acked));
    this.ackedSaved = this.acked;
    // back to the hub's mark, never forward: a replay of skipped changes may stand below it
    this.cursor = Math.min(this.cursor, hubSeq);
    await this.meta.set(this.keys.cursorKey, String(this.cursor));
    return true;
  }
}
