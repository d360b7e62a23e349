/**
 * The last time a request failed on storage (disk full, read-only, damaged database): GET
 * /health reports it for a minute, so a POS, the desktop shell or a load balancer sees
 * "degraded" and why, not "ok" from a database that answers a ping but takes no scan.
 * A busy database is not trouble: it passes within seconds.
 */
export const STORAGE_TROUBLE_SHOWN_MS = 60_000;

export class StorageTrouble {
  private last: { at: number; message: string } | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  record(message: string): void {
    if (/busy/i.test(message)) return;
    this.last = { at: this.now(), message };
  }

  /** The failure of the last minute, or null. */
  recent(): string | null {
    if (this.last === null || this.now() - this.last.at > STORAGE_TROUBLE_SHOWN_MS) return null;
    return this.last.message;
  }
}
