/**
 * Listening TireWear servers for sync tests: a hub and shop desktops, each with its own
 * data dir (SQLite unless a database URL is given), the FakeAnalyzer and a ManualClock.
 * A node can be stopped and started again on the same data dir and port, as a restart.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { readSettingsFile, type Config } from '../../src/core/config.js';
import { testConfig } from '../support/config.js';
import { createLogger } from '../../src/core/logger.js';
import { startServer, type RunningServer } from '../../src/core/server.js';
import { createSyncService, type SyncService, type SyncServiceDeps } from '../../src/core/sync/service.js';
import { makeJpeg } from '../fixtures/images/make.js';
import { createKey, imageForm, signIn } from '../http/helpers.js';
import { FakeAnalyzer } from '../support/fake-analyzer.js';
import { makeTestLicenseKeys } from '../support/licenses.js';

const keys = makeTestLicenseKeys();

export interface Node {
  server: RunningServer;
  app: FastifyInstance;
  url: string;
  port: number;
  dataDir: string;
  clock: ManualClock;
}

export interface NodeOptions {
  dataDir?: string;
  port?: number;
  clock?: ManualClock;
  config?: Partial<Config>;
}

export async function startNode(options: NodeOptions = {}): Promise<Node> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'tirewear-sync-')));
  const clock = options.clock ?? new ManualClock();
  const config = testConfig(dataDir, keys.publicKeyPem, {
    port: options.port ?? 0,
    // Hubs in these suites register many accounts from 127.0.0.1.
    registrationsPerHour: 1000,
    // As loadConfig would: a link saved in settings.json survives a restart.
    sync: readSettingsFile(dataDir).sync ?? null,
    ...options.config,
  });
  const server = await startServer(config, { clock, analyzer: new FakeAnalyzer(), logger: createLogger({ level: 'silent' }) }, { logger: false });
  return { server, app: server.app, url: server.url, port: Number(new URL(server.url).port), dataDir, clock };
}

export async function removeNode(node: Node | null | undefined): Promise<void> {
  if (!node) return;
  await node.server.close();
  await rm(node.dataDir, { recursive: true, force: true });
}

/** A hub account and one of its API keys (what a shop pastes into its desktop). */
export async function hubAccount(hub: Node): Promise<{ cookie: string; key: string }> {
  const { cookie } = await signIn(hub.app);
  return { cookie, key: await createKey(hub.app, cookie, 'Shop desktop') };
}

let shade = 40;
export async function analyze(node: Node, cookie: string): Promise<{ scanId: string; image: Buffer }> {
  shade = shade >= 230 ? 40 : shade + 9;
  const image = await makeJpeg({ width: 320, height: 256, shade });
  const upload = imageForm(image);
  const res = await node.app.inject({
    method: 'POST',
    url: '/api/v1/analyze',
    payload: upload.payload,
    headers: { ...upload.headers, cookie },
  });
  expect(res.statusCode).toBe(200);
  return { scanId: res.json().data.scanId as string, image };
}

export function call(
  node: Node,
  cookie: string,
  method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE',
  url: string,
  payload?: object,
): Promise<LightMyRequestResponse> {
  return node.app.inject({ method, url, headers: { cookie }, ...(payload ? { payload } : {}) });
}

/** The hub account's scans as the hub lists them. */
export async function hubScans(hub: Node, key: string): Promise<Array<{ scanId: string; measurementMm: number | null }>> {
  const res = await hub.app.inject({ method: 'GET', url: '/api/v1/sync/scans?limit=100', headers: { 'x-api-key': key } });
  expect(res.statusCode).toBe(200);
  return res.json().data.items;
}

/**
 * A desktop's sync linked to `link`, each pass driven by the test (the background loop never
 * fires; the link is not saved). `extra` sets a fetch of the test's own, a wait, and so on.
 * The caller closes it.
 */
export function deskSync(desk: Node, link: { hubUrl: string; hubApiKey: string }, extra: Partial<SyncServiceDeps> = {}): SyncService {
  return createSyncService({
    link,
    store: desk.server.core.store,
    images: desk.server.core.images,
    clock: desk.clock,
    logger: createLogger({ level: 'silent' }),
    saveLink: async () => undefined,
    timers: { set: () => null, clear: () => undefined },
    ...extra,
  });
}
