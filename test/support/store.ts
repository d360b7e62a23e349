/**
 * Throwaway stores for tests: a fresh SQLite file and image directory under the OS temp dir,
 * removed by cleanup(). Also a factory for valid ScanRecords.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DISCLAIMER } from '../../src/core/analysis/disclaimer.js';
import type { Clock } from '../../src/core/clock.js';
import { createFileImageStore } from '../../src/core/storage/files.js';
import type { ImageStore } from '../../src/core/storage/images.js';
import { openSqliteStore } from '../../src/core/storage/sqlite/index.js';
import type { Store } from '../../src/core/storage/store.js';
import type { ScanRecord } from '../../src/core/types.js';

export async function tempDir(prefix = 'tirewear-test-'): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function tempSqliteStore(clock?: Clock): Promise<{ store: Store; dir: string; file: string; cleanup(): Promise<void> }> {
  const temp = await tempDir('tirewear-db-');
  const file = path.join(temp.dir, 'tirewear.db');
  const store = openSqliteStore(clock ? { file, clock } : { file });
  return {
    store,
    dir: temp.dir,
    file,
    async cleanup() {
      await store.close();
      await temp.cleanup();
    },
  };
}

export async function tempImageStore(): Promise<{ images: ImageStore; dir: string; cleanup(): Promise<void> }> {
  const temp = await tempDir('tirewear-images-');
  return { images: createFileImageStore(temp.dir), dir: temp.dir, cleanup: temp.cleanup };
}

export function randomId(): string {
  return randomBytes(16).toString('base64url');
}

/** A complete, valid ScanRecord; override what the test is about. */
export function makeScan(overrides: Partial<ScanRecord> = {}): ScanRecord {
  const id = overrides.id ?? randomId();
  return {
    id,
    accountId: null,
    apiKeyId: null,
    source: 'anonymous',
    createdAt: new Date('2026-11-21T12:00:00.000Z'),
    vehicle: null,
    position: null,
    result: {
      wear: 'good',
      confidence: 0.82,
      estimatedDepthMm: 5.6,
      depthRangeMm: { min: 4.9, max: 6.3 },
      treadHealthIndex: 63,
      isPreliminary: false,
      modelAlignment: 88,
      twiConsensusCount: 2,
      modelVersion: 'tread-2026.11.0',
      depth32nds: 7,
      processingTimeMs: 412,
      disclaimer: DISCLAIMER,
    },
    image: {
      originalKey: `scans/${id.slice(0, 2)}/${id}.jpg`,
      thumbnailKey: `scans/${id.slice(0, 2)}/${id}.thumb.webp`,
      mime: 'image/jpeg',
      width: 1024,
      height: 768,
      bytes: 123456,
      sha256: 'a'.repeat(64),
    },
    measurementMm: null,
    measuredAt: null,
    deletedAt: null,
    editedAt: null,
    changes: [],
    ...overrides,
  };
}
