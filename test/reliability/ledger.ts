/**
 * Reads a data dir the way an auditor would, behind the server's back: is the SQLite file
 * sound, does every stored scan have its charge and its files, and is anything left over.
 */
import { readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export interface Ledger {
  integrity: string;
  scans: number;
  /** Units charged: usage counters plus pack credit spent. */
  charged: number;
  /** Holds not yet committed or released (a crash leaves some; housekeeping expires them). */
  reservations: number;
  /** Scans whose original or thumbnail file is missing. */
  scansMissingFiles: string[];
  /** Image files no scan refers to, and temp files of unfinished writes. */
  orphanFiles: string[];
  tempFiles: string[];
}

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
}

export async function readLedger(dbFile: string, imagesDir: string): Promise<Ledger> {
  const db = new Database(dbFile, { readonly: true });
  try {
    const integrity = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ');
    const rows = db.prepare('SELECT id, image FROM scans').all() as Array<{ id: string; image: string }>;
    const used = (db.prepare('SELECT COALESCE(SUM(used), 0) AS n FROM usage_counters').get() as { n: number }).n;
    const packBought = (db.prepare("SELECT COALESCE(SUM(scans), 0) AS n FROM licenses WHERE kind = 'pack'").get() as { n: number }).n;
    const packLeft = (db.prepare('SELECT COALESCE(SUM(pack_credit), 0) AS n FROM accounts').get() as { n: number }).n;
    const reservations = (db.prepare('SELECT COUNT(*) AS n FROM reservations').get() as { n: number }).n;

    const files = new Set(await filesUnder(imagesDir));
    const referenced = new Set<string>();
    const scansMissingFiles: string[] = [];
    for (const row of rows) {
      const image = JSON.parse(row.image) as { originalKey: string; thumbnailKey: string };
      referenced.add(image.originalKey).add(image.thumbnailKey);
      if (!files.has(image.originalKey) || !files.has(image.thumbnailKey)) scansMissingFiles.push(row.id);
    }
    const isTemp = (f: string) => path.posix.basename(f).startsWith('.') && f.endsWith('.tmp');
    return {
      integrity,
      scans: rows.length,
      charged: used + packBought - packLeft,
      reservations,
      scansMissingFiles,
      orphanFiles: [...files].filter((f) => !referenced.has(f) && !isTemp(f)),
      tempFiles: [...files].filter(isTemp),
    };
  } finally {
    db.close();
  }
}
